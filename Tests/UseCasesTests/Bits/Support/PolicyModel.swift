/// A reference model of the bit policy, written from docs/policy.md alone and kept obviously correct:
/// months are plain integers (virtual months, 0 = the start of a run), bits are two booleans, nothing is
/// shared with `Sources/Policy`. `PolicyModelTests` runs random operations against it and the real policy.
struct PolicyModel {
    enum Layout: Equatable, CustomStringConvertible {
        /// Roles per bit: "promotion", "ban" or "unused".
        case roles(bit0: String, bit1: String)
        case counter(banAt: Int)

        var description: String {
            switch self {
            case .roles(let b0, let b1): return "roles(bit0: \(b0), bit1: \(b1))"
            case .counter(let banAt): return "counter(ban_at: \(banAt))"
            }
        }
    }

    struct Campaign: Equatable, CustomStringConvertible {
        let id: String
        let starts: Int
        let ends: Int?
        let bit: Int
        func active(at month: Int) -> Bool { starts <= month && (ends.map { month <= $0 } ?? true) }
        var description: String { "\(id)@bit\(bit) v\(starts)...\(ends.map { "v\($0)" } ?? "open")" }
    }

    struct Device: Equatable, CustomStringConvertible {
        var bits: [Bool] = [false, false]
        /// The virtual month of the last write; nil: never set.
        var stamp: Int?
        var description: String { stamp.map { "(\(bits[0] ? 1 : 0),\(bits[1] ? 1 : 0))@v\($0)" } ?? "never-set" }
    }

    let layout: Layout
    let staleAfter: Int?
    let campaigns: [Campaign]
    var month = 0
    var devices: [Device]
    /// Pending orders by install id: true = ban, false = unban.
    var pending: [String: Bool] = [:]
    /// The last order applied through each install id (true = ban), whatever the device.
    var lastApplied: [String: Bool] = [:]

    init(layout: Layout, staleAfter: Int?, campaigns: [Campaign], deviceCount: Int) {
        self.layout = layout
        self.staleAfter = staleAfter
        self.campaigns = campaigns
        devices = Array(repeating: Device(), count: deviceCount)
    }

    // MARK: Reading, as the docs define it

    var banBit: Int? {
        guard case .roles(let b0, let b1) = layout else { return nil }
        return b0 == "ban" ? 0 : (b1 == "ban" ? 1 : nil)
    }

    var promotionBits: [Int] {
        guard case .roles(let b0, let b1) = layout else { return [] }
        return (b0 == "promotion" ? [0] : []) + (b1 == "promotion" ? [1] : [])
    }

    var hasBanMeaning: Bool {
        if case .counter = layout { return true }
        return banBit != nil
    }

    /// The state that counts: nil when never set or stale (more than `staleAfter` months old).
    func effective(_ d: Device) -> Device? {
        guard let stamp = d.stamp else { return nil }
        if let staleAfter, month - stamp > staleAfter { return nil }
        return d
    }

    func counter(_ bits: [Bool]) -> Int { (bits[1] ? 2 : 0) + (bits[0] ? 1 : 0) }

    func banned(_ d: Device) -> Bool {
        guard let e = effective(d) else { return false }
        switch layout {
        case .counter(let banAt): return counter(e.bits) >= banAt
        case .roles: return banBit.map { e.bits[$0] } ?? false
        }
    }

    /// The month of the claim of `c`, if the device has claimed it.
    func claimMonth(_ d: Device, _ c: Campaign) -> Int? {
        guard let e = effective(d), let stamp = e.stamp, e.bits[c.bit], stamp >= c.starts, c.ends.map({ stamp <= $0 }) ?? true else { return nil }
        return stamp
    }

    /// The bits a write starts from: cleared when nothing counts; a set promotion bit is cleared when a
    /// campaign active now on that bit started after the last write.
    func base(_ d: Device) -> [Bool] {
        guard let e = effective(d), let stamp = e.stamp else { return [false, false] }
        var bits = e.bits
        for bit in promotionBits where bits[bit] {
            if let running = campaigns.first(where: { $0.bit == bit && $0.active(at: month) }), stamp < running.starts { bits[bit] = false }
        }
        return bits
    }

    func banBits(_ d: Device, banned: Bool) -> [Bool] {
        switch layout {
        case .counter: return banned ? [true, true] : [false, false]
        case .roles:
            var bits = base(d)
            if let b = banBit { bits[b] = banned }
            return bits
        }
    }

    mutating func write(_ i: Int, _ bits: [Bool]) { devices[i] = Device(bits: bits, stamp: month) }

    // MARK: Operations; each answers a canonical outcome string (the test renders the real policy's the same way)

    mutating func claim(_ i: Int, _ id: String) -> String {
        guard !promotionBits.isEmpty else { return "notEnabled" }
        guard let c = campaigns.first(where: { $0.id == id }) else { return "unknownPromotion(\(id))" }
        guard c.active(at: month) else { return "promotionNotActive(\(id))" }
        if banned(devices[i]) { return "deviceBanned(nil)" }
        if let m = claimMonth(devices[i], c) { return "alreadyClaimed(v\(m))" }
        var bits = base(devices[i])
        bits[c.bit] = true
        write(i, bits)
        return "claimed(v\(month))"
    }

    func eligibility(_ i: Int, _ id: String) -> String {
        guard !promotionBits.isEmpty else { return "notEnabled" }
        guard let c = campaigns.first(where: { $0.id == id }) else { return "unknownPromotion(\(id))" }
        if banned(devices[i]) { return "deviceBanned(nil)" }
        if let m = claimMonth(devices[i], c) { return "eligible(false, already_claimed, v\(m))" }
        if !c.active(at: month) { return "eligible(false, promotion_not_active, nil)" }
        return "eligible(true, eligible, nil)"
    }

    mutating func setBanned(_ i: Int, _ banned: Bool) -> String {
        guard hasBanMeaning else { return "notEnabled" }
        write(i, banBits(devices[i], banned: banned))
        return "ban(\(banned), applied: true)"
    }

    mutating func order(_ install: String, ban: Bool) -> String {
        guard hasBanMeaning else { return "notEnabled" }
        pending[install] = ban
        return "ban(\(ban), applied: false)"
    }

    /// `admit`: pending order for the install applied first (then removed), then banned devices refused.
    /// A pending unban lifts only a ban of its own kind: the device is banned and the last order applied
    /// through that install id was a ban; otherwise it stays pending and nothing is written.
    mutating func admit(_ i: Int, _ install: String?) -> (outcome: String, applied: Bool?) {
        guard hasBanMeaning else { return ("admitted(validated only)", nil) }
        var applied: Bool?
        if let install, let ban = pending[install], ban || (banned(devices[i]) && lastApplied[install] == true) {
            write(i, banBits(devices[i], banned: ban))
            pending[install] = nil
            lastApplied[install] = ban
            applied = ban
        }
        let a = applied.map { $0 ? "ban" : "unban" } ?? "nil"
        if banned(devices[i]) { return ("deviceBanned(\(a))", applied) }
        return ("admitted(\(a))", applied)
    }

    mutating func register(_ i: Int, _ install: String?) -> String {
        guard case .counter(let banAt) = layout else { return "notEnabled" }
        let (outcome, applied) = admit(i, install)
        guard outcome.hasPrefix("admitted") else { return outcome }
        let count = effective(devices[i]).map { min(counter($0.bits) + 1, 3) } ?? 0
        write(i, [count & 1 == 1, count & 2 == 2])
        return "install(\(count), banned: \(count >= banAt), applied: \(applied.map { $0 ? "ban" : "unban" } ?? "nil"))"
    }
}

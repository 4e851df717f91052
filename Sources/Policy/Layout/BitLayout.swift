/// What the two bits mean for this team. Bits belong to the whole Apple developer team: every app
/// of the team reads and writes the same two bits, so one layout must hold across all of them.
public enum BitLayout: Sendable, Equatable, CustomStringConvertible {
    /// Each bit has its own role.
    case roles(bit0: BitRole, bit1: BitRole)
    /// Both bits count fresh installs (bit1 high, bit0 low); the device is banned at `banAt`.
    case reinstallCounter(banAt: Int)
    /// Bits are never read or written; only token validity is used.
    case none

    /// The bit index holding the ban, if the layout has a ban bit.
    public var banBit: Int? {
        if case .roles(let b0, let b1) = self { return b0 == .ban ? 0 : (b1 == .ban ? 1 : nil) }
        return nil
    }

    /// The bit indexes holding promotions.
    public var promotionBits: [Int] {
        guard case .roles(let b0, let b1) = self else { return [] }
        return [b0 == .promotion ? 0 : nil, b1 == .promotion ? 1 : nil].compactMap { $0 }
    }

    /// Whether the layout can express "this device is banned".
    public var hasBanMeaning: Bool {
        switch self {
        case .roles: return banBit != nil
        case .reinstallCounter: return true
        case .none: return false
        }
    }

    public var description: String {
        switch self {
        case .roles(let b0, let b1): return #"{"bit0":"\#(b0.rawValue)","bit1":"\#(b1.rawValue)"}"#
        case .reinstallCounter(let banAt): return #"{"mode":"reinstall-counter","ban_at":\#(banAt)}"#
        case .none: return #"{"mode":"none"}"#
        }
    }
}

public import DeviceCheckModel
public import FoundationEssentials
public import Ledger
import Mechanisms

/// Decides what the bits mean and how they change. Every write is read-modify-write of both bits.
///
/// Apple has no compare-and-set and no stable device id: two simultaneous requests from one phone
/// with two different fresh tokens cannot be serialised by any server. The last write wins; the
/// audit trail shows both.
public final class BitPolicy: Sendable {
    public let configuration: PolicyConfiguration
    let apple: any DeviceCheckAPI
    /// The stores the policy writes: audit events, write intents, pending orders.
    let ledger: any AuditLog & WriteIntentStore & PendingOrderStore
    let now: @Sendable () -> Date
    /// Resolutions the ledger failed to take, retried until it does (`UnsavedResolution`).
    let unsavedResolutions = RetryQueue<UnsavedResolution>(limit: UnsavedResolution.limit)

    public init(configuration: PolicyConfiguration, apple: any DeviceCheckAPI, ledger: any AuditLog & WriteIntentStore & PendingOrderStore,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.apple = apple
        self.ledger = ledger
        self.now = now
    }

    public var layout: BitLayout { configuration.layout }
    var currentMonth: YearMonth { YearMonth(containing: now()) }

    // MARK: Interpretation

    /// Interprets a query result under the layout, the staleness rule and the promotions.
    public func meaning(of result: QueryResult) -> DeviceMeaning {
        let raw = result.state
        var stale = false
        if let raw, let limit = configuration.staleAfterMonths, currentMonth.months(since: raw.lastUpdated) > limit { stale = true }
        let state = stale ? nil : raw
        let bits = state?.bits ?? .clear

        var banned = false
        var reinstalls: Int?
        switch layout {
        case .roles:
            if let b = layout.banBit { banned = bits[b] }
        case .reinstallCounter(let banAt):
            reinstalls = state == nil ? nil : bits.counter
            banned = state != nil && bits.counter >= banAt
        case .none:
            break
        }

        var claims: [PromotionClaim] = []
        if let state {
            for promotion in configuration.promotions where state.bits[promotion.bit] && state.lastUpdated >= promotion.starts
                && (promotion.ends.map { state.lastUpdated <= $0 } ?? true) {
                claims.append(PromotionClaim(promotionID: promotion.id, month: state.lastUpdated))
            }
        }
        return DeviceMeaning(raw: raw, stale: stale, banned: banned, reinstalls: reinstalls, claims: claims)
    }

    /// The bits a write starts from: the effective bits, with set promotion bits that do not count as a
    /// claim of the campaign running now on that bit cleared. Without this, the month stamp of the new
    /// write would make an old campaign's claim look like a claim of the current one.
    func baseBits(for meaning: DeviceMeaning) -> Bits {
        guard let state = meaning.effective else { return .clear }
        var bits = state.bits
        for bit in layout.promotionBits where bits[bit] {
            if let active = activePromotion(onBit: bit), state.lastUpdated < active.starts { bits[bit] = false }
        }
        return bits
    }

    func activePromotion(onBit bit: Int) -> Promotion? {
        configuration.promotions.first { $0.bit == bit && $0.isActive(in: currentMonth) }
    }

    // MARK: Apple and ledger, with errors mapped

    func query(_ token: DeviceToken) async throws(PolicyError) -> QueryResult {
        do { return try await apple.query(token) } catch { throw .apple(error) }
    }

    func validate(_ token: DeviceToken) async throws(PolicyError) {
        do { try await apple.validate(token) } catch { throw .apple(error) }
    }

    func record(_ event: AuditEvent) async throws(PolicyError) {
        do { try await ledger.record(event) } catch { throw .storage(error) }
    }

    static func describe(_ meaning: DeviceMeaning) -> String {
        guard let raw = meaning.raw else { return "never-set" }
        return "\(raw)" + (meaning.stale ? " (stale)" : "")
    }
}

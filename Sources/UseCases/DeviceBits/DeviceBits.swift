public import DeviceCheckModel
public import FoundationEssentials
public import Ledger
import Mechanisms
public import Policy
import TwoBitsCrypto

/// The device's two bits at Apple, read and written for the use cases: Apple's client, the audit trail and the
/// write intents, the clock, and the resolutions an outage of the ledger kept from being saved. What the bits
/// mean and what to write is `BitRules`'; every write goes through `write` (intent → update → resolution).
public final class DeviceBits: Sendable {
    /// The rules the use cases over these bits decide by.
    public let rules: BitRules
    let apple: any DeviceCheckAPI
    /// The stores a write touches: the audit trail and the write intents.
    let ledger: any AuditLog & WriteIntentStore
    let now: @Sendable () -> Date
    /// Resolutions the ledger failed to take, retried until it does (`WriteResolution+Save.swift`).
    let unsavedResolutions = RetryQueue<WriteResolution>(limit: WriteResolution.unsavedLimit)

    public init(rules: BitRules, apple: any DeviceCheckAPI, ledger: any AuditLog & WriteIntentStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.rules = rules
        self.apple = apple
        self.ledger = ledger
        self.now = now
    }

    public var layout: BitLayout { rules.layout }
    /// The month now, by this use case's clock (the month Apple stamps on a write sent now).
    var currentMonth: YearMonth { YearMonth(containing: now()) }

    /// Interprets a query result in the current month.
    public func meaning(of result: QueryResult) -> DeviceMeaning { rules.meaning(of: result, in: currentMonth) }

    // MARK: Apple, with errors mapped

    func query(_ token: DeviceToken) async throws(PolicyError) -> QueryResult {
        do { return try await apple.query(token) } catch { throw .apple(error) }
    }

    func validate(_ token: DeviceToken) async throws(PolicyError) {
        do { try await apple.validate(token) } catch { throw .apple(error) }
    }

    /// Queries the device before a write and, from that answer, settles the earlier writes of the same
    /// device token whose outcome is not known (`unknown`). The retry's own query settles them before the
    /// retry writes, so its own write cannot be mistaken for theirs.
    func queryBeforeWrite(_ token: DeviceToken) async throws(PolicyError) -> QueryResult {
        let result = try await query(token)
        for intent in (try? await ledger.unknownWriteIntents(tokenPrefix: token.shortDigest, limit: 20)) ?? [] {
            await resolve(intent.settlement(from: result))
        }
        return result
    }
}

import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import Policy
@testable import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Locking
import Testing
import TestSupport
import TwoBitsCrypto

/// One frozen instant shared by the sandbox, the developer-token provider and the policy, so the month
/// Apple stamps and the month the policy reasons about are the same for the whole test, even across a
/// month boundary. The sandbox refuses request timestamps more than an hour from its clock, and the
/// client stamps requests with the wall clock, so the frozen instant is "now" taken once (whole seconds).
func frozenNow() -> Date { Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970)) }

/// A real `AppleSandbox` on its own loopback port, a real `AppleDeviceCheckClient` talking to it over HTTP,
/// a real `SQLiteLedger` file in a fresh temporary directory, and the use cases over the device's bits on top.
struct PolicyHarness: Sendable {
    let date: Date
    let sandbox: AppleSandbox
    let client: AppleDeviceCheckClient
    let ledgerPath: String
    let directory: URL
    let ledger: SQLiteLedger
    let useCases: BitUseCases

    /// The month of the frozen clock: what the sandbox stamps on every update.
    var month: YearMonth { YearMonth(containing: date) }

    /// `configure` receives the frozen month, so promotions can be placed relative to it.
    init(clientTimeoutMilliseconds: Int = 3_000, configure: (YearMonth) -> PolicyConfiguration) throws {
        let date = frozenNow()
        let configuration = configure(YearMonth(containing: date))
        self.date = date
        let now: @Sendable () -> Date = { date }
        let apple = try SandboxHarness(now: now)
        sandbox = apple.sandbox
        client = try apple.client(timeoutMilliseconds: clientTimeoutMilliseconds, initialBackoffMilliseconds: 10,
                                  tokens: apple.provider(now: now))
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("policy-tests-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ledgerPath = directory.appendingPathComponent("ledger.sqlite").path
        // No cached readiness verdict: every `checkHealth` runs its write probe.
        ledger = try SQLiteLedger(path: ledgerPath, healthProbeInterval: .zero)
        useCases = BitUseCases(configuration: configuration, apple: client, ledger: ledger, now: now)
    }

    /// A fresh simulated device.
    func device() -> String { sandbox.createDevice() }

    /// A fresh device token for `deviceID`.
    func token(_ deviceID: String) throws -> DeviceToken {
        let text = try #require(sandbox.mintToken(for: deviceID))
        return try #require(DeviceToken(text))
    }

    /// A fresh device with its first token.
    func newDevice() throws -> (id: String, token: DeviceToken) {
        let id = device()
        return (id, try token(id))
    }

    /// The device as the sandbox holds it.
    func state(_ deviceID: String) throws -> SimulatedDevice { try #require(sandbox.device(deviceID)) }

    /// The device's bits and month as Apple would answer a query.
    func query(_ deviceID: String) throws -> QueryResult { try state(deviceID).queryResult }

    func calls(_ endpoint: AppleEndpoint) -> Int { sandbox.counters.calls[endpoint.rawValue] ?? 0 }
    var totalCalls: Int { sandbox.counters.calls.values.reduce(0, +) }

    /// Months relative to the frozen month.
    func month(_ offset: Int) -> YearMonth { month.adding(months: offset) }

    /// The audit trail, newest first.
    func audit() async throws -> [AuditEvent] { try await ledger.auditEvents(limit: 1_000, before: nil) }
}

/// Runs `body` against a fresh harness; afterwards checks that every update the sandbox saw carried both
/// bits, shuts the sandbox down and removes the temporary directory.
func withPolicy(clientTimeoutMilliseconds: Int = 3_000, _ configure: (YearMonth) -> PolicyConfiguration,
                _ body: (PolicyHarness) async throws -> Void) async throws {
    let h = try PolicyHarness(clientTimeoutMilliseconds: clientTimeoutMilliseconds, configure: configure)
    var failure: (any Error)?
    do { try await body(h) } catch { failure = error }
    #expect(h.sandbox.counters.updatesMissingBit == 0, "every update must carry both bits")
    await h.sandbox.shutdown()
    try? FileManager.default.removeItem(at: h.directory)
    if let failure { throw failure }
}

func bits(_ b0: Int, _ b1: Int) -> Bits { Bits(bit0: b0 == 1, bit1: b1 == 1) }

func state(_ b0: Int, _ b1: Int, _ month: YearMonth) -> QueryResult {
    .state(BitState(bits: bits(b0, b1), lastUpdated: month))
}

/// `PolicyError` as an equatable value (its storage case carries a non-equatable error).
enum Failure: Equatable, CustomStringConvertible {
    case apple(DeviceCheckError)
    case notEnabled(String)
    case unknownPromotion(String)
    case promotionNotActive(id: String, starts: YearMonth, ends: YearMonth?)
    case alreadyClaimed(YearMonth)
    case deviceBanned
    case storage(String)
    /// Not a `PolicyError` (a test helper threw).
    case other(String)

    init(_ error: PolicyError) {
        switch error {
        case .apple(let e): self = .apple(e)
        case .notEnabled(let m): self = .notEnabled(m)
        case .unknownPromotion(let id): self = .unknownPromotion(id)
        case .promotionNotActive(let id, let starts, let ends): self = .promotionNotActive(id: id, starts: starts, ends: ends)
        case .alreadyClaimed(let m): self = .alreadyClaimed(m)
        case .deviceBanned: self = .deviceBanned
        case .storage(let e): self = .storage(e.message)
        case .cancelled: self = .other("cancelled")
        }
    }

    var description: String {
        switch self {
        case .apple(let e): return "apple(\(e))"
        case .notEnabled(let m): return "notEnabled(\(m))"
        case .unknownPromotion(let id): return "unknownPromotion(\(id))"
        case .promotionNotActive(let id, let s, let e): return "promotionNotActive(\(id), \(s)...\(e.map(\.description) ?? "open"))"
        case .alreadyClaimed(let m): return "alreadyClaimed(\(m))"
        case .deviceBanned: return "deviceBanned"
        case .storage(let m): return "storage(\(m))"
        case .other(let m): return "other(\(m))"
        }
    }

    var notEnabledMessage: String? { if case .notEnabled(let m) = self { return m }; return nil }
    var isAppleUnavailable: Bool { if case .apple(.unavailable) = self { return true }; return false }
}

/// The failure of a policy call, or nil when it succeeded. (Untyped so the body may mint tokens too.)
func failure<T>(_ body: () async throws -> T) async -> Failure? {
    do {
        _ = try await body()
        return nil
    } catch let error as PolicyError {
        return Failure(error)
    } catch {
        return .other(String(describing: error))
    }
}

/// A value tests can set from `@Sendable` closures.
final class Box<Value: Sendable>: Sendable {
    private let value: Lock<Value>
    init(_ initial: Value) { value = Lock(initial) }
    var current: Value { value.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { value.withLock { body(&$0) } }
}

/// A promotion whose months are given as offsets from `month`.
func promotion(_ id: String, _ month: YearMonth, from start: Int, to end: Int?, bit: Int = 0) -> Promotion {
    Promotion(id: id, starts: month.adding(months: start), ends: end.map { month.adding(months: $0) }, bit: bit)
}

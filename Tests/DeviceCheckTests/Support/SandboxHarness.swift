import DeviceCheck
import Foundation
import Sandbox
import Synchronization
import Testing
import TwoBitsCrypto

let sandboxTeamID = "TEAMID1234"
let sandboxKeyID = "KEYID12345"

/// A clock tests can move by hand.
final class TestClock: Sendable {
    private let time: Mutex<Date>
    init(_ start: Date = Date()) { time = Mutex(start) }
    var now: Date { time.withLock { $0 } }
    func advance(seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    /// A closure for `now:` parameters.
    var closure: @Sendable () -> Date { { self.now } }
}

/// A real `AppleSandbox` on a loopback port of its own, with the team's key, and clients for it.
struct SandboxHarness: Sendable {
    let key: P256PrivateKey
    let sandbox: AppleSandbox

    init(environment: AppleEnvironment = .development, latencyMilliseconds: Int = 0, maxTokenAgeSeconds: Int = 3_600,
         now: @escaping @Sendable () -> Date = { Date() }) throws {
        key = P256PrivateKey.generate()
        let configuration = SandboxConfiguration(port: 0, teamID: sandboxTeamID, keyID: sandboxKeyID, publicKey: key.publicKey,
                                                 environment: environment, maxTokenAgeSeconds: maxTokenAgeSeconds,
                                                 latencyMilliseconds: latencyMilliseconds)
        sandbox = AppleSandbox(configuration: configuration, now: now)
        try sandbox.start()
    }

    /// A token provider; by default with the sandbox's own team, key id and key.
    func provider(key: P256PrivateKey? = nil, teamID: String = sandboxTeamID, keyID: String = sandboxKeyID,
                  refreshAge: ClosedRange<TimeInterval> = 30 * 60...50 * 60,
                  now: @escaping @Sendable () -> Date = { Date() }) throws -> DeveloperTokenProvider {
        let credentials = try DeveloperCredentials(teamID: teamID, keyID: keyID, key: key ?? self.key)
        return DeveloperTokenProvider(credentials: credentials, refreshAge: refreshAge, now: now)
    }

    func client(timeoutMilliseconds: Int = 3_000, maxInFlight: Int = 1_024, maxConnections: Int = 64,
                tokens: DeveloperTokenProvider? = nil) throws -> AppleDeviceCheckClient {
        let configuration = AppleClientConfiguration(baseURL: sandbox.baseURL, timeoutMilliseconds: timeoutMilliseconds,
                                                     maxInFlight: maxInFlight, maxConnections: maxConnections,
                                                     initialBackoffMilliseconds: 5, maxBackoffMilliseconds: 100)
        return AppleDeviceCheckClient(configuration: configuration, tokens: try tokens ?? provider())
    }

    /// A fresh simulated device.
    func device() -> String { sandbox.createDevice() }

    /// A fresh device token for `deviceID` (minted for the sandbox's environment unless told otherwise).
    func token(_ deviceID: String, environment: AppleEnvironment? = nil) throws -> DeviceToken {
        let text = try #require(sandbox.mintToken(for: deviceID, environment: environment))
        return try #require(DeviceToken(text))
    }

    func calls(_ endpoint: AppleEndpoint) -> Int { sandbox.counters.calls[endpoint.rawValue] ?? 0 }
    func statusCount(_ status: Int) -> Int { sandbox.counters.statuses[String(status)] ?? 0 }
}

/// Runs `body` against a started sandbox and always shuts the sandbox down afterwards.
func withSandbox(environment: AppleEnvironment = .development, latencyMilliseconds: Int = 0, maxTokenAgeSeconds: Int = 3_600,
                 now: @escaping @Sendable () -> Date = { Date() },
                 _ body: (SandboxHarness) async throws -> Void) async throws {
    let harness = try SandboxHarness(environment: environment, latencyMilliseconds: latencyMilliseconds,
                                     maxTokenAgeSeconds: maxTokenAgeSeconds, now: now)
    do {
        try await body(harness)
    } catch {
        await harness.sandbox.shutdown()
        throw error
    }
    await harness.sandbox.shutdown()
}

/// The outcome of a DeviceCheck call as a value, so tests can match on it.
func outcome<T>(_ body: () async throws(DeviceCheckError) -> T) async -> Result<T, DeviceCheckError> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

/// Milliseconds since `start`.
func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let d = ContinuousClock.now - start
    return Int(d.components.seconds * 1_000 + d.components.attoseconds / 1_000_000_000_000_000)
}

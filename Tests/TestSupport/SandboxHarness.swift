import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import Sandbox
import TwoBitsCrypto

/// A real `AppleSandbox` on a loopback port of its own, with the team's key, and clients for it.
public struct SandboxHarness: Sendable {
    public let key: P256PrivateKey
    public let sandbox: AppleSandbox

    public init(environment: AppleEnvironment = .development, latencyMilliseconds: Int = 0, maxTokenAgeSeconds: Int = 3_600,
                now: @escaping @Sendable () -> Date = { Date() }) throws {
        key = P256PrivateKey.generate()
        let configuration = SandboxConfiguration(port: 0, teamID: sandboxTeamID, keyID: sandboxKeyID, publicKey: key.publicKey,
                                                 environment: environment, maxTokenAgeSeconds: maxTokenAgeSeconds,
                                                 latencyMilliseconds: latencyMilliseconds)
        sandbox = AppleSandbox(configuration: configuration, now: now)
        try sandbox.start()
    }

    /// A token provider; by default with the sandbox's own team, key id and key.
    public func provider(key: P256PrivateKey? = nil, teamID: String = sandboxTeamID, keyID: String = sandboxKeyID,
                         refreshAge: ClosedRange<TimeInterval> = 30 * 60...50 * 60,
                         now: @escaping @Sendable () -> Date = { Date() }) throws -> DeveloperTokenProvider {
        let credentials = try DeveloperCredentials(teamID: teamID, keyID: keyID, key: key ?? self.key)
        return DeveloperTokenProvider(credentials: credentials, refreshAge: refreshAge, now: now)
    }

    /// The default deadline is long on purpose: calls that should succeed must not fail only because the
    /// whole test process is busy. Tests about deadlines pass their own.
    public func client(timeoutMilliseconds: Int = 10_000, maxInFlight: Int = 1_024, maxConnections: Int = 64,
                       initialBackoffMilliseconds: Int = 5, tokens: DeveloperTokenProvider? = nil,
                       observer: (any AppleCallObserver)? = nil) throws -> AppleDeviceCheckClient {
        let configuration = AppleClientConfiguration(baseURL: sandbox.baseURL, timeoutMilliseconds: timeoutMilliseconds,
                                                     maxInFlight: maxInFlight, maxConnections: maxConnections,
                                                     initialBackoffMilliseconds: initialBackoffMilliseconds, maxBackoffMilliseconds: 100)
        return AppleDeviceCheckClient(configuration: configuration, tokens: try tokens ?? provider(), observer: observer)
    }

    /// A fresh simulated device.
    public func device() -> String { sandbox.createDevice() }

    /// A fresh device token for `deviceID` (minted for the sandbox's environment unless told otherwise).
    public func token(_ deviceID: String, environment: AppleEnvironment? = nil) throws -> DeviceToken {
        guard let text = sandbox.mintToken(for: deviceID, environment: environment) else {
            throw HarnessError("the sandbox minted no token for \(deviceID)")
        }
        guard let token = DeviceToken(text) else { throw HarnessError("the sandbox minted an invalid token: \(text)") }
        return token
    }

    public func calls(_ endpoint: AppleEndpoint) -> Int { sandbox.counters.calls[endpoint.rawValue] ?? 0 }
    public func statusCount(_ status: Int) -> Int { sandbox.counters.statuses[String(status)] ?? 0 }
}

/// Runs `body` against a started sandbox and always shuts the sandbox down afterwards, also when `body` throws.
public func withSandbox<T>(environment: AppleEnvironment = .development, latencyMilliseconds: Int = 0, maxTokenAgeSeconds: Int = 3_600,
                           now: @escaping @Sendable () -> Date = { Date() },
                           _ body: (SandboxHarness) async throws -> T) async throws -> T {
    let harness = try SandboxHarness(environment: environment, latencyMilliseconds: latencyMilliseconds,
                                     maxTokenAgeSeconds: maxTokenAgeSeconds, now: now)
    let result: T
    do {
        result = try await body(harness)
    } catch {
        await harness.sandbox.shutdown()
        throw error
    }
    await harness.sandbox.shutdown()
    return result
}

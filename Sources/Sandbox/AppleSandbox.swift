import DeviceCheckModel
public import FoundationEssentials
public import HTTPServer
import TwoBitsCrypto

/// An emulator of Apple's DeviceCheck endpoints, as strict as Apple, with control endpoints under
/// `/sandbox/v1/` to create devices, mint tokens, seed bits, inject faults and read counters.
///
/// Runs in-process (tests) or as `twobits sandbox` (developers, benchmarks). The same control
/// operations are available as Swift methods.
public final class AppleSandbox: Sendable {
    public let configuration: SandboxConfiguration
    let state: SandboxState
    let verifier: DeveloperTokenVerifier
    private let server: HTTPServer<Void>
    let now: @Sendable () -> Date
    /// The App Attestation CA the simulated devices' keys chain to; its root is what the service must trust.
    public let appAttestAuthority: AppAttestAuthority

    public init(configuration: SandboxConfiguration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.now = now
        self.appAttestAuthority = AppAttestAuthority(now: now())
        let state = SandboxState(latencyMilliseconds: configuration.latencyMilliseconds)
        self.state = state
        self.verifier = DeveloperTokenVerifier(teamID: configuration.teamID, keyID: configuration.keyID,
                                               publicKey: configuration.publicKey, maxAgeSeconds: configuration.maxTokenAgeSeconds)
        let router = SandboxRouter()
        var serverConfiguration = HTTPServerConfiguration(host: configuration.host, port: configuration.port, threads: 2)
        serverConfiguration.requestDeadlineMilliseconds = 300_000
        serverConfiguration.maxBodyBytes = 1 << 20
        // Apple answers each call when it is done: a sandbox whose loops paused to batch their answers would
        // hand the service's loops batches real Apple never sends, and flatter its wake coalescing.
        serverConfiguration.wakeCoalescingMicroseconds = 0
        // Apple does what a call asked whether or not its caller still listens: an update whose caller timed
        // out and hung up still lands, after the latency, so the service meets writes whose outcome it lost.
        serverConfiguration.cancelsOnHangUp = false
        let box = SandboxBox()
        self.server = HTTPServer(configuration: serverConfiguration) { request in
            guard let sandbox = box.sandbox else { return .text(503, "starting") }
            return await router.handle(request, sandbox: sandbox)
        }
        box.sandbox = self
    }

    /// Starts listening; returns the base URL to give the Apple client.
    @discardableResult
    public func start() throws(HTTPServerError) -> String {
        try server.start()
        return baseURL
    }

    public var port: UInt16 { server.port }
    public var baseURL: String { "http://\(configuration.host == "0.0.0.0" ? "127.0.0.1" : configuration.host):\(server.port)" }

    public func shutdown() async { await server.shutdown(graceMilliseconds: 500) }
}

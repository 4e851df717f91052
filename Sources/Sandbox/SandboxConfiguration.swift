public import DeviceCheckModel
public import TwoBitsCrypto

/// What the sandbox accepts: one team's developer key, like Apple.
public struct SandboxConfiguration: Sendable {
    public var host: String
    public var port: UInt16
    public var teamID: String
    public var keyID: String
    /// The public half of the team's DeviceCheck key; developer JWTs must verify against it.
    public var publicKey: P256PublicKey
    /// The environment this sandbox plays; tokens minted for the other one are refused like Apple does.
    public var environment: AppleEnvironment
    /// Developer JWTs with an `iat` older than this are expired (Apple: one hour).
    public var maxTokenAgeSeconds: Int
    /// Added before every answer of Apple's endpoints.
    public var latencyMilliseconds: Int

    public init(host: String = "127.0.0.1", port: UInt16 = 0, teamID: String, keyID: String, publicKey: P256PublicKey,
                environment: AppleEnvironment = .development, maxTokenAgeSeconds: Int = 3600, latencyMilliseconds: Int = 0) {
        self.host = host
        self.port = port
        self.teamID = teamID
        self.keyID = keyID
        self.publicKey = publicKey
        self.environment = environment
        self.maxTokenAgeSeconds = maxTokenAgeSeconds
        self.latencyMilliseconds = latencyMilliseconds
    }
}

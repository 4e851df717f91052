/// The fallback-tier token settings (`tokens` in the configuration). Absent: the token routes answer 409 not_enabled.
public struct TokenSettings: Sendable {
    public var enabled: Bool
    public var issuer: String
    public var audience: String
    public var ttlSeconds: Int
    public var limitedUseTTLSeconds: Int
    public var keysDirectory: String
    public var reuseWindowSeconds: Int

    public init(enabled: Bool, issuer: String, audience: String, ttlSeconds: Int, limitedUseTTLSeconds: Int,
                keysDirectory: String, reuseWindowSeconds: Int) {
        self.enabled = enabled
        self.issuer = issuer
        self.audience = audience
        self.ttlSeconds = ttlSeconds
        self.limitedUseTTLSeconds = limitedUseTTLSeconds
        self.keysDirectory = keysDirectory
        self.reuseWindowSeconds = reuseWindowSeconds
    }

    /// The longest life any token of this server can have.
    public var maxTokenLifetime: Double { Double(max(ttlSeconds, limitedUseTTLSeconds)) }
}

/// The fallback-tier token settings (`tokens` in the configuration). Absent: the token routes answer 409 not_enabled.
public struct TokenSettings: Sendable {
    public var enabled: Bool
    public var issuer: String
    public var audience: String
    public var ttlSeconds: Int
    public var limitedUseTTLSeconds: Int
    public var keysDirectory: String
    public var reuseWindowSeconds: Int

    public static let disabled = TokenSettings(enabled: false, issuer: "twobits", audience: "main-api", ttlSeconds: 900,
                                               limitedUseTTLSeconds: 300, keysDirectory: "keys", reuseWindowSeconds: 3600)

    static func parse(_ reader: inout ConfigReader, baseDirectory: String) throws(ConfigurationError) -> TokenSettings {
        guard var t = try reader.object("tokens") else { return .disabled }
        let settings = TokenSettings(
            enabled: true,
            issuer: try t.string("issuer", default: "twobits"),
            audience: try t.string("audience"),
            ttlSeconds: try t.int("ttl_seconds", default: 900, range: 60...86_400),
            limitedUseTTLSeconds: try t.int("limited_use_ttl_seconds", default: 300, range: 30...3_600),
            keysDirectory: ServiceConfiguration.resolve(try t.string("keys_dir", default: "keys"), against: baseDirectory),
            reuseWindowSeconds: try t.int("reuse_window_seconds", default: 3_600, range: 60...604_800))
        try t.rejectUnknownFields()
        return settings
    }
}

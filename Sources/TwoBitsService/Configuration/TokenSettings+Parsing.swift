public import UseCases

extension TokenSettings {
    /// No `tokens` section: the token routes answer 409 not_enabled.
    public static let disabled = TokenSettings(
        enabled: false, issuer: ServiceDefaults.Tokens.issuer, audience: ServiceDefaults.Tokens.audience,
        ttlSeconds: ServiceDefaults.Tokens.ttlSeconds, limitedUseTTLSeconds: ServiceDefaults.Tokens.limitedUseTTLSeconds,
        keysDirectory: ServiceDefaults.Tokens.keysDirectory, reuseWindowSeconds: ServiceDefaults.Tokens.reuseWindowSeconds)

    static func parse(_ reader: inout ConfigReader, baseDirectory: String) throws(ConfigurationError) -> TokenSettings {
        guard var t = try reader.object("tokens") else { return .disabled }
        let settings = TokenSettings(
            enabled: true,
            issuer: try t.string("issuer", default: ServiceDefaults.Tokens.issuer),
            audience: try t.string("audience"),
            ttlSeconds: try t.int("ttl_seconds", default: ServiceDefaults.Tokens.ttlSeconds, range: 60...86_400),
            limitedUseTTLSeconds: try t.int("limited_use_ttl_seconds", default: ServiceDefaults.Tokens.limitedUseTTLSeconds, range: 30...3_600),
            keysDirectory: ServiceConfiguration.resolve(try t.string("keys_dir", default: ServiceDefaults.Tokens.keysDirectory), against: baseDirectory),
            reuseWindowSeconds: try t.int("reuse_window_seconds", default: ServiceDefaults.Tokens.reuseWindowSeconds, range: 60...604_800))
        try t.rejectUnknownFields()
        return settings
    }
}

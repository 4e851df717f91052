import AppleDeviceCheckClient

/// `twobits apple-check`: one authenticated call to the configured Apple (a query of a made-up device token),
/// and what it said of the link (TLS, HTTP version, latency) and of the credentials.
public struct AppleLinkCheck: Sendable {
    /// The report, one "name: value" line each.
    public let lines: [String]
    /// Apple accepted the credentials (the command's exit status is 0 only then).
    public let accepted: Bool

    /// Makes the call with `configuration`'s Apple section (URL, credentials, `ca_file`, timeout).
    public static func run(_ configuration: ServiceConfiguration) async throws(ConfigurationError) -> AppleLinkCheck {
        let apple = configuration.apple
        let credentials: DeveloperCredentials
        do {
            credentials = try DeveloperCredentials(teamID: apple.teamID, keyID: apple.keyID, privateKeyFile: apple.privateKeyFile)
        } catch {
            switch error {
            case .teamID: throw ConfigurationError("apple.team_id", error.description)
            case .keyID: throw ConfigurationError("apple.key_id", error.description)
            case .key: throw ConfigurationError("apple.private_key_file", error.description)
            }
        }
        let client = AppleDeviceCheckClient(
            configuration: AppleClientConfiguration(baseURL: apple.effectiveBaseURL, timeoutMilliseconds: apple.timeoutMilliseconds,
                                                    maxInFlight: 1, maxConnections: 1, caFile: apple.caFile),
            tokens: DeveloperTokenProvider(credentials: credentials))
        let report = await client.checkLink()
        var lines = ["apple: \(report.url) (environment \(apple.environment.rawValue), team \(apple.teamID), key \(apple.keyID))"]
        if report.url.hasPrefix("https://") {
            lines.append("trust: " + (apple.caFile.map { "apple.ca_file \($0)" } ?? "the operating system's store"))
        }
        lines.append("tls: " + (report.tls ?? (report.url.hasPrefix("https://") ? "none (no handshake)" : "none (plain http)")))
        lines.append("http: " + (report.httpVersion ?? "none"))
        lines.append("latency_ms: \(report.milliseconds)")
        let accepted: Bool
        switch report.verdict {
        case .accepted:
            accepted = true
            lines.append("credentials: accepted (Apple refused only the made-up device token, as it must)")
        case .refused(let status, let body):
            accepted = false
            lines.append("credentials: refused by Apple: \(status) \(body)")
        case .inconclusive(let status, let body):
            accepted = false
            lines.append("credentials: unknown: Apple answered \(status) \(body)")
        case .unreachable(let reason):
            accepted = false
            lines.append("credentials: unknown: Apple unreachable: \(reason)")
        }
        return AppleLinkCheck(lines: lines, accepted: accepted)
    }
}

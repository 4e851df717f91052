/// What an API client may do.
public enum ClientRole: String, Sendable, CaseIterable, Codable {
    /// Marketing backends: promotion claims and eligibility.
    case promotions
    /// The main API: install registration and fallback-tier tokens.
    case tokens
    /// Operators: bans, device state, audit, debug secrets.
    case admin
}

/// The authority a fallback token carries, named positively in its `tier` claim.
public enum Tier: String, Sendable, Codable {
    /// Backed by a DeviceCheck token Apple accepted: a real Apple device, not App Attest strength.
    case devicecheck
    /// Issued against an admin-created debug secret, development only.
    case debug
}

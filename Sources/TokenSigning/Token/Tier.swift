/// The authority a token carries, named positively in its `tier` claim.
public enum Tier: String, Sendable, Codable {
    /// Backed by a DeviceCheck token Apple accepted: a real Apple device, not App Attest strength.
    case devicecheck
    /// Issued against an admin-created debug secret, development only.
    case debug
    /// Backed by an App Attest key Apple attested (or an assertion by such a key): the strong tier.
    case appattest
}

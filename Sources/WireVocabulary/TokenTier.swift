/// The authority a token carries, named positively in its `tier` claim and in every token answer.
public enum TokenTier: String, Sendable, Codable, CaseIterable {
    /// Backed by a DeviceCheck token Apple accepted: a real Apple device, not App Attest strength.
    case devicecheck
    /// Issued against an admin-created debug secret, development only.
    case debug
    /// Backed by an App Attest key Apple attested (or an assertion by such a key): the strong tier.
    case appattest
}

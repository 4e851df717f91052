/// Which tiers a route accepts (docs/app-attest.md, "The main API's rule").
public enum TierRequirement: Sendable, Equatable {
    /// `appattest` only: routes that move money or identity.
    case strong
    /// `appattest` when the device can, else `devicecheck` (or `debug` in development).
    case any
}

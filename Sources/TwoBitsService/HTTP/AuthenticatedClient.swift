import FoundationEssentials
import TwoBitsCrypto

/// A caller identified by its API key.
public struct AuthenticatedClient: Sendable {
    public let name: String
    public let roles: Set<ClientRole>
}

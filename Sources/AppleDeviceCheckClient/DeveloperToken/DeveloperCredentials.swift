public import TwoBitsCrypto

/// The team's DeviceCheck signing identity: team id, key id and the `.p8` private key.
public struct DeveloperCredentials: Sendable {
    public let teamID: String
    public let keyID: String
    public let key: P256PrivateKey

    /// Why credentials are unusable; each message names the field and the fix.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case teamID(String)
        case keyID(String)
        case key(KeyError)

        public var description: String {
            switch self {
            case .teamID(let v): return "team id '\(v)' must be the 10-character Apple team id (A-Z, 0-9), from the Membership page of your Apple developer account"
            case .keyID(let v): return "key id '\(v)' must be the 10-character id of the DeviceCheck key (A-Z, 0-9), shown next to the key in Certificates, Identifiers & Profiles > Keys"
            case .key(let e): return "private key: \(e)"
            }
        }
    }

    public init(teamID: String, keyID: String, key: P256PrivateKey) throws(Problem) {
        guard Self.isAppleIdentifier(teamID) else { throw .teamID(teamID) }
        guard Self.isAppleIdentifier(keyID) else { throw .keyID(keyID) }
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
    }

    /// Loads the key from a `.p8` file.
    public init(teamID: String, keyID: String, privateKeyFile: String) throws(Problem) {
        guard Self.isAppleIdentifier(teamID) else { throw .teamID(teamID) }
        guard Self.isAppleIdentifier(keyID) else { throw .keyID(keyID) }
        let key: P256PrivateKey
        do { key = try P256PrivateKey(contentsOfFile: privateKeyFile) } catch { throw .key(error) }
        try self.init(teamID: teamID, keyID: keyID, key: key)
    }

    static func isAppleIdentifier(_ s: String) -> Bool {
        s.utf8.count == 10 && s.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }
    }
}

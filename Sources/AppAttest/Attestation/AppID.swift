public import FoundationEssentials
import TwoBitsCrypto

/// An app's identifier as App Attest knows it: team id and bundle id, "TEAMID.bundle.id".
public struct AppID: Hashable, Sendable, CustomStringConvertible {
    public let teamID: String
    public let bundleID: String
    /// An array, not Data: app ids live in long-lived configuration, and Data's tagged storage pointer
    /// makes LeakSanitizer report what a static holds as leaked.
    private let hashBytes: [UInt8]

    /// SHA-256 of "TEAMID.bundle.id": the RP ID hash in authenticator data.
    public var rpIDHash: Data { Data(hashBytes) }

    public init(teamID: String, bundleID: String) {
        self.teamID = teamID
        self.bundleID = bundleID
        hashBytes = [UInt8](SHA256Digest.hash(Data("\(teamID).\(bundleID)".utf8)))
    }

    /// Parses "TEAMID.bundle.id" (split at the first dot); nil when either part is empty.
    public init?(_ string: String) {
        guard let dot = string.firstIndex(of: "."), dot != string.startIndex, string.index(after: dot) != string.endIndex else { return nil }
        self.init(teamID: String(string[..<dot]), bundleID: String(string[string.index(after: dot)...]))
    }

    public var description: String { "\(teamID).\(bundleID)" }
}

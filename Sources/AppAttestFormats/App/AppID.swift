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

    /// The longest bundle id taken from configuration. Apple states no bound; real ones are far shorter, and a
    /// bound keeps a pasted blob out of every log line and metric label that names the app.
    public static let maxBundleIDLength = 255

    /// Whether both parts have Apple's form: a team id of 10 uppercase ASCII letters and digits, a bundle id of
    /// 1 to `maxBundleIDLength` ASCII letters, digits, hyphens and periods (nothing else can match what a device
    /// attests, and a NUL or a control character would reach logs).
    public var isWellFormed: Bool {
        func upperOrDigit(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) }
        func bundleCharacter(_ c: UInt8) -> Bool { upperOrDigit(c) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E }
        return teamID.utf8.count == 10 && teamID.utf8.allSatisfy(upperOrDigit)
            && (1...Self.maxBundleIDLength).contains(bundleID.utf8.count) && bundleID.utf8.allSatisfy(bundleCharacter)
    }
}

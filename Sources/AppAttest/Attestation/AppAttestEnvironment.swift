public import FoundationEssentials

/// App Attest's two environments, told apart by the AAGUID in the attested credential data.
public enum AppAttestEnvironment: String, Sendable, CaseIterable {
    case development
    case production

    /// "appattestdevelop", or "appattest" followed by seven zero bytes.
    public var aaguid: Data {
        switch self {
        case .development: return Data("appattestdevelop".utf8)
        case .production: return Data("appattest".utf8) + Data(count: 7)
        }
    }

    /// The environment whose AAGUID this is, or nil.
    public init?(aaguid: Data) {
        guard let match = Self.allCases.first(where: { $0.aaguid == aaguid }) else { return nil }
        self = match
    }
}

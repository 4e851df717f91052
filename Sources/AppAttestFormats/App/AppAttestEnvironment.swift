public import DeviceDomain
public import FoundationEssentials

/// App Attest's two environments are Apple's two (a development key comes from an Xcode build, as a development
/// device token does): one type, so that a key's stored environment is the same value the configuration names.
public typealias AppAttestEnvironment = AppleEnvironment

extension AppleEnvironment {
    /// The AAGUID of the attested credential data that tells the environments apart: "appattestdevelop", or
    /// "appattest" followed by seven zero bytes.
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

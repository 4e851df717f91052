/// Why a key file could not be used. Each case names the problem so startup errors can say how to fix it.
public enum KeyError: Error, Equatable, CustomStringConvertible, Sendable {
    case unreadable(path: String, reason: String)
    case notPEM
    case encrypted
    case notEC(String)
    case wrongCurve(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read key file \(path): \(reason)"
        case .notPEM: return "the key is not PEM (expected a line '-----BEGIN PRIVATE KEY-----')"
        case .encrypted: return "the key is encrypted; TwoBits needs an unencrypted PKCS#8 key (.p8 as downloaded from Apple)"
        case .notEC(let type): return "the key is \(type), not an elliptic-curve P-256 key"
        case .wrongCurve(let curve): return "the key is on curve \(curve), not P-256 (prime256v1)"
        case .malformed(let detail): return "the key could not be parsed: \(detail)"
        }
    }
}

import TwoBitsCrypto
import WireFormats

/// A loggable value.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int)
    case double(Double)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }

    /// This value with any password in a text hidden (`CredentialRedaction`).
    var redacted: LogValue {
        if case .string(let s) = self { return .string(CredentialRedaction.redacted(s)) }
        return self
    }

    func append(to out: inout [UInt8]) {
        switch self {
        case .string(let s): JSONString.append(s, to: &out)
        default: out.append(contentsOf: json.utf8)
        }
    }

    var json: String {
        switch self {
        case .string(let s): return LogWriter.quote(s)
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "null"
        }
    }
}

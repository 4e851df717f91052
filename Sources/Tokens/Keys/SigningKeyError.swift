/// Why the key directory cannot be used; each message says how to fix it.
public enum SigningKeyError: Error, CustomStringConvertible, Sendable, Equatable {
    case directoryMissing(String)
    case empty(String)
    case permissive(path: String, mode: String)
    case badKey(path: String, problem: String)
    case io(String)

    public var description: String {
        switch self {
        case .directoryMissing(let d): return "signing key directory \(d) does not exist; create a key with: twobits keys generate --dir \(d)"
        case .empty(let d): return "signing key directory \(d) holds no key; create one with: twobits keys generate --dir \(d)"
        case .permissive(let p, let m): return "signing key \(p) has mode \(m), readable by group or others; fix with: chmod 600 \(p)"
        case .badKey(let p, let problem): return "signing key \(p): \(problem)"
        case .io(let m): return m
        }
    }
}

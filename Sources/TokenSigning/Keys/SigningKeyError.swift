/// Why the key directory cannot be used; each message says how to fix it.
public enum SigningKeyError: Error, CustomStringConvertible, Sendable, Equatable {
    case directoryMissing(String)
    case empty(String)
    case permissive(path: String, mode: String)
    /// Group or others may write the directory, so they could plant a key that signs tokens.
    case directoryWritable(path: String, mode: String)
    /// A key file owned by another user than the one the service runs as (possibly planted).
    case foreignOwner(path: String, owner: UInt32, service: UInt32)
    case badKey(path: String, problem: String)
    case io(String)

    public var description: String {
        switch self {
        case .directoryMissing(let d): return "signing key directory \(d) does not exist; create a key with: twobits keys generate --dir \(d)"
        case .empty(let d): return "signing key directory \(d) holds no key; create one with: twobits keys generate --dir \(d)"
        case .permissive(let p, let m): return "signing key \(p) has mode \(m), readable by group or others; fix with: chmod 600 \(p)"
        case .directoryWritable(let d, let m):
            return "signing key directory \(d) has mode \(m), writable by group or others, who could plant a key that signs tokens; fix with: chmod 700 \(d)"
        case .foreignOwner(let p, let owner, let service):
            return "signing key \(p) is owned by uid \(owner), not by this service's user (uid \(service)); if you did not put it there, delete it; otherwise fix with: chown \(service) \(p)"
        case .badKey(let p, let problem): return "signing key \(p): \(problem)"
        case .io(let m): return m
        }
    }
}

/// Why the server could not start.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    case invalidAddress(String)
    case cannotListen(host: String, port: UInt16)

    public var description: String {
        switch self {
        case .invalidAddress(let a): return "'\(a)' is not an IPv4 address (use for example 127.0.0.1 or 0.0.0.0)"
        case .cannotListen(let h, let p): return "cannot listen on \(h):\(p) (port in use, or not permitted)"
        }
    }
}

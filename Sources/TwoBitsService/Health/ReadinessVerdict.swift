/// One readiness check's verdict; its text is what `/readyz` answers: "ok", "failed", or "failed: why".
public enum ReadinessVerdict: Sendable, Equatable, CustomStringConvertible {
    case ok
    /// Failed, with why when it can be said publicly (the storage's own text stays in the logs).
    case failed(_ why: String? = nil)

    public var passed: Bool { self == .ok }

    public var description: String {
        switch self {
        case .ok: "ok"
        case .failed(nil): "failed"
        case .failed(let why?): "failed: \(why)"
        }
    }
}

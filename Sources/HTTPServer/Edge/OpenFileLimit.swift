import FoundationEssentials
import Glibc

/// The process's open-file limit (`RLIMIT_NOFILE`), which bounds how many connections can be open.
public struct OpenFileLimit: Sendable, Equatable {
    public let soft: Int
    public let hard: Int

    /// The limits in force now.
    public static var current: OpenFileLimit {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return OpenFileLimit(soft: 1024, hard: 1024) }
        return OpenFileLimit(soft: clamp(limit.rlim_cur), hard: clamp(limit.rlim_max))
    }

    /// Raises the soft limit to the hard one (a slow-client flood should meet the connection caps, not
    /// the file table) and returns the limits now in force.
    @discardableResult
    public static func raiseToHard() -> OpenFileLimit {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == rlim_t.max ? rlim_t(1 << 20) : limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised)
        }
        return current
    }

    private static func clamp(_ value: rlim_t) -> Int { value == rlim_t.max || value > rlim_t(Int32.max) ? Int(Int32.max) : Int(value) }
}

import Locking

/// The key of a loop's own value (`EventLoop.local(for:_:)`), unique for the life of the process.
///
/// An owner's address would not do: a freed owner's address is soon handed to a new object, which would
/// then find the freed owner's value (a closed curl multi handle, for instance) instead of making its own.
public struct LoopLocalKey: Hashable, Sendable {
    private static let issued = Lock<UInt64>(0)
    private let number: UInt64

    /// A key no other `LoopLocalKey()` in this process equals.
    public init() {
        number = Self.issued.withLock { last in
            last += 1
            return last
        }
    }
}

#if canImport(Glibc)
public import Glibc
#elseif canImport(Darwin)
public import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`.
///
/// TwoBits uses this instead of `Synchronization.Mutex` because, on Linux with this toolchain, the
/// standard library's `Mutex` is invisible to ThreadSanitizer: every access it guards is reported as a
/// race, which blinds `make sanitize` exactly where `@unchecked Sendable` types need it. A pthread mutex
/// is what TSan intercepts (the same choice as swift-nio's `NIOLock`). See docs/architecture.md.
///
/// `Sendable` only where `State` is (swift-nio's `NIOLockedValueBox` rule): the lock serialises access to
/// the state, but a value that is not `Sendable` could still escape `withLock` to another thread.
public final class Lock<State> {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var state: State

    public init(_ initial: State) {
        state = initial
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        // Relocking from the same thread is a bug: fail loudly in debug builds instead of deadlocking.
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let rc = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(rc == 0) // pthread_mutex_init failed (the trap names this line; no message closure left untested)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the guarded state.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        let rc = pthread_mutex_lock(mutex)
        precondition(rc == 0) // pthread_mutex_lock failed
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

extension Lock where State == Void {
    /// Runs `body` holding the lock, for a lock that guards state kept elsewhere (a C handle and its
    /// caches). No `inout` access to the empty state: ThreadSanitizer places that access at the object's
    /// own address and would report another thread's (unlocked, harmless) read of the object header as a race.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let rc = pthread_mutex_lock(mutex)
        precondition(rc == 0) // pthread_mutex_lock failed
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

// Unchecked: every access to `state` holds `mutex`, and `State: Sendable` lets what `withLock` returns cross threads.
extension Lock: @unchecked Sendable where State: Sendable {}

import Dispatch
import Foundation
import Locking
import Testing

@Suite struct LockTests {
    /// Many threads incrementing through the lock lose no update.
    @Test func updatesUnderContentionAreNotLost() {
        let counter = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    /// A lock with no state of its own guards state kept elsewhere (as SQLiteConnection's guards its C handle).
    @Test func aLockWithoutStateGuardsStateKeptElsewhere() {
        // Unchecked: every access to `value` holds `lock`, which is what the test checks.
        final class Counter: @unchecked Sendable { var value = 0 }
        let lock = Lock(())
        let counter = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { lock.withLock { counter.value += 1 } }
        }
        #expect(lock.withLock { counter.value } == 80_000)
    }

    /// Typed errors thrown inside the critical section come out unchanged, and the lock is released.
    @Test func throwingBodyReleasesTheLock() {
        struct Refused: Error, Equatable {}
        let lock = Lock([Int]())
        #expect(throws: Refused()) { try lock.withLock { (_: inout [Int]) throws(Refused) in throw Refused() } }
        lock.withLock { $0.append(1) }
        #expect(lock.withLock { $0 } == [1])
    }
}

#if TSAN_PROBE
/// Built only by `make sanitize` (-DTSAN_PROBE) and run on its own: a deliberate data race that
/// ThreadSanitizer must report, proving the sanitizer run can see races at all.
@Suite struct ThreadSanitizerProbe {
    /// Plain memory: no reference counting between the racing writes that could order them.
    // Unchecked, and deliberately unsound: the race ThreadSanitizer must report.
    struct Unguarded: @unchecked Sendable { let pointer: UnsafeMutablePointer<Int> }

    @Test func deliberateRaceIsReported() {
        // Two threads of their own (concurrentPerform may run every iteration on the calling thread when the
        // machine is busy), both alive before either writes (each says it is ready, then waits for "go"),
        // and writing for 200 ms each, so that their writes overlap in time even on a busy machine: TSan
        // reliably reports a race it sees happen, less reliably one whose first thread has already exited.
        let shared = Unguarded(pointer: .allocate(capacity: 1))
        shared.pointer.initialize(to: 0)
        defer { shared.pointer.deallocate() }
        let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            Thread {
                ready.signal()
                go.wait()
                let end = ContinuousClock.now + .milliseconds(200)
                while ContinuousClock.now < end {
                    for _ in 0..<100 { shared.pointer.pointee += 1 }
                }
                done.signal()
            }.start()
        }
        for _ in 0..<2 { ready.wait() }
        for _ in 0..<2 { go.signal() }
        for _ in 0..<2 { done.wait() }
        #expect(shared.pointer.pointee > 0)
    }
}
#endif

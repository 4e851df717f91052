@testable import EventLoops
import Testing

/// Loop-bound state is checked on access: the check's predicate says yes on its loop's thread and no on any
/// other (a debug build traps on the no, which a test cannot survive in process), and the value round-trips.
@Suite struct LoopBoundTests {
    @Test func theAccessCheckAllowsOnlyTheLoopsOwnThread() async {
        let loop = EventLoop(name: "twobits-test-bound")
        let other = EventLoop(name: "twobits-test-other")
        defer { loop.stop(); other.stop() }
        #expect(loop.submitAndWait { EventLoop.loopBoundAccessIsAllowed(on: loop) })
        #expect(!other.submitAndWait { EventLoop.loopBoundAccessIsAllowed(on: loop) })
        #expect(!EventLoop.loopBoundAccessIsAllowed(on: loop)) // the test's own thread
    }

    @Test func aBoundValueIsReadAndWrittenOnItsLoop() {
        let loop = EventLoop(name: "twobits-test-bound")
        defer { loop.stop() }
        // Bound off the loop (as a daemon's state is), then used on it.
        let bound = LoopBound([1], loop: loop)
        let seen = loop.submitAndWait { () -> [Int] in
            var copy = bound
            copy.value.append(2)
            return copy.value
        }
        #expect(seen == [1, 2])
        #expect(bound.loop === loop)
    }
}

#if DEBUG
extension LoopBoundTests {
    /// The trap itself, in a child process (a Swift Testing exit test): a read off the loop ends the process.
    @Test func aReadOffTheLoopTrapsInDebugBuilds() async {
        await #expect(processExitsWith: .failure) {
            let loop = EventLoop(name: "twobits-test-bound")
            let bound = LoopBound(0, loop: loop)
            _ = bound.value
        }
    }
}
#endif

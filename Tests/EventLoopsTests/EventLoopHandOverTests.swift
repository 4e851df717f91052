@testable import EventLoops
import Foundation
import Locking
import Testing

/// Work another thread hands to a loop inside `handOverTogether` (the ledger thread resuming a batch's callers)
/// reaches the loop as one hand-over when the body returns: none of it runs before, all of it in the order handed.
@Suite struct EventLoopHandOverTests {
    @Test func workHandedOverTogetherReachesTheLoopAllAtOnceWhenTheBodyReturns() async {
        let loop = EventLoop(name: "hand-over-together")
        defer { loop.stop() }
        let ran = Lock<[Int]>([])
        let seenInsideBody = Lock<[Int]?>(nil)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.handOverTogether {
                for i in 0..<10 {
                    loop.execute { ran.withLock { $0.append(i) } }
                }
                // A task preferring the loop, resumed from here, is handed over with the closures.
                Task(executorPreference: loop) { ran.withLock { $0.append(10) } }
                // The loop is idle and would run anything handed to it at once: give it time to (wrongly) do so.
                usleep(100_000)
                seenInsideBody.withLock { $0 = ran.withLock { $0 } }
                loop.execute { done.resume() }
            }
        }
        #expect(seenInsideBody.withLock { $0 } == [], "nothing reached the loop before the body returned")
        #expect(ran.withLock { $0 } == Array(0...10), "all of it ran, in the order handed")
    }

    /// Work handed to another loop inside the body goes to that loop as usual.
    @Test func workForAnotherLoopIsNotHeldBack() async {
        let loop = EventLoop(name: "hand-over-together")
        let other = EventLoop(name: "hand-over-other")
        defer { loop.stop(); other.stop() }
        let ranOnOther = Lock(false)
        loop.handOverTogether {
            other.execute { ranOnOther.withLock { $0 = true } }
            for _ in 0..<500 where !ranOnOther.withLock({ $0 }) { usleep(10_000) }
        }
        #expect(ranOnOther.withLock { $0 })
    }
}

@testable import EventLoops
import Foundation
import Locking
import Testing

/// A loop that woke for a few events waits a moment and takes what else became ready (`EventLoop.merge`):
/// a descriptor reported in both reads is served once, with both readinesses; nothing is lost.
@Suite struct EventLoopCoalescingTests {
    @Test func aDescriptorReportedTwiceIsServedOnceWithBothReadinesses() {
        var fds: [Int32] = [3, 5, 5, 7, 3, 0, 0]
        var flags: [Int32] = [1, 1, 2, 1, 2, 0, 0]
        let count = EventLoop.merge(&fds, &flags, first: 2, more: 3)
        #expect(count == 3)
        #expect(Array(fds[0..<3]) == [3, 5, 7])
        #expect(Array(flags[0..<3]) == [3, 3, 1])
    }

    @Test func nothingMoreLeavesTheBatchAsItWas() {
        var fds: [Int32] = [9, 4]
        var flags: [Int32] = [2, 1]
        #expect(EventLoop.merge(&fds, &flags, first: 2, more: 0) == 2)
        #expect(fds == [9, 4] && flags == [2, 1])
    }

    /// A quiet loop stops pausing once its pauses gather nothing, probes now and then, and pauses again on
    /// every sparse wake as soon as a pause gathers something.
    @Test func pausesStopWhileTheyGatherNothingAndResumeWhenOneDoes() {
        var policy = WakeCoalescing()
        for _ in 0..<WakeCoalescing.fruitlessLimit {
            let pause = policy.shouldPause()
            #expect(pause)
            policy.paused(gathered: 0)
        }
        #expect(!policy.pausing)
        // One probe in `probeEvery` sparse wakes.
        let decisions = (0..<(3 * WakeCoalescing.probeEvery)).map { _ -> Bool in
            let pause = policy.shouldPause()
            if pause { policy.paused(gathered: 0) }
            return pause
        }
        #expect(decisions.filter { $0 }.count == 3)
        #expect(decisions[WakeCoalescing.probeEvery - 1] && !decisions[0])
        // The next probe gathers an event: every sparse wake pauses again.
        var probed = false
        for _ in 0..<WakeCoalescing.probeEvery where !probed { probed = policy.shouldPause() }
        #expect(probed)
        policy.paused(gathered: 2)
        #expect(policy.pausing)
        var paused = 0
        for _ in 0..<10 where policy.shouldPause() { paused += 1 }
        #expect(paused == 10)
    }

    /// One fruitless pause among gathering ones does not stop the pausing.
    @Test func aFewFruitlessPausesInARowDoNotStopThePausing() {
        var policy = WakeCoalescing()
        for round in 0..<100 {
            let pause = policy.shouldPause()
            #expect(pause, "round \(round)")
            policy.paused(gathered: round % WakeCoalescing.fruitlessLimit == 0 ? 1 : 0)
        }
    }

    /// Through a real loop: two pipes written 50 µs apart, while the loop is asleep in its wait, are both
    /// served, each once per write.
    @Test func eventsArrivingWhileTheLoopWaitsForMoreAreEachServedOnce() async throws {
        let loop = EventLoop(name: "coalescing-test", coalescingMicroseconds: 200)
        var a: [Int32] = [0, 0], b: [Int32] = [0, 0]
        #expect(pipe(&a) == 0 && pipe(&b) == 0)
        defer {
            loop.stop()
            for fd in a + b { close(fd) }
        }
        for fd in [a[0], b[0]] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        let served = Counter()
        let readEnds = [a[0], b[0]]
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            loop.execute {
                for fd in readEnds {
                    loop.watch(fd, for: .read) { _ in
                        var byte: UInt8 = 0
                        while read(fd, &byte, 1) == 1 { served.add(fd) }
                    }
                }
                done.resume()
            }
        }
        for round in 0..<20 {
            var one: UInt8 = 1
            _ = write(a[1], &one, 1)
            usleep(50)
            _ = write(b[1], &one, 1)
            // Until both are served (a busy machine may not run the loop for a while), then a moment more for
            // a second serving to show.
            let deadline = ContinuousClock.now + .seconds(10)
            while served.count(a[0]) < round + 1 || served.count(b[0]) < round + 1, ContinuousClock.now < deadline { usleep(100) }
            usleep(1_000)
            #expect(served.count(a[0]) == round + 1 && served.count(b[0]) == round + 1, "round \(round)")
        }
    }
}

extension EventLoopCoalescingTests {
    /// Through a real loop: wakes for one descriptor at a time, each served alone, stop the pausing. The
    /// descriptor being woken for is still readable during the pause (level-triggered, not yet served) and is
    /// reported again; that is not an event gathered.
    @Test func aLoopWhosePausesGatherNothingStopsPausing() async throws {
        let loop = EventLoop(name: "coalescing-quiet", coalescingMicroseconds: 500)
        var p: [Int32] = [0, 0]
        #expect(pipe(&p) == 0)
        defer {
            loop.stop()
            for fd in p { close(fd) }
        }
        _ = fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK)
        let served = Counter()
        let readEnd = p[0]
        loop.submitAndWait {
            loop.watch(readEnd, for: .read) { _ in
                var byte: UInt8 = 0
                while read(readEnd, &byte, 1) == 1 { served.add(readEnd) }
            }
        }
        #expect(loop.submitAndWait { loop.pausesSparseWakes })
        for round in 0..<(2 * WakeCoalescing.fruitlessLimit) {
            var one: UInt8 = 1
            _ = write(p[1], &one, 1)
            let deadline = ContinuousClock.now + .seconds(10)
            while served.count(readEnd) < round + 1, ContinuousClock.now < deadline { usleep(200) }
            usleep(3_000) // the loop back in its blocking wait
        }
        #expect(!loop.submitAndWait { loop.pausesSparseWakes })
    }
}

private final class Counter: Sendable {
    private let counts = Lock<[Int32: Int]>([:])
    func add(_ fd: Int32) { counts.withLock { $0[fd, default: 0] += 1 } }
    func count(_ fd: Int32) -> Int { counts.withLock { $0[fd, default: 0] } }
}

import Locking
import Mechanisms
import Testing

/// The bounded retry queue alone: oldest first, stops at the first failure, bounded, one retry at a time.
@Suite struct RetryQueueTests {
    struct Refused: Error {}

    @Test func itemsAreSavedOldestFirstAndARetryStopsAtTheFirstFailure() async {
        let queue = RetryQueue<Int>(limit: 10)
        for item in 1...4 { #expect(queue.keep(item)) }
        let saved = Lock<[Int]>([])
        await queue.retry { item in
            guard item != 3 else { throw Refused() }
            saved.withLock { $0.append(item) }
        }
        #expect(saved.withLock { $0 } == [1, 2], "stopped at 3, which stays, with 4 behind it")
        #expect(queue.count == 2)
        await queue.retry { item in saved.withLock { $0.append(item) } }
        #expect(saved.withLock { $0 } == [1, 2, 3, 4])
        #expect(queue.count == 0)
    }

    @Test func anEmptyQueueCallsNothing() async {
        let queue = RetryQueue<Int>(limit: 1)
        let calls = Lock(0)
        await queue.retry { _ in calls.withLock { $0 += 1 } }
        #expect(calls.withLock { $0 } == 0)
    }

    @Test func pastItsLimitItKeepsNothingMore() {
        let queue = RetryQueue<String>(limit: 2)
        #expect(queue.keep("a") && queue.keep("b"))
        #expect(!queue.keep("c"))
        #expect(queue.count == 2)
    }

    @Test func oneRetryAtATimeAndWhatIsKeptMeanwhileWaitsForTheNext() async {
        let queue = RetryQueue<Int>(limit: 10)
        #expect(queue.keep(1))
        let saved = Lock<[Int]>([])
        let (entered, enteredSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let first = Task {
            await queue.retry { item in
                enteredSignal.yield()
                for await _ in release { break }
                saved.withLock { $0.append(item) }
            }
        }
        // Bounded: a queue that hands the first retry nothing must fail here, not hang.
        let waiting = Task { for await _ in entered { return true }; return false }
        let timeout = Task {
            guard (try? await Task.sleep(for: .seconds(5))) != nil else { return }
            enteredSignal.finish()
            releaseSignal.yield()
        }
        guard await waiting.value else {
            Issue.record("the first retry never saved item 1")
            return
        }
        timeout.cancel()
        // The first retry holds item 1: a second one returns at once, saving nothing.
        #expect(queue.keep(2))
        await queue.retry { item in saved.withLock { $0.append(item * 100) } }
        #expect(saved.withLock { $0 }.isEmpty)
        releaseSignal.yield()
        await first.value
        #expect(saved.withLock { $0 } == [1], "the first retry saved what it took, not what came after")
        #expect(queue.count == 1)
        await queue.retry { item in saved.withLock { $0.append(item) } }
        #expect(saved.withLock { $0 } == [1, 2] && queue.count == 0)
    }
}

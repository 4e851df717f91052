@testable import AppleDeviceCheckClient
import Testing

/// The client's queue of calls waiting for a slot under `maxInFlight`: a caller that is cancelled while it
/// waits leaves the queue at once, so the slot it would have been handed goes to a caller still waiting.
@Suite struct InFlightLimiterTests {
    @Test func aCancelledWaiterLeavesTheQueueAndGetsCancellationError() async throws {
        let limiter = InFlightLimiter(limit: 1)
        #expect(try await limiter.acquire(timeoutMilliseconds: 0))
        let waiter = Task { try await limiter.acquire(timeoutMilliseconds: 60_000) }
        while limiter.waiting == 0 { try await Task.sleep(for: .milliseconds(1)) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(limiter.waiting == 0)
        // The slot given back finds no waiter: the next caller takes it without waiting.
        limiter.release()
        #expect(try await limiter.acquire(timeoutMilliseconds: 0))
    }

    @Test func aCallerCancelledBeforeItWaitsIsNeverQueued() async throws {
        let limiter = InFlightLimiter(limit: 1)
        #expect(try await limiter.acquire(timeoutMilliseconds: 0))
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await limiter.acquire(timeoutMilliseconds: 60_000)
        }
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(limiter.waiting == 0)
    }

    @Test func aWaiterGetsTheSlotGivenBackOrTimesOut() async throws {
        let limiter = InFlightLimiter(limit: 1)
        #expect(try await limiter.acquire(timeoutMilliseconds: 0))
        let waiter = Task { try await limiter.acquire(timeoutMilliseconds: 60_000) }
        while limiter.waiting == 0 { try await Task.sleep(for: .milliseconds(1)) }
        limiter.release()
        #expect(try await waiter.value)
        #expect(try await limiter.acquire(timeoutMilliseconds: 1) == false)
        #expect(limiter.waiting == 0)
    }
}

import Mechanisms
import Testing

@Suite("Token bucket arithmetic")
struct TokenBucketTests {
    @Test func aFullBucketGivesItsBurstThenRefusesWithTheWaitForOneToken() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 3, now: 0)
        #expect(bucket.take(1, now: 0) == nil)
        #expect(bucket.take(1, now: 0) == nil)
        #expect(bucket.take(1, now: 0) == nil)
        // Empty: one token takes 1/2 s at 2 per second.
        #expect(bucket.take(1, now: 0) == 0.5)
        #expect(bucket.tokens == 0)
    }

    @Test func refillIsProportionalToElapsedTimeAndCappedAtTheBurst() {
        var bucket = TokenBucket(ratePerSecond: 4, burst: 10, now: 0)
        for _ in 0..<10 { #expect(bucket.take(1, now: 0) == nil) }
        bucket.refill(now: 0.5)
        #expect(bucket.tokens == 2)
        bucket.refill(now: 0.75)
        #expect(bucket.tokens == 3)
        bucket.refill(now: 100)
        #expect(bucket.tokens == 10)
        // A clock that steps back adds nothing and takes nothing.
        bucket.refill(now: 50)
        #expect(bucket.tokens == 10 && bucket.updatedAt == 100)
    }

    @Test func aFractionalRateRefillsSlowly() {
        var bucket = TokenBucket(ratePerSecond: 0.1, burst: 1, now: 0)
        #expect(bucket.take(1, now: 0) == nil)
        let wait = bucket.take(1, now: 4)
        #expect(wait.map { abs($0 - 6) < 1e-9 } == true, "\(String(describing: wait))")
        #expect(bucket.take(1, now: 10) == nil)
    }

    @Test func aCostAboveTheCapacityCountsAsTheCapacity() {
        var bucket = TokenBucket(ratePerSecond: 1, burst: 2, now: 0)
        #expect(bucket.take(3, now: 0) == nil)
        #expect(bucket.tokens == 0)
        #expect(bucket.secondsUntilAvailable(3) == 2)
    }

    @Test func aWallClockThatStepsBackRestartsTheCountFromTheEarlierTime() {
        var bucket = TokenBucket(ratePerSecond: 2, burst: 4, now: 100)
        #expect(bucket.take(4, now: 100) == nil)
        bucket.refill(onWallClock: 40)
        #expect(bucket.tokens == 0 && bucket.updatedAt == 40, "nothing added, counted from the earlier time")
        bucket.refill(onWallClock: 41)
        #expect(bucket.tokens == 2, "one second after the step, not after the clock caught up")
        // The monotonic refill would have waited for 100 again.
        var monotonic = TokenBucket(ratePerSecond: 2, burst: 4, now: 100)
        #expect(monotonic.take(4, now: 100) == nil)
        monotonic.refill(now: 40)
        monotonic.refill(now: 41)
        #expect(monotonic.tokens == 0)
    }

    @Test func takeWholeTakesEveryWholeTokenAndAHairUnderOneCounts() {
        var bucket = TokenBucket(ratePerSecond: 5, burst: 5, now: 0)
        #expect(bucket.takeWhole() == 5)
        #expect(bucket.takeWhole() == 0, "empty: nothing taken")
        bucket.refill(now: 0.1)
        #expect(bucket.takeWhole() == 0 && bucket.tokens > 0.49, "half a token is none, and stays")
        bucket.refill(now: 0.5)
        bucket.giveBack(-3)
        #expect(bucket.takeWhole() == 2 && abs(bucket.tokens - 0.5) < 1e-9, "2.5 tokens give 2, a negative give-back is none")
        // 0.4 s at 5 a second is 2 tokens up to the float's error.
        var hair = TokenBucket(ratePerSecond: 5, burst: 5, now: 1_000_000_000.1)
        #expect(hair.takeWhole() == 5)
        hair.refill(now: 1_000_000_000.5)
        #expect(hair.takeWhole() == 2)
    }

    @Test func giveBackNeverExceedsTheCapacity() {
        var bucket = TokenBucket(ratePerSecond: 1, burst: 3, now: 0)
        #expect(bucket.take(2, now: 0) == nil)
        bucket.giveBack(1)
        #expect(bucket.tokens == 2)
        bucket.giveBack(10)
        #expect(bucket.tokens == 3)
    }
}

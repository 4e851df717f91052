import Mechanisms
import Testing

@Suite struct ExponentialBackoffTests {
    @Test func theCeilingDoublesPerFailureUpToTheMaximum() {
        let backoff = ExponentialBackoff(base: .seconds(30), maximum: .seconds(200), jitter: .equal)
        #expect((1...5).map { backoff.ceiling(afterFailures: $0) } == [.seconds(30), .seconds(60), .seconds(120), .seconds(200), .seconds(200)])
        #expect(backoff.ceiling(afterFailures: 0) == .seconds(30), "no failure counts as the first")
        #expect(backoff.ceiling(afterFailures: 10_000) == .seconds(200), "a long run neither overflows nor passes the cap")
    }

    @Test func equalJitterWaitsAtLeastHalf() {
        let backoff = ExponentialBackoff(base: .seconds(30), maximum: .seconds(200), jitter: .equal)
        #expect(backoff.delay(afterFailures: 1, random: 0) == .seconds(15))
        #expect(backoff.delay(afterFailures: 1, random: 1) == .seconds(30))
        #expect(backoff.delay(afterFailures: 2, random: 0.5) == .seconds(45))
        #expect(backoff.delay(afterFailures: 1, random: -3) == .seconds(15), "clamped to [0, 1]")
        #expect(backoff.delay(afterFailures: 1, random: 7) == .seconds(30))
    }

    @Test func fullJitterWaitsAnythingUpToTheCeiling() {
        let backoff = ExponentialBackoff(base: .milliseconds(50), maximum: .milliseconds(1_000), jitter: .full)
        #expect(backoff.delay(afterFailures: 1, random: 0) == .zero)
        #expect(backoff.delay(afterFailures: 3, random: 1) == .milliseconds(200))
        #expect(backoff.delay(afterFailures: 3, random: 0.5) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 6, random: 1) == .milliseconds(1_000))
    }
}

import Mechanisms
import Testing

@Suite struct DurationConversionsTests {
    @Test func wholeUnitsTruncateTheFraction() {
        let d = Duration.seconds(2) + .nanoseconds(1_500_999)
        #expect(d.wholeNanoseconds == 2_001_500_999)
        #expect(d.wholeMilliseconds == 2_001)
        #expect(Duration.nanoseconds(999_999).wholeMilliseconds == 0)
        #expect(Duration.seconds(1) / 3 > .zero && (Duration.seconds(1) / 3).wholeNanoseconds == 333_333_333)
        #expect(Duration.milliseconds(-1_500).wholeMilliseconds == -1_500)
    }

    @Test func fractionalUnitsKeepTheFraction() {
        #expect(Duration.milliseconds(1_500).inSeconds == 1.5)
        #expect(Duration.microseconds(1_250).inMilliseconds == 1.25)
        #expect(Duration.seconds(3).inMilliseconds == 3_000)
        #expect(Duration.zero.inSeconds == 0)
    }
}

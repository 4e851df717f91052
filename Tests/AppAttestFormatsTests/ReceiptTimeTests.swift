import AppAttestFormats
import Foundation
import Testing

/// Receipt times: RFC 3339 UTC with 0 to 9 fraction digits (Apple drops trailing zeros of the milliseconds), and
/// nothing else.
@Suite("Receipt times")
struct ReceiptTimeTests {
    static let second = 1_614_834_367.0  // 2021-03-04T05:06:07Z

    func parse(_ text: String) -> Date? { ReceiptTime.parse(Data(text.utf8)) }

    @Test func applesMillisecondsParseAndFormatBack() {
        #expect(parse("2021-03-04T05:06:07.089Z") == Date(timeIntervalSince1970: Self.second + 0.089))
        #expect(ReceiptTime.format(Date(timeIntervalSince1970: Self.second + 0.089)) == "2021-03-04T05:06:07.089Z")
    }

    @Test(arguments: [
        ("2021-03-04T05:06:07Z", 0.0), ("2021-03-04T05:06:07.5Z", 0.5), ("2021-03-04T05:06:07.54Z", 0.54),
        ("2021-03-04T05:06:07.540Z", 0.54), ("2021-03-04T05:06:07.123456789Z", 0.123456789), ("2021-03-04T05:06:07.000000000Z", 0),
    ])
    func zeroToNineFractionDigitsAreAccepted(text: String, fraction: Double) throws {
        let date = try #require(parse(text), "\(text)")
        #expect(abs(date.timeIntervalSince1970 - (Self.second + fraction)) < 1e-6, "\(text)")
    }

    @Test func aTimeWithTrailingZerosDroppedIsTheSameInstant() {
        // The form seen in a genuine receipt, and Apple's usual one for the same instant.
        #expect(parse("2020-10-03T09:13:53.54Z") == parse("2020-10-03T09:13:53.540Z"))
        #expect(parse("2020-10-03T09:13:53.5Z") == parse("2020-10-03T09:13:53.500Z"))
    }

    @Test(arguments: [
        "2021-03-04T05:06:07.0123456789Z",  // ten fraction digits
        "2021-03-04T05:06:07.Z",  // a dot with no digit
        "2021-03-04T05:06:07.089z", "2021-03-04T05:06:07z",  // lowercase z
        "2021-03-04T05:06:07.089+00:00", "2021-03-04T05:06:07+00:00", "2021-03-04T05:06:07.089", "2021-03-04T05:06:07",  // offsets, no zone
        "2021-03-04T05:06Z", "2021-03-04T05:06:7Z", "2021-03-04Z", "2021-03-04T05:06:07.08aZ", "2021-03-04T05:06:07,089Z",  // missing or bad parts
        "2021-03-04 05:06:07.089Z", "2021-03-04t05:06:07.089Z", "2021-13-04T05:06:07.089Z", "2021-03-04T24:06:07.089Z",
        "2021-03-04T05:60:07Z", "2021-03-04T05:06:60Z", "2021-02-29T05:06:07Z", "+021-03-04T05:06:07.089Z", "",
    ])
    func everythingElseIsRefused(text: String) {
        #expect(parse(text) == nil, "\(text)")
    }
}

import DeviceCheck
import Foundation
import Testing

/// `YearMonth` as JSON: the `YYYY-MM` string Apple uses, refused when it is anything else.
@Suite struct YearMonthCodingTests {
    @Test func encodesAsTheAppleStringAndDecodesBack() throws {
        let months = [YearMonth(year: 2024, month: 1)!, YearMonth(year: 1999, month: 12)!]
        let data = try JSONEncoder().encode(months)
        #expect(String(decoding: data, as: UTF8.self) == #"["2024-01","1999-12"]"#)
        #expect(try JSONDecoder().decode([YearMonth].self, from: data) == months)
    }

    @Test func refusesAnythingButYYYYMM() {
        for bad in [#""2024-13""#, #""2024-1""#, #""24-01""#, #""2024/01""#, "202401", "null"] {
            #expect(throws: DecodingError.self, "\(bad)") { try JSONDecoder().decode(YearMonth.self, from: Data(bad.utf8)) }
        }
        #expect(YearMonth(year: 2024, month: 0) == nil)
        #expect(YearMonth(year: 2024, month: 13) == nil)
    }

    @Test func monthArithmeticCrossesYears() {
        let january = YearMonth(year: 2025, month: 1)!
        #expect(january.adding(months: -1) == YearMonth(year: 2024, month: 12)!)
        #expect(january.adding(months: -25) == YearMonth(year: 2022, month: 12)!)
        #expect(january.adding(months: 23) == YearMonth(year: 2026, month: 12)!)
        #expect(january.adding(months: -25).months(since: january) == -25)
    }
}

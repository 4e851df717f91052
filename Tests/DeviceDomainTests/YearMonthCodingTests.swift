import DeviceDomain
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

    /// The month of an instant, at every month's first second and the half second before it, 1900-2400
    /// (before 1970, leap days, the 2100 non-leap year), against Foundation's Gregorian calendar in UTC.
    @Test func theMonthOfAnInstantChangesExactlyAtEachMonthsFirstSecond() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        // Compared as (year, month): `YearMonth(year:month:)` refuses years before 1970.
        func monthOf(_ date: Date) -> [Int] { let m = YearMonth(containingSecondsSince1970: date.timeIntervalSince1970); return [m.year, m.month] }
        var previous = [1899, 12]
        for year in 1900...2400 {
            for month in 1...12 {
                let start = calendar.date(from: DateComponents(year: year, month: month, day: 1))!
                let expected = [year, month]
                #expect(monthOf(start) == expected, "\(start)")
                #expect(monthOf(start.addingTimeInterval(-0.5)) == previous, "\(start) - 0.5 s")
                #expect(monthOf(start.addingTimeInterval(14 * 86_400 + 0.25)) == expected, "\(start) + 14 days")
                previous = expected
            }
        }
    }
}

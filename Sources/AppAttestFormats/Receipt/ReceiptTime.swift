public import FoundationEssentials

/// The receipts' time format: RFC 3339 in UTC, `YYYY-MM-DDTHH:MM:SS[.f]Z` (ASCII), and nothing else. Apple
/// writes milliseconds but drops trailing zeros (`…:53.54Z` was seen in a genuine receipt), so the fraction
/// may have 0 to 9 digits, or be absent.
public enum ReceiptTime {
    /// The most fraction digits accepted: nanoseconds, RFC 3339's practical limit.
    public static let maxFractionDigits = 9

    /// Parses exactly that form; nil for anything else (another length, a missing part, a day that does not exist).
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Date? {
        let b = Array(bytes)
        // 20 bytes without a fraction; with one, a dot and 1-9 digits before the Z.
        guard b.count == 20 || (22...21 + maxFractionDigits).contains(b.count), b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[b.count - 1] == UInt8(ascii: "Z"),
              b.count == 20 || b[19] == UInt8(ascii: ".") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[index]) else { return nil }
                value = value * 10 + Int(b[index] - UInt8(ascii: "0"))
            }
            return value
        }
        let fractionDigits = max(0, b.count - 21)
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19), let fraction = number(20..<20 + fractionDigits),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
        var scale = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(fraction) / TimeInterval(scale))
    }

    /// Formats a date in that form (milliseconds truncated).
    public static func format(_ date: Date) -> String {
        let totalMilliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        let milliseconds = ((totalMilliseconds % 1000) + 1000) % 1000
        let seconds = (totalMilliseconds - milliseconds) / 1000
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        func pad(_ n: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(milliseconds, 3))Z"
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

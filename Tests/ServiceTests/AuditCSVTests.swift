import Testing
@testable import TwoBitsService

/// CSV cells: quoted per RFC 4180, formulas defused for spreadsheets.
@Suite struct AuditCSVTests {
    @Test(arguments: [
        ("plain", "plain"), ("", ""), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\""),
        ("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("=a,b", "\"'=a,b\""),
        ("a=b", "a=b"),
    ])
    func cells(_ value: String, _ expected: String) {
        #expect(AuditCSV.cell(value) == expected)
    }
}

import FoundationEssentials
import Ledger
import PostgresLedger
import SQLiteLedger
import TwoBitsService

/// `twobits ledger copy --from FILE --to URL [--replace]`: moves a SQLite ledger into PostgreSQL in one
/// transaction, then prints the rows of each table in both and fails when any count differs. A target
/// holding any ledger row is refused unless `--replace` (which empties it first).
enum LedgerCommand {
    static let usage = "usage: twobits ledger copy --from FILE --to postgresql://… [--replace]"

    static func run(_ raw: [String]) throws -> Int32 {
        var args = try Arguments(raw, switches: ["replace"])
        guard args.positional == ["copy"] else { throw UsageError(usage) }
        let from = try args.required("from")
        let to = try args.required("to")
        let replace = args.flag("replace")
        try args.rejectUnknown()
        guard case .postgres = try DatabaseLocation(to) else { throw UsageError("--to must be a PostgreSQL URI (postgresql://…) or keyword/value connection string") }
        // Opening a missing path would create an empty ledger and copy nothing.
        guard FileManager.default.fileExists(atPath: from) else { throw UsageError("no SQLite ledger at \(from)") }

        let tables = try SQLiteLedger(path: from).exportTables()
        let target = try PostgresLedger(uri: to, poolSize: 1)
        defer { target.close() }
        _ = try target.importTables(tables, replacingExisting: replace)
        let source = tables.counts
        let copied = try target.tableCounts()

        let width = LedgerTables.tableNames.map(\.count).max() ?? 0
        print("table".padded(to: width) + "     source     target")
        var differ: [String] = []
        for name in LedgerTables.tableNames {
            let a = source[name] ?? 0
            let b = copied[name] ?? 0
            if a != b { differ.append(name) }
            print(name.padded(to: width) + " "
                  + pad(a) + pad(b) + (a == b ? "" : "   DIFFERS"))
        }
        if !differ.isEmpty {
            printError("twobits ledger copy: counts differ in \(differ.joined(separator: ", "))")
            return 1
        }
        print("copied: every count matches")
        return 0
    }

    private static func pad(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(1, 11 - s.count)) + s
    }
}

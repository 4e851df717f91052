import FoundationEssentials
import Ledger
import PostgresLedger
import SQLiteLedger
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// `twobits ledger copy --from FILE --to URL [--replace]`: moves a SQLite ledger into PostgreSQL in one
/// transaction, exactly or not at all (a value either side cannot hold as it is, or any value read back
/// different, refuses the copy naming table, column and row), then prints each table's rows and SHA-256 on
/// both sides. A target holding any ledger row is refused unless `--replace` (which empties it first).
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
        // Refuses what it cannot copy exactly and compares every value read back before it commits.
        let copied = try target.importTables(tables, replacingExisting: replace)
        let counts = try target.tableCounts()

        // Each side's digest is computed here from its own rows, the target's as read back: equal digests say
        // the values, not only the counts, arrived.
        let width = LedgerTables.tableNames.map(\.count).max() ?? 0
        print("table".padded(to: width) + "     source     target  SHA-256 of the rows (source; target when it differs)")
        var differ: [String] = []
        for name in LedgerTables.tableNames {
            let source = tables.tables.first { $0.name == name }
            let back = copied.tables.first { $0.name == name }
            let a = source?.rows.count ?? 0
            let b = counts[name] ?? 0
            let sourceDigest = source.map { digest($0.canonicalForm) } ?? "-"
            let targetDigest = back.map { digest($0.canonicalForm) } ?? "-"
            let same = a == b && sourceDigest == targetDigest
            if !same { differ.append(name) }
            print(name.padded(to: width) + " " + pad(a) + pad(b) + "  " + sourceDigest + (same ? "" : "  " + targetDigest + "  DIFFERS"))
        }
        if !differ.isEmpty {
            printError("twobits ledger copy: rows or values differ in \(differ.joined(separator: ", "))")
            return 1
        }
        print("copied: every row count and every table's SHA-256 match")
        return 0
    }

    private static func digest(_ bytes: Data) -> String { SHA256Digest.hash(bytes).hexString }

    private static func pad(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(1, 11 - s.count)) + s
    }
}

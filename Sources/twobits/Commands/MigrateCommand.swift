import FoundationEssentials
import PostgresLedger
import SQLiteLedger
import TwoBitsService

/// `twobits migrate --database URL`: applies the pending schema steps and says which versions it went
/// between. Replicas also migrate at start-up (once, under an advisory lock); this runs it on purpose,
/// before a rollout. A SQLite file is migrated the same way as when it is opened.
enum MigrateCommand {
    static func run(_ raw: [String]) throws -> Int32 {
        var args = try Arguments(raw)
        let database = try args.required("database", env: "TWOBITS_DATABASE")
        try args.rejectUnknown()
        let versions: (from: Int, to: Int)
        switch try DatabaseLocation(database) {
        case .postgres(let uri):
            versions = try PostgresLedger.migrate(uri: uri)
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else { throw UsageError("no SQLite ledger at \(path)") }
            let before = try SQLiteConnection(path: path).query("PRAGMA user_version").first?.int("user_version") ?? 0
            versions = (before, try SQLiteLedger(path: path).schemaVersion)
        }
        print("schema version \(versions.from) → \(versions.to)")
        return 0
    }
}

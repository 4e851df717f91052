import FoundationEssentials
import PostgresLedger
import SQLiteLedger

/// `twobits migrate --database URL`: applies the pending schema steps and says which versions it went
/// between. Replicas also migrate at start-up (once, under an advisory lock); this runs it on purpose,
/// before a rollout. A SQLite file is migrated the same way as when it is opened.
enum MigrateCommand {
    static func run(_ raw: [String]) throws -> Int32 {
        var args = try Arguments(raw)
        let database = try args.required("database", env: "TWOBITS_DATABASE")
        try args.rejectUnknown()
        let versions: (from: Int, to: Int)
        if database.hasPrefix("postgres://") || database.hasPrefix("postgresql://") {
            versions = try PostgresLedger.migrate(uri: database)
        } else {
            guard FileManager.default.fileExists(atPath: database) else { throw UsageError("no SQLite ledger at \(database)") }
            let before = try SQLiteConnection(path: database).query("PRAGMA user_version").first?.int("user_version") ?? 0
            versions = (before, try SQLiteLedger(path: database).schemaVersion)
        }
        print("schema version \(versions.from) → \(versions.to)")
        return 0
    }
}

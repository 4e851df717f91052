public import FoundationEssentials

/// A whole ledger as plain values, for `twobits ledger copy`: one backend exports it, another imports it.
public struct LedgerTables: Sendable, Equatable {
    /// One cell, typed as SQLite stores it.
    public enum Cell: Sendable, Equatable {
        case null
        case integer(Int64)
        case text(String)
        case blob(Data)
    }

    public struct Table: Sendable, Equatable {
        public var name: String
        public var columns: [String]
        public var rows: [[Cell]]
        /// The source's rowid of each row, to name a row that cannot be copied; empty when read from PostgreSQL.
        public var rowIDs: [Int64]

        public init(name: String, columns: [String], rows: [[Cell]], rowIDs: [Int64] = []) {
            self.name = name
            self.columns = columns
            self.rows = rows
            self.rowIDs = rowIDs
        }

        /// How a refusal names row `index`: its rowid when known.
        public func rowName(_ index: Int) -> String {
            index < rowIDs.count ? "rowid \(rowIDs[index])" : "row \(index + 1)"
        }
    }

    /// The tables a ledger copy moves, in an order that keeps references valid (audit events before the
    /// write intents that point at them). `health_probe` holds nothing worth moving.
    public static let tableNames = ["audit_events", "write_intents", "idempotency_keys", "pending_actions", "device_token_uses",
                                    "consumed_token_ids", "debug_secrets", "key_activations", "app_attest_challenges", "app_attest_keys",
                                    "app_attest_risk_history", "statistics"]

    public var tables: [Table]

    public init(tables: [Table]) { self.tables = tables }

    /// Rows per table.
    public var counts: [String: Int] {
        Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0.rows.count) })
    }
}

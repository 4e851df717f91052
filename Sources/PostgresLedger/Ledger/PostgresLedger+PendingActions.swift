public import Ledger

extension PostgresLedger {
    public func orderPendingAction(_ action: PendingDeviceAction, audit: AuditEvent) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.transaction { tx throws(PostgresError) in
                try Self.setPendingAction(action, in: tx)
                try tx.query("INSERT INTO audit_events (\(Self.auditColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", Self.values(audit))
            }
        }
    }

    private static func setPendingAction(_ action: PendingDeviceAction, in db: PostgresConnection) throws(PostgresError) {
        try db.query("""
            INSERT INTO pending_actions (install_id, kind, reason, client, created_ms) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (install_id) DO UPDATE SET kind = excluded.kind, reason = excluded.reason, client = excluded.client, created_ms = excluded.created_ms,
                claimed_by = NULL
            """, [.text(action.installID), .text(action.kind.rawValue), .optional(action.reason), .text(action.client), .ms(action.createdAt)])
    }

    public func pendingActions() async throws(StorageError) -> [PendingDeviceAction] {
        try await run { db throws(PostgresError) in try db.query("SELECT * FROM pending_actions ORDER BY created_ms DESC") }.records(PendingDeviceAction.init(row:))
    }

    public func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? {
        try await run { db throws(PostgresError) in try db.query("SELECT * FROM pending_actions WHERE install_id = $1", [.text(installID)]) }
            .records(PendingDeviceAction.init(row:)).first
    }

    public func removePendingAction(installID: String) async throws(StorageError) {
        try await run { db throws(PostgresError) in try db.query("DELETE FROM pending_actions WHERE install_id = $1", [.text(installID)]) }
    }

    /// `FOR UPDATE` serialises racing replicas: the second waits for the first's commit, then finds no row.
    public func withdrawPendingAction(installID: String,
                                      audit: @escaping @Sendable (PendingDeviceAction) -> AuditEvent) async throws(StorageError) -> PendingDeviceAction? {
        try await run { db throws(PostgresError) -> PendingDeviceAction? in
            try db.transaction { tx throws(PostgresError) -> PendingDeviceAction? in
                let rows = try tx.query("SELECT * FROM pending_actions WHERE install_id = $1 FOR UPDATE", [.text(installID)])
                let found: PendingDeviceAction?
                do throws(StorageError) { found = try rows.records(PendingDeviceAction.init(row:)).first } catch { throw PostgresError(sqlState: nil, message: error.message) }
                guard let order = found else { return nil }
                try tx.query("DELETE FROM pending_actions WHERE install_id = $1", [.text(installID)])
                try tx.query("INSERT INTO audit_events (\(Self.auditColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                             Self.values(audit(order)))
                return order
            }
        }
    }

    /// The row lock of the `UPDATE` serialises racing replicas: the first takes the order, the others then
    /// see it taken by a live replica (its presence lock held) and get nil.
    public func claimPendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? {
        let instance = self.instance
        return try await run { db throws(PostgresError) in
            try db.query("""
                UPDATE pending_actions SET claimed_by = $2 WHERE install_id = $1
                AND (claimed_by IS NULL OR (claimed_by <> $2 AND NOT twobits_owner_alive(claimed_by)))
                RETURNING *
                """, [.text(installID), .text(instance)])
        }.records(PendingDeviceAction.init(row:)).first
    }

    public func completePendingAction(installID: String) async throws(StorageError) {
        let instance = self.instance
        try await run { db throws(PostgresError) in
            try db.query("DELETE FROM pending_actions WHERE install_id = $1 AND claimed_by = $2", [.text(installID), .text(instance)])
        }
    }

    public func releasePendingAction(installID: String) async throws(StorageError) {
        let instance = self.instance
        try await run { db throws(PostgresError) in
            try db.query("UPDATE pending_actions SET claimed_by = NULL WHERE install_id = $1 AND claimed_by = $2", [.text(installID), .text(instance)])
        }
    }
}

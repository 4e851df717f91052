public import Ledger

extension PostgresLedger {
    public func setPendingAction(_ action: PendingDeviceAction) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.query("""
                INSERT INTO pending_actions (install_id, kind, reason, client, created_ms) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (install_id) DO UPDATE SET kind = excluded.kind, reason = excluded.reason, client = excluded.client, created_ms = excluded.created_ms
                """, [.text(action.installID), .text(action.kind.rawValue), .optional(action.reason), .text(action.client), .ms(action.createdAt)])
        }
    }

    public func pendingActions() async throws(StorageError) -> [PendingDeviceAction] {
        try await run { db throws(PostgresError) in try db.query("SELECT * FROM pending_actions ORDER BY created_ms DESC") }.compactMap(Self.pending)
    }

    public func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? {
        try await run { db throws(PostgresError) in try db.query("SELECT * FROM pending_actions WHERE install_id = $1", [.text(installID)]) }
            .compactMap(Self.pending).first
    }

    public func removePendingAction(installID: String) async throws(StorageError) {
        try await run { db throws(PostgresError) in try db.query("DELETE FROM pending_actions WHERE install_id = $1", [.text(installID)]) }
    }

    private static func pending(_ r: PostgresRow) -> PendingDeviceAction? {
        guard let id = r.string("install_id"), let kind = r.string("kind").flatMap(PendingDeviceAction.Kind.init(rawValue:)) else { return nil }
        return PendingDeviceAction(installID: id, kind: kind, reason: r.string("reason"), client: r.string("client") ?? "", createdAt: r.date("created_ms"))
    }
}

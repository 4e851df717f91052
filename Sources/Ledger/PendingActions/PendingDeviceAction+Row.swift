import FoundationEssentials

extension PendingDeviceAction {
    /// A `pending_actions` row; nil for one without an install id or of a kind this build does not know.
    public init?(row r: some LedgerRow) throws(StorageError) {
        guard let id = try r.text("install_id"), let kind = try r.text("kind").flatMap(Kind.init(rawValue:)) else { return nil }
        self.init(installID: id, kind: kind, reason: try r.text("reason"), client: try r.text("client") ?? "",
                  createdAt: try r.time("created_ms") ?? Date(timeIntervalSince1970: 0))
    }
}

import Ledger

/// The audit trail as CSV (RFC 4180), safe to open in a spreadsheet.
enum AuditCSV {
    static let header = ["id", "at", "client", "action", "subject", "bits_before", "bits_after", "result", "reason", "transaction_id",
                         "token_sha256_prefix", "intent_id"]

    static func render(_ events: [AuditEvent]) -> String {
        var out = header.joined(separator: ",") + "\r\n"
        for e in events {
            let cells = [String(e.id), AdminController.iso(e.at), e.client, e.action, e.subject ?? "", e.bitsBefore?.description ?? "",
                         e.bitsAfter?.description ?? "", e.result.rawValue, e.reason ?? "", e.transactionID ?? "", e.tokenPrefix ?? "", e.intentID ?? ""]
            out += cells.map(cell).joined(separator: ",") + "\r\n"
        }
        return out
    }

    /// One field: a text a spreadsheet would run as a formula (=, +, -, @, tab, CR) gets a leading `'`; a field
    /// holding a comma, quote or line break is quoted with its quotes doubled.
    static func cell(_ value: String) -> String {
        var text = value
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }
}

import UseCases

extension ReceiptRefreshSettings {
    /// `app_attest.receipts`: `{"enabled", "max_refreshes_per_second"}` (docs/configuration.md); on by default.
    static func parse(_ section: inout ConfigReader) throws(ConfigurationError) -> ReceiptRefreshSettings {
        guard var receipts = try section.object("receipts") else { return ReceiptRefreshSettings() }
        let settings = ReceiptRefreshSettings(enabled: try receipts.bool("enabled", default: true),
                                              maxRefreshesPerSecond: try receipts.int("max_refreshes_per_second", default: 5, range: 1...100))
        try receipts.rejectUnknownFields()
        return settings
    }
}

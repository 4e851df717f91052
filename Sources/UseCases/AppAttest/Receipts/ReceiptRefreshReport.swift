/// What one renewal came to, for the service's metrics and log (`twobits_app_attest_receipt_refreshes_total`).
public struct ReceiptRefreshReport: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        case renewed, notYet = "not_yet", noData = "no_data", throttled, unavailable
        case incorrectEnvironment = "incorrect_environment", refused, deferred, storageFailed = "storage_failed"
    }

    public var keyID: String
    public var outcome: Outcome
    /// Why, where the outcome has a reason.
    public var detail: String?
    /// Whether the log should say it: an incorrect environment is logged once per process, a deferral never.
    public var log: Bool

    public init(keyID: String, outcome: Outcome, detail: String? = nil, log: Bool) {
        self.keyID = keyID
        self.outcome = outcome
        self.detail = detail
        self.log = log
    }
}

/// What Apple's risk-metric service made of one receipt (`ReceiptRenewing`), as the refresher acts on it.
public enum ReceiptRenewal: Sendable, Equatable {
    /// 200, and the new receipt verified.
    case renewed(RenewedReceipt)
    /// 304: before the previous receipt's not-before.
    case notYet
    /// 404: the key's data is gone: recorded, the key is not refreshed any more.
    case noData
    /// 429.
    case throttled
    /// 5xx, or the network.
    case unavailable(String)
    /// 400 Incorrect Environment: a configuration error (logged once, counted, alerting).
    case incorrectEnvironment
    /// 400 Bad Payload, 401, or the new receipt failed verification.
    case refused(String)
}

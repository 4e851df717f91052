public import FoundationEssentials

/// What the ledger is told after one key's renewal (`ReceiptRefresher.handle`).
public enum ReceiptRefreshAction: Sendable, Equatable {
    /// Store the renewed receipt, its times and metric.
    case store(RenewedReceipt)
    /// Leave the key until then.
    case postpone(until: Date)
    /// Never refresh the key again (Apple has no data for it).
    case stop
}

public import FoundationEssentials

/// What the refresher does next (`ReceiptRefresher.next`).
public enum ReceiptRefreshStep: Sendable, Equatable {
    /// Lease and renew up to this many due keys now.
    case refresh(limit: Int)
    /// Nothing before this time (the rate, a back-off, or no key due).
    case wait(until: Date)
}

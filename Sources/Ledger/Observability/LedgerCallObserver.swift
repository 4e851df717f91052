/// Told how long each ledger call took, for the ledger latency histogram on `/metrics`. A ledger holds one,
/// given when it is opened; it is called on the thread that ran the call, so it must be cheap.
public protocol LedgerCallObserver: Sendable {
    /// `seconds`: from the call's start to its end, waiting for a pooled connection included.
    func ledgerCallFinished(seconds: Double)
}

import Ledger

/// Feeds `twobits_ledger_call_seconds` from the ledger's own timing of each call.
struct LedgerLatencyMetrics: LedgerCallObserver {
    let registry: MetricsRegistry

    func ledgerCallFinished(seconds: Double) {
        registry.observe(.ledgerCallSeconds, value: seconds)
    }
}

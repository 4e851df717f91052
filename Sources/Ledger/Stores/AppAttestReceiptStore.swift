public import FoundationEssentials

/// Apple's receipts of attested keys and the risk metric they carry (docs/app-attest.md, "The risk metric").
/// Each replica's refresher leases the keys it renews, so that never two replicas renew one key at once.
public protocol AppAttestReceiptStore: Sendable {
    /// Leases to `owner` until `until`, atomically, up to `limit` due keys: used (attested or asserted) at or
    /// after `activeSince`, not revoked, not stopped, their receipt's not-before and their back-off passed at
    /// `now`, and no other owner's lease running. A key leased here is leased to no other caller.
    func leaseDueReceipts(owner: String, until: Date, activeSince: Date, now: Date, limit: Int) async throws(StorageError) -> [AppAttestKeyRecord]
    /// Replaces the key's receipt with a renewed one, its times and metric (the metric also joins the key's
    /// history, kept to the last `AppAttestReceiptState.historyLimit`), and ends the lease. False when
    /// `owner` no longer holds the key's lease (it expired and another took it): nothing is written.
    func storeRenewedReceipt(keyID: String, owner: String, receipt: Data, riskMetric: Int?, notBefore: Date?, expiration: Date,
                             now: Date) async throws(StorageError) -> Bool
    /// Stores the receipt Apple renewed right at attestation (the key is new: no lease is held), its times and
    /// metric, as `storeRenewedReceipt` does. False when the key is unknown or a refresher holds its lease.
    func storeAttestationReceipt(keyID: String, receipt: Data, riskMetric: Int?, notBefore: Date?, expiration: Date,
                                 now: Date) async throws(StorageError) -> Bool
    /// How many keys used at or after `activeSince`, not revoked, attested before `attestedBefore`, have no risk
    /// metric yet: the keys whose receipts could not be refreshed (docs/app-attest.md, "An unknown metric").
    func countAppAttestKeysWithUnknownMetric(attestedBefore: Date, activeSince: Date) async throws(StorageError) -> Int
    /// Ends the lease and leaves the key alone until `retryAt` (a back-off, or Apple's "not yet").
    func postponeReceiptRefresh(keyID: String, owner: String, retryAt: Date) async throws(StorageError)
    /// Apple has no data for the key's receipt any more (404): recorded, and the key is never due again.
    func stopReceiptRefresh(keyID: String, owner: String, now: Date) async throws(StorageError)
    /// The key's receipt times, its metric and history; nil when no such key was attested.
    func appAttestReceiptState(keyID: String) async throws(StorageError) -> AppAttestReceiptState?
    /// Keys whose latest metric is at least `minRiskMetric`, by key id after `after`, at most `limit`.
    func appAttestKeys(minRiskMetric: Int, after: String?, limit: Int) async throws(StorageError) -> [AppAttestKeyRecord]
    /// The page `appAttestKeys` gives, each key with its receipt state (as `appAttestReceiptState` gives it), read
    /// at once: one call for the page, not one per key.
    func appAttestKeyReceipts(minRiskMetric: Int, after: String?, limit: Int) async throws(StorageError)
        -> [(key: AppAttestKeyRecord, receipt: AppAttestReceiptState)]
}

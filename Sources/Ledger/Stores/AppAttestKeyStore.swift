public import FoundationEssentials

/// App Attest's attested keys, the strong tier (docs/app-attest.md).
public protocol AppAttestKeyStore: Sendable {
    /// Stores a newly attested key; false when a key with this id is already stored (it is left unchanged).
    func storeAppAttestKey(_ key: AppAttestKeyRecord) async throws(StorageError) -> Bool
    func appAttestKey(id: String) async throws(StorageError) -> AppAttestKeyRecord?
    /// Moves the key's counter to `counter` if that is strictly greater than the stored one and the key is
    /// not revoked, atomically: of several callers racing with the same counter exactly one gets `.advanced`.
    /// The key counts as used at `now` (its receipt is refreshed while it is used: `AppAttestReceiptStore`).
    func advanceAppAttestCounter(keyID: String, to counter: UInt32, now: Date) async throws(StorageError) -> CounterAdvance
    /// Revokes a key (its further assertions are refused) and records `audit` in the same transaction: no
    /// revocation goes unaudited, and the store has no other way to revoke. False, with nothing written, when
    /// there is no such key. Revoking again keeps the first time and reason (and records its event).
    func revokeAppAttestKey(keyID: String, reason: String, now: Date, audit: AuditEvent) async throws(StorageError) -> Bool
}

extension AppAttestKeyStore {
    /// `advanceAppAttestCounter(keyID:to:now:)` at the current time.
    public func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws(StorageError) -> CounterAdvance {
        try await advanceAppAttestCounter(keyID: keyID, to: counter, now: Date())
    }
}

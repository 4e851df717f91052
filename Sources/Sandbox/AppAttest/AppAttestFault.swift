/// What a simulated device gets wrong on request (`fault` in the control endpoints, docs/sandbox.md).
enum AttestationFault: String, CaseIterable, Sendable {
    /// The credential certificate chains to a CA that is not the sandbox root.
    case badChain = "bad_chain"
    /// The certificate's nonce is not SHA-256(authData ‖ clientDataHash).
    case wrongNonce = "wrong_nonce"
    /// authData's RP ID hash is another app's.
    case wrongAppID = "wrong_app_id"
    /// The other environment's AAGUID (a development key claiming production, or the reverse).
    case wrongEnvironment = "wrong_environment"
    /// The credential id in authData is not the key id.
    case wrongKeyID = "wrong_key_id"
    /// The credential certificate's 3 days of validity are over.
    case expired
    /// `attStmt.receipt` is 64 zero bytes (no CMS at all).
    case garbageReceipt = "garbage_receipt"
    /// `attStmt.receipt` is empty.
    case emptyReceipt = "empty_receipt"
    /// `attStmt.receipt` is `30 80` repeated: indefinite-length BER nested thousands deep.
    case nestedReceipt = "nested_receipt"
    /// `attStmt.receipt` is an honest ATTEST receipt, of another key.
    case foreignReceipt = "foreign_receipt"
    /// `attStmt.receipt` was created an hour before the attestation (outside any challenge's lifetime).
    case staleReceipt = "stale_receipt"
    /// `attStmt.receipt` is a refreshed receipt (type RECEIPT, with a metric), not the attestation's ATTEST receipt.
    case refreshedReceipt = "refreshed_receipt"
    /// `attStmt.receipt` says the other environment in field 7 (a development key's receipt saying "production").
    case otherEnvironmentReceipt = "other_environment_receipt"
}

enum AssertionFault: String, CaseIterable, Sendable {
    /// The counter of the previous assertion again.
    case replayedCounter = "replayed_counter"
    /// authenticatorData's RP ID hash is another app's.
    case wrongAppID = "wrong_app_id"
    /// The signature is over other bytes.
    case badSignature = "bad_signature"
    /// The AT flag set, as real devices sometimes do: still a valid assertion.
    case atFlag = "at_flag"
}

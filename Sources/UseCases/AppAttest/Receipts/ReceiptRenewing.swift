public import FoundationEssentials
public import Ledger

/// Renews one key's receipt at Apple and verifies the answer (implemented at the composition root).
public protocol ReceiptRenewing: Sendable {
    func renew(receipt: Data, key: AppAttestKeyRecord, now: Date) async -> ReceiptRenewal
}

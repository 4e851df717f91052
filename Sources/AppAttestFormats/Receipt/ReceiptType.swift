/// Field 6 of a receipt: the kind of receipt.
public enum ReceiptType: String, Sendable, CaseIterable {
    /// The receipt inside an attestation object: no Not Before, no risk metric.
    case attest = "ATTEST"
    /// A receipt Apple returned from `attestationData`: Not Before and the risk metric.
    case receipt = "RECEIPT"
}

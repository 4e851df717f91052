public import FoundationEssentials

/// A receipt Apple renewed, verified, with the fields the refresher stores.
public struct RenewedReceipt: Sendable, Equatable {
    /// The receipt's bytes (DER), sent in the next renewal.
    public var receipt: Data
    /// Field 17; nil when the receipt carries none.
    public var riskMetric: Int?
    /// Field 12.
    public var creation: Date
    /// Field 19: before it Apple answers 304.
    public var notBefore: Date?
    /// Field 21.
    public var expiration: Date

    public init(receipt: Data, riskMetric: Int?, creation: Date, notBefore: Date?, expiration: Date) {
        self.receipt = receipt
        self.riskMetric = riskMetric
        self.creation = creation
        self.notBefore = notBefore
        self.expiration = expiration
    }
}

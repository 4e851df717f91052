/// A receipt that passed Apple's steps (`ReceiptVerifier`): its payload's fields (field numbers as in Apple's
/// "Assessing fraud risk"), read through it as `verified.riskMetric`. A separate type so that only the
/// verifier makes one: a parsed but unverified payload cannot be passed where a verified one is needed.
@dynamicMemberLookup
public struct VerifiedReceipt: Sendable, Equatable {
    public let payload: ReceiptPayload

    init(_ payload: ReceiptPayload) { self.payload = payload }

    public subscript<Value>(dynamicMember field: KeyPath<ReceiptPayload, Value>) -> Value { payload[keyPath: field] }
}

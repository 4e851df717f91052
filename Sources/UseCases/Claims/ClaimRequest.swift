public import DeviceCheckModel

/// One claim of a promotion by a device, as parsed by the transport.
public struct ClaimRequest: Sendable {
    public let promotion: String
    public let token: DeviceToken
    /// The API client making it (audit, and the namespace of its idempotency keys).
    public let client: String
    /// The client's `Idempotency-Key`, already checked for form; nil: no idempotency.
    public let idempotencyKey: String?

    public init(promotion: String, token: DeviceToken, client: String, idempotencyKey: String?) {
        self.promotion = promotion
        self.token = token
        self.client = client
        self.idempotencyKey = idempotencyKey
    }
}

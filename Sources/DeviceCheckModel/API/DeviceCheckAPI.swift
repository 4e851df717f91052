/// Apple's three DeviceCheck operations. Policy code depends on this protocol only, so it can be
/// exercised against the sandbox (or any other implementation) without knowing about HTTP.
public protocol DeviceCheckAPI: Sendable {
    /// Succeeds when Apple accepts the device token.
    func validate(_ token: DeviceToken) async throws(DeviceCheckError)
    /// Reads the device's bits; also validates the token.
    func query(_ token: DeviceToken) async throws(DeviceCheckError) -> QueryResult
    /// Writes both bits (always both) and stamps the current month. Returns Apple's `transaction_id`.
    @discardableResult
    func update(_ token: DeviceToken, bits: Bits) async throws(DeviceCheckError) -> String
}

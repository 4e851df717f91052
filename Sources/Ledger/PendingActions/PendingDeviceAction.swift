public import FoundationEssentials

/// A ban or unban ordered by install id, applied the next time that install shows a device token.
public struct PendingDeviceAction: Sendable, Equatable {
    public enum Kind: String, Sendable { case ban, unban }

    public var installID: String
    public var kind: Kind
    public var reason: String?
    public var client: String
    public var createdAt: Date

    public init(installID: String, kind: Kind, reason: String?, client: String, createdAt: Date) {
        self.installID = installID
        self.kind = kind
        self.reason = reason
        self.client = client
        self.createdAt = createdAt
    }
}

/// What a verified assertion establishes.
public struct VerifiedAssertion: Sendable, Equatable {
    /// The assertion's counter: store it, atomically, only if it is still above the stored one.
    public let counter: UInt32
    public let appID: AppID
}

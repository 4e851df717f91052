public import FoundationEssentials

/// When each signing key was activated, shared by every server signing with the same key directory.
public protocol KeyActivationStore: Sendable {
    /// Records that a server started signing with key `kid` at `at`; the latest time is kept.
    func recordKeyActivation(kid: String, at: Date) async throws(StorageError)
    /// The latest activation time of each key some server has activated.
    func keyActivations() async throws(StorageError) -> [String: Date]
}

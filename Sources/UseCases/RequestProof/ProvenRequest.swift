/// A valid request proof: the key that signed it and where its counter now stands.
public struct ProvenRequest: Sendable, Equatable {
    /// The key's artifact (`aa1.…`): who the main API is talking to, across requests.
    public let artifact: String
    /// The key's counter, moved to this proof's.
    public let counter: UInt32
    /// Apple's latest risk metric for the key; nil while unknown.
    public let riskMetric: Int?
    /// The install id the main API forwarded with the proof, when it did.
    public let installID: String?

    public init(artifact: String, counter: UInt32, riskMetric: Int?, installID: String?) {
        self.artifact = artifact
        self.counter = counter
        self.riskMetric = riskMetric
        self.installID = installID
    }
}

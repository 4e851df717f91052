/// The body of `POST /v1/app-attest/challenges`: who asks, and for what, so TwoBits can answer `enroll`.
public struct ChallengeRequest: Sendable, Equatable, Codable {
    /// What the challenge is for: an assertion never reaches Apple, so it takes no room under TwoBits'
    /// attestation cap (`app_attest.max_attestations_per_second`).
    public enum Purpose: String, Sendable, Equatable, Codable {
        case attestation, assertion
    }

    /// The app's install id (`ClientConfiguration.installID`): the rollout's share is decided per install.
    public var installID: String?
    public var purpose: Purpose?

    public init(installID: String? = nil, purpose: Purpose? = nil) {
        self.installID = installID
        self.purpose = purpose
    }

    enum CodingKeys: String, CodingKey {
        case purpose
        case installID = "install_id"
    }
}

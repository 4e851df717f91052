/// The body of `POST /v1/app-attest/challenges`: who asks, and for what, so TwoBits can answer `enroll`.
public struct ChallengeRequest: Sendable, Equatable, Codable {
    /// What the challenge is for: an assertion never reaches Apple, so it takes no room under TwoBits'
    /// attestation cap (`app_attest.max_attestations_per_second`). A `requestProof` challenge serves one
    /// request proof and nothing else (and no other challenge serves a proof): a relay must forward the body.
    public enum Purpose: String, Sendable, Equatable, Codable {
        case attestation, assertion
        case requestProof = "request_proof"
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

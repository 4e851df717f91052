#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The app's way to TwoBits: through the team's main API, which holds TwoBits' API key (a server secret) and
/// forwards each call (docs/client.md, "Wiring the relay"). `URLSessionRelay` is the reference one.
///
/// Each method sends the request in TwoBits' own JSON shape and answers TwoBits' answer. Refusals are thrown as
/// `RelayFailure.refused` with TwoBits' status and error code (the main API passes them through); a call that
/// got no answer is `RelayFailure.unreachable`.
public protocol TwoBitsRelay: Sendable {
    /// `POST /v1/app-attest/challenges`: a one-time challenge.
    func challenge() async throws -> ChallengeAnswer
    /// `POST /v1/app-attest/challenges` with its body: the install id and the purpose, for the answer's
    /// `enroll`. The client calls this one. Default: `challenge()`, which sends neither (TwoBits then
    /// enrolls only when every install is in the rollout); relays should forward the body.
    func challenge(_ request: ChallengeRequest) async throws -> ChallengeAnswer
    /// `POST /v1/app-attest/attestations`: a new key's attestation; an appattest token and the key's artifact.
    func attest(_ request: AttestationRequest) async throws -> TokenAnswer
    /// `POST /v1/app-attest/assertions`: an assertion by an attested key; an appattest token.
    func assert(_ request: AssertionRequest) async throws -> TokenAnswer
    /// `POST /v1/fallback-tokens`: a DeviceCheck token (or a development debug secret) for a devicecheck (or debug) token.
    func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer
    /// The user's session the main API binds this app's tokens to (the `binding` it adds), as the app knows it,
    /// or nil when tokens are not bound or the app cannot tell. The client keeps its cached tokens apart per
    /// value, so a token cached under one session is never handed out under another (a sign-out, another
    /// account, a refreshed OAuth token). Only compared, never sent: the main API binds from the session it
    /// authenticated. Default: nil (then call `TwoBitsClient.clearCache()` whenever the session changes).
    func sessionBinding() async -> String?
}

extension TwoBitsRelay {
    public func challenge(_ request: ChallengeRequest) async throws -> ChallengeAnswer { try await challenge() }

    public func sessionBinding() async -> String? { nil }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The client half of TwoBits: tokens of the tier a route needs, from App Attest when the device can, from
/// DeviceCheck otherwise (docs/client.md).
///
/// One call at a time goes through the flow, in arrival order: an install's assertions must reach TwoBits in
/// counter order, and concurrent callers of a reusable token share the first one's.
public actor TwoBitsClient {
    let appAttest: any AppAttestProvider
    let deviceCheck: any DeviceCheckProvider
    let keyStore: any KeyStore
    let relay: any TwoBitsRelay
    let configuration: ClientConfiguration
    var cache: TokenCache
    var backoff: Backoff
    /// At most one `request_proof` challenge fetched ahead (`prefetchProofChallenge()`), single-use.
    var prefetchedChallenge: PrefetchedChallenge?
    let gate = SerialGate()

    public init(appAttest: any AppAttestProvider, deviceCheck: any DeviceCheckProvider, keyStore: any KeyStore,
                relay: any TwoBitsRelay, configuration: ClientConfiguration = ClientConfiguration()) {
        self.appAttest = appAttest
        self.deviceCheck = deviceCheck
        self.keyStore = keyStore
        self.relay = relay
        self.configuration = configuration
        cache = TokenCache(margin: configuration.expiryMargin)
        backoff = Backoff(base: configuration.backoffBase, maximum: configuration.backoffMaximum)
    }

    /// A token for a route that accepts `requirement`.
    ///
    /// - Parameters:
    ///   - limitedUse: a token the main API consumes once (`lim: true`); never cached, always a fresh one.
    ///   - payload: the request's body when the token is for that request alone: its SHA-256 goes into the
    ///     signed client data as `payload_sha256` (appattest tier). Such tokens are never cached.
    /// - Throws: `TwoBitsClientError`, each case with what to do.
    public func token(for requirement: TierRequirement = .any, limitedUse: Bool = false,
                      payload: Data? = nil) async throws(TwoBitsClientError) -> ClientToken {
        try await gate.run { () async throws(TwoBitsClientError) -> ClientToken in
            try await self.issue(requirement, limitedUse: limitedUse, payload: payload)
        }
    }

    /// Forgets cached tokens (e.g. at sign-out; needed when the relay's `sessionBinding()` is nil and the
    /// main API binds tokens to the session). The App Attest key stays.
    public func clearCache() {
        cache.removeAll()
    }

    private func issue(_ requirement: TierRequirement, limitedUse: Bool, payload: Data?) async throws(TwoBitsClientError) -> ClientToken {
        let reusable = !limitedUse && payload == nil
        // Asked before the flow: the token is cached under the session it was requested in.
        let binding = reusable ? await relay.sessionBinding() : nil
        if reusable, let cached = cache.token(for: requirement, binding: binding, now: configuration.now()) { return cached }
        let token: ClientToken
        switch try await strongTier(limitedUse: limitedUse, payload: payload) {
        case .token(let strong):
            token = strong
        case .fallback(let status):
            guard requirement == .any else { throw .strongTierUnavailable(status) }
            token = try await fallbackTier(status, limitedUse: limitedUse)
        }
        if reusable { cache.keep(token, binding: binding, now: configuration.now()) }
        return token
    }

    /// A token as the app sees it, from TwoBits' answer.
    func clientToken(_ answer: TokenAnswer, limitedUse: Bool, status: AppAttestStatus?) -> ClientToken {
        ClientToken(value: answer.token, tier: answer.tier, expiresAt: configuration.now().addingTimeInterval(TimeInterval(answer.expiresIn)),
                    limitedUse: limitedUse, appAttestStatus: status)
    }
}

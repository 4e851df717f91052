public import Ledger
import Policy
public import TokenSigning
public import WireVocabulary

/// What the use cases report as they run, so the service can count it (metrics stay out of this layer,
/// as the Apple client's `AppleCallObserver` keeps them out of AppleDeviceCheckClient).
public protocol UseCaseEvents: Sendable {
    /// A claim ended: claimed, replayed, refused, or turned away while its twin runs.
    func claim(promotion: String, _ event: ClaimEvent)
    /// A token exchange was refused (not counted: storage failures before the credential was judged).
    func exchangeRefused(_ error: ExchangeError)
    /// An App Attest challenge, attestation or assertion was refused.
    func appAttestRefused(_ error: AppAttestExchangeError)
    /// A token was issued (any tier).
    func tokenIssued(tier: Tier, limitedUse: Bool)
    /// A fallback token was issued to an app that said why it did not use App Attest.
    func appAttestFallback(reason: AppAttestFallbackReason)
    /// A pending ban or unban was applied to a device while it was admitted.
    func pendingActionApplied(_ kind: PendingDeviceAction.Kind)
    /// A token was verified; `failure` is nil when it is valid.
    func tokenVerified(failure: TokenVerifier.Failure?)
    /// A limited-use token was consumed: `first` is false when it had been consumed before.
    func limitedUseTokenConsumed(first: Bool)
    /// A request proof was judged: `refusal` is nil when it is valid.
    func requestProofVerified(refusal: RequestProofRefusalReason?)
    /// A request proof got no verdict (storage, or Apple for its device token).
    func requestProofUnanswered(_ error: RequestProofError)
}

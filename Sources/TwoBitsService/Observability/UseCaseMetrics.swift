import Ledger
import Policy
import TokenSigning
import UseCases
import WireVocabulary

/// Counts what the use cases report, on `/metrics` and for the console's overview (`StatisticsRecorder`).
/// Outcome labels of refusals are the error codes clients see.
struct UseCaseMetrics: UseCaseEvents {
    let registry: MetricsRegistry
    let statistics: StatisticsRecorder
    /// The configured promotion ids: only these become label values, so a client cannot grow the metric without bound.
    let promotions: Set<String>

    func claim(promotion: String, _ event: ClaimEvent) {
        let outcome: String
        switch event {
        case .claimed: outcome = "claimed"
        case .claimedOnRetry: outcome = "claimed_on_retry"
        case .replayed: outcome = "replayed"
        case .inProgress: outcome = "in_progress"
        case .refused(let error): outcome = APIError(error).code.rawValue
        }
        let label = promotions.contains(promotion) ? promotion : "unknown"
        registry.increment(.promotionClaims, label, outcome)
        statistics.count("claim", label, outcome)
    }

    func exchangeRefused(_ error: ExchangeError) {
        let reason: String
        switch error {
        case .debugDisabled: reason = APIErrorCode.debugDisabled.rawValue
        case .invalidDebugSecret: reason = APIErrorCode.invalidDebugSecret.rawValue
        case .deviceTokenReused: reason = "reused"
        case .refused(.deviceBanned): reason = "banned"
        case .refused(.apple(.invalidDeviceToken)): reason = "invalid"
        case .refused, .storage:
            let answer = APIError(error)
            reason = (answer.status == 503 ? .appleUnavailable : answer.code).rawValue
        }
        registry.increment(.fallbackExchangesRefused, reason)
        statistics.count("token", "fallback", reason)
    }

    func appAttestRefused(_ error: AppAttestExchangeError) {
        let reason: String
        switch error {
        case .appAttest(.storage): reason = APIErrorCode.storageUnavailable.rawValue
        case .appAttest(let refusal): reason = refusal.code
        case .deviceTokenRequired: reason = APIErrorCode.deviceTokenRequired.rawValue
        case .refused(.deviceBanned): reason = "banned"
        case .refused(.apple(.invalidDeviceToken)): reason = APIErrorCode.invalidDeviceToken.rawValue
        case .refused(let policy):
            let answer = APIError(policy)
            reason = (answer.status == 503 ? .appleUnavailable : answer.code).rawValue
        }
        registry.increment(.appAttestRefusals, reason)
        statistics.count("token", "appattest", reason)
    }

    func tokenIssued(tier: Tier, limitedUse: Bool) {
        registry.increment(.fallbackTokensIssued, tier.rawValue, String(limitedUse))
        statistics.count("token", tier.rawValue, "issued")
    }

    func appAttestFallback(reason: AppAttestFallbackReason) {
        registry.increment(.appAttestFallbackReasons, reason.rawValue)
        statistics.count(OverviewReport.adoptionFamily, reason.rawValue, "issued")
    }

    func pendingActionApplied(_ kind: PendingDeviceAction.Kind) {
        registry.increment(.pendingBansApplied, kind.rawValue)
    }

    func tokenVerified(failure: TokenVerifier.Failure?) {
        registry.increment(.fallbackVerifications, failure?.rawValue ?? "valid")
    }

    func limitedUseTokenConsumed(first: Bool) {
        registry.increment(.fallbackConsumes, first ? "consumed" : "reused")
    }

    func requestProofVerified(refusal: RequestProofRefusalReason?) {
        registry.increment(.appAttestRequestProofs, refusal == nil ? "valid" : "refused", refusal?.rawValue ?? "none")
        statistics.count(OverviewReport.proofFamily, "appattest", refusal?.rawValue ?? "valid")
    }

    func requestProofUnanswered(_ error: RequestProofError) {
        let answer = APIError(error)
        registry.increment(.appAttestRequestProofs, "unanswered", (answer.status == 503 ? .appleUnavailable : answer.code).rawValue)
    }
}

import DeviceCheckModel
import FoundationEssentials
import Ledger
public import TokenSigning

extension TokenExchangeService {
    /// Verifies a token (bound to `binding` when given); with `consume`, marks a limited-use token used (exactly once
    /// across callers). A token bound elsewhere is never consumed. A debug-tier token is valid only where the exchange
    /// would issue one (`apple.environment` `development`): a production server sharing its key directory with a
    /// development server must not vouch for it, nor consume it.
    public func verify(_ token: String, binding: SessionBinding? = nil, consume: Bool) async throws(VerifyError) -> VerifyOutcome {
        let now = Date()
        var verdict = keys.verifier().verify(token, binding: binding, now: now)
        if case .success(let claims) = verdict, claims.tier == .debug, environment != .development { verdict = .failure(.debugTier) }
        switch verdict {
        case .failure(let failure):
            events.tokenVerified(failure: failure)
            return .invalid(failure)
        case .success(let claims):
            events.tokenVerified(failure: nil)
            guard consume else { return .valid(claims, alreadyConsumed: false) }
            guard claims.limitedUse else { throw .notLimitedUse }
            let first: Bool
            do {
                first = try await ledger.consumeTokenID(claims.jti, until: Date(timeIntervalSince1970: TimeInterval(claims.exp)), now: now)
            } catch { throw .storage(error) }
            events.limitedUseTokenConsumed(first: first)
            return .valid(claims, alreadyConsumed: !first)
        }
    }
}

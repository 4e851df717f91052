import FoundationEssentials
import Ledger
public import TokenSigning

extension TokenExchangeService {
    /// Verifies a token (bound to `binding` when given); with `consume`, marks a limited-use token used
    /// (exactly once across callers). A token bound elsewhere is never consumed.
    public func verify(_ token: String, binding: SessionBinding? = nil, consume: Bool) async throws(VerifyError) -> VerifyOutcome {
        let now = Date()
        switch keys.verifier().verify(token, binding: binding, now: now) {
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

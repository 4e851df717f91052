import FoundationEssentials
import Ledger
import TokenSigning

extension TokenExchangeService {
    /// Verifies a token; with `consume`, marks a limited-use token used (exactly once across callers).
    public func verify(_ token: String, consume: Bool) async throws(VerifyError) -> VerifyOutcome {
        let now = Date()
        switch keys.verifier().verify(token, now: now) {
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

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The last reusable token of each tier, until its expiry less a margin. Limited-use tokens and tokens bound
/// to one request's payload never enter it.
struct TokenCache {
    private var tokens: [String: ClientToken] = [:]
    let margin: TimeInterval

    init(margin: TimeInterval) { self.margin = margin }

    /// A token still good for `margin` seconds that `requirement` accepts, the strong tier first.
    func token(for requirement: TierRequirement, now: Date) -> ClientToken? {
        let tiers = requirement == .strong ? ["appattest"] : ["appattest", "devicecheck", "debug"]
        for tier in tiers {
            if let token = tokens[tier], now < token.expiresAt.addingTimeInterval(-margin) { return token }
        }
        return nil
    }

    mutating func keep(_ token: ClientToken) {
        guard !token.limitedUse else { return }
        tokens[token.tier] = token
    }

    mutating func removeAll() { tokens.removeAll() }
}

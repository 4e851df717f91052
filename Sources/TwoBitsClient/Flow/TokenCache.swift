#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireVocabulary

/// The last reusable token of each tier per session binding, until its expiry less a margin. A token kept
/// under one binding is never found under another: tokens carry their session's `bnd`, and one handed to
/// another session fails the main API's check. Limited-use tokens and tokens bound to one request's payload
/// never enter it.
struct TokenCache {
    /// Tokens by binding key, then by tier.
    private var tokens: [String: [TokenTier: ClientToken]] = [:]
    let margin: TimeInterval

    init(margin: TimeInterval) { self.margin = margin }

    /// A token still good for `margin` seconds, kept under `binding`, that `requirement` accepts, the strong
    /// tier first.
    func token(for requirement: TierRequirement, binding: String?, now: Date) -> ClientToken? {
        let kept = tokens[Self.key(binding)] ?? [:]
        let tiers: [TokenTier] = requirement == .strong ? [.appattest] : [.appattest, .devicecheck, .debug]
        for tier in tiers {
            if let token = kept[tier], isFresh(token, now: now) { return token }
        }
        return nil
    }

    /// Keeps `token` under `binding`, and forgets the expired tokens of every binding (old sessions' tokens
    /// would otherwise stay for the client's lifetime).
    mutating func keep(_ token: ClientToken, binding: String?, now: Date) {
        guard !token.limitedUse else { return }
        tokens = tokens.compactMapValues { kept in
            let fresh = kept.filter { isFresh($0.value, now: now) }
            return fresh.isEmpty ? nil : fresh
        }
        tokens[Self.key(binding), default: [:]][token.tier] = token
    }

    mutating func removeAll() { tokens.removeAll() }

    private func isFresh(_ token: ClientToken, now: Date) -> Bool {
        now < token.expiresAt.addingTimeInterval(-margin)
    }

    /// The digest of a binding, so the session itself is not kept beyond the call; "" without one.
    private static func key(_ binding: String?) -> String {
        guard let binding else { return "" }
        return "bnd:" + Base64URL.encode(SystemSHA256.hash(Data(binding.utf8)))
    }
}

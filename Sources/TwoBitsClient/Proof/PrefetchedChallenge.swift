#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `request_proof` challenge fetched before the request it will sign: used once, never after `usableUntil`
/// (its `expires_in` less the configuration's margin, so the request still reaches TwoBits in time).
struct PrefetchedChallenge: Sendable {
    let text: String
    let bytes: Data
    let usableUntil: Date
}

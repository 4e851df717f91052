public import Policy

extension PolicyError {
    /// Whether a retry of the same request can only get the same answer. Final refusals are stored
    /// under the `Idempotency-Key` and replayed; the others (Apple or the ledger unavailable, our
    /// credentials refused, the request cancelled) give the key back so the retry reaches Apple.
    public var isFinal: Bool {
        switch self {
        case .apple(.invalidDeviceToken), .notEnabled, .unknownPromotion, .promotionNotActive, .alreadyClaimed, .deviceBanned: true
        case .apple(.rejected), .apple(.unavailable), .storage, .cancelled: false
        }
    }
}

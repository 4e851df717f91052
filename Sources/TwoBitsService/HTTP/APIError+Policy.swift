public import Policy

extension APIError {
    /// Maps policy outcomes onto the documented HTTP answers.
    public init(_ error: PolicyError) {
        switch error {
        case .apple(let e): self.init(e)
        case .notEnabled(let message): self = .notEnabled(message)
        case .unknownPromotion(let id): self.init(404, "unknown_promotion", "no promotion \"\(id)\" is configured")
        case .promotionNotActive(let id, let starts, let ends):
            self.init(409, "promotion_not_active", "promotion \"\(id)\" runs \(starts) to \(ends.map(\.description) ?? "open-ended")")
        case .alreadyClaimed(let month):
            self.init(409, "already_claimed", "this device has claimed the promotion", details: ["claimed_month": month.description])
        case .deviceBanned: self.init(403, "device_banned", "this device is banned")
        case .storage(let e): self = .storageUnavailable(e)
        // Only seen by a handler whose client already has its answer (deadline or shutdown).
        case .cancelled: self.init(503, "cancelled", "the request was cancelled before Apple was written to; retry", retryAfterSeconds: 1)
        }
    }
}

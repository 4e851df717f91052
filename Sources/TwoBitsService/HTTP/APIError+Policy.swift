public import Policy
import WireVocabulary

extension APIError {
    /// Maps policy outcomes onto the documented HTTP answers.
    public init(_ error: PolicyError) {
        switch error {
        case .apple(let e): self.init(e)
        case .notEnabled(let message): self = .notEnabled(message)
        case .unknownPromotion(let id): self.init(404, .unknownPromotion, "no promotion \"\(id)\" is configured")
        case .promotionNotActive(let id, let starts, let ends):
            self.init(409, .promotionNotActive, "promotion \"\(id)\" runs \(starts) to \(ends.map(\.description) ?? "open-ended")")
        case .alreadyClaimed(let month):
            self.init(409, .alreadyClaimed, "this device has claimed the promotion", details: [WireField.claimedMonth: month.description])
        case .deviceBanned: self.init(403, .deviceBanned, "this device is banned")
        case .storage(let e): self = .storageUnavailable(e)
        // Only seen by a handler whose client already has its answer (deadline or shutdown).
        case .cancelled: self.init(503, .cancelled, "the request was cancelled before Apple was written to; retry", retryAfterSeconds: 1)
        }
    }
}

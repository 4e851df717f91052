import Foundation

/// What the ledger knows about an `Idempotency-Key` when a request arrives.
public enum IdempotencyBegin: Sendable, Equatable {
    /// First time: the key is now reserved for this request.
    case started
    /// Completed before: replay this answer without calling Apple.
    case replay(status: Int, body: Data)
    /// Started before but never completed (the process died, or a twin request is running).
    /// `intent` is what the first attempt was about to write, if it got that far.
    case unfinished(intent: String?)
    /// The key was used for a different request.
    case conflict
}

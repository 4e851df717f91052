public import FoundationEssentials

/// What the ledger knows about an `Idempotency-Key` when a request arrives.
public enum IdempotencyBegin: Sendable, Equatable {
    /// First time: the key is now reserved for this request.
    case started
    /// Completed before: replay this answer without calling Apple.
    case replay(status: Int, body: Data)
    /// Started before by a process that is gone (it crashed) or that gave the key back after a
    /// transient failure; this request takes it over. `intent` is what the earlier attempt was about
    /// to write, if it got that far: the write may have happened.
    case unfinished(intent: String?)
    /// A twin request with the same key is running right now, in this process or (with a shared ledger)
    /// in another one that is still alive.
    case inProgress
    /// The key was used for a different request.
    case conflict
}

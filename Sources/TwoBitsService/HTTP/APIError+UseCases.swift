public import UseCases
import WireVocabulary

/// The use cases' errors as the documented HTTP answers (docs/openapi.yaml).
extension APIError {
    public init(_ error: ClaimError) {
        switch error {
        case .idempotencyKeyConflict:
            self.init(422, .idempotencyKeyConflict, "this Idempotency-Key was used for a different request in the last 24 hours")
        case .inProgress:
            self.init(409, .requestInProgress, "a request with this Idempotency-Key is still running; retry shortly", retryAfterSeconds: 1)
        case .refused(let policy): self.init(policy)
        case .storage(let storage): self = .storageUnavailable(storage)
        }
    }

    public init(_ error: ExchangeError) {
        switch error {
        case .debugDisabled: self.init(403, .debugDisabled, "debug secrets work only while apple.environment is development")
        case .invalidDebugSecret: self.init(401, .invalidDebugSecret, "unknown or revoked debug secret")
        case .deviceTokenReused:
            self.init(409, .deviceTokenReused, "this device token was already exchanged; the app must generate a fresh one")
        case .refused(let policy): self.init(policy)
        case .storage(let storage): self = .storageUnavailable(storage)
        }
    }

    public init(_ error: VerifyError) {
        switch error {
        case .notLimitedUse: self = .badRequest("consume is only for limited-use tokens (issued with limited_use: true)")
        case .storage(let storage): self = .storageUnavailable(storage)
        }
    }

    public init(_ error: DebugSecretError) {
        switch error {
        case .invalidName: self = .badRequest("name must be 1-64 characters of A-Z a-z 0-9 . _ -")
        case .tooMany(let limit): self.init(409, .tooManyDebugSecrets, "at most \(limit) debug secrets; delete one first")
        case .exists(let name): self.init(409, .debugSecretExists, "a debug secret named \(name) exists; delete it first to replace it")
        case .notFound(let name): self.init(404, .notFound, "no debug secret named \(name)")
        case .storage(let storage): self = .storageUnavailable(storage)
        }
    }
}

import DeviceCheckModel
import HTTPServer
import Ledger
import Policy
import Testing
import TwoBitsService
import UseCases

/// The use cases decide what an `Idempotency-Key` stores (`PolicyError.isFinal`); HTTP decides the status.
/// The two must agree: a final refusal is a 4xx, a transient one a 5xx whose retry reaches Apple.
@Suite struct UseCaseMappingTests {
    static let policyErrors: [PolicyError] = [
        .apple(.invalidDeviceToken), .apple(.rejected(status: 403, body: "")), .apple(.unavailable(.throttled)),
        .apple(.unavailable(.overloaded)), .apple(.unavailable(.outcomeUnknown(.timedOut))), .notEnabled("layout none"),
        .unknownPromotion("x"), .promotionNotActive(id: "x", starts: YearMonth("2026-01")!, ends: nil),
        .alreadyClaimed(YearMonth("2026-01")!), .deviceBanned(), .deviceBanned(appliedPending: .ban),
        .storage(StorageError("disk I/O error")), .cancelled,
    ]

    @Test(arguments: policyErrors)
    func aFinalRefusalIsExactlyAnAnswerBelow500(_ error: PolicyError) {
        #expect(error.isFinal == (APIError(error).status < 500), "\(error) → \(APIError(error).status)")
    }

    /// The claim controller sends a final refusal as the use case rendered and stored it (status and body, as JSON):
    /// an envelope header of its own (`Retry-After`, `Allow`) would be sent once and never replayed.
    @Test(arguments: policyErrors.filter(\.isFinal))
    func aFinalRefusalHasNoHeaderButItsType(_ error: PolicyError) {
        #expect(APIError(error).response.headers.map(\.0) == ["Content-Type"], "\(error)")
        #expect(APIError(error).logDetail == nil, "\(error)")
    }

    @Test func claimErrorsKeepTheirDocumentedAnswers() {
        let conflict = APIError(ClaimError.idempotencyKeyConflict)
        #expect((conflict.status, conflict.code.rawValue) == (422, "idempotency_key_conflict"))
        let running = APIError(ClaimError.inProgress)
        #expect((running.status, running.code.rawValue, running.retryAfterSeconds) == (409, "request_in_progress", 1))
        let refused = APIError(ClaimError.refused(.alreadyClaimed(YearMonth("2026-03")!)))
        #expect(refused.details == ["claimed_month": "2026-03"])
        let storage = APIError(ClaimError.storage(StorageError("locked")))
        #expect((storage.status, storage.code.rawValue, storage.logDetail) == (503, "storage_unavailable", "locked"))
    }
}

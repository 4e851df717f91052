import DeviceCheckModel
import Policy
import UseCases
import Testing

/// Apple's update is the one step that cannot be undone: a claim whose task is cancelled (its client was
/// answered by the deadline, or the server is stopping) after the query never sends it.
@Suite("Policy and cancellation")
struct PolicyCancellationTests {
    @Test func aClaimCancelledAfterItsQueryNeverWritesToApple() async throws {
        try await withPolicy(ClaimIdempotencyTests.roles) { h in
            let d = try h.newDevice()
            let policy = h.useCases, token = d.token
            // Between Apple's query and the write (where a keyed claim records its intent) the task is
            // cancelled, as the deadline would cancel it while the query was on the wire.
            let failure = await Task { () async -> PolicyError? in
                do throws(PolicyError) {
                    guard case .write(let write) = try await policy.prepareClaim("spring", token: token, client: "marketing") else { return nil }
                    withUnsafeCurrentTask { $0?.cancel() }
                    _ = try await policy.writeClaim(write)
                    return nil
                } catch {
                    return error
                }
            }.value
            guard case .cancelled = failure else {
                Issue.record("expected .cancelled, got \(String(describing: failure))")
                return
            }
            #expect(h.sandbox.counters.calls["query_two_bits", default: 0] == 1)
            #expect(h.sandbox.counters.calls["update_two_bits", default: 0] == 0)
            #expect(try h.state(d.id).updates == 0)
            // Not even an intent: the write is refused before anything is recorded for it.
            #expect(try await h.ledger.auditEvents(limit: 10, before: nil).isEmpty)
        }
    }
}

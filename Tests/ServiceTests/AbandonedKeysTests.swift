import Foundation
import Ledger
import Locking
import Testing
import TwoBitsService
@testable import UseCases

/// A real SQLite ledger whose `abandonIdempotent` fails while `failing` is set (the database down at the
/// moment an attempt ends), and whose `completeIdempotent` fails while `failingCompletes` is set; every other
/// call goes through.
final class FailingAbandonLedger: Ledger, Sendable {
    let base: any Ledger
    let failing = Lock(true)
    let failingCompletes = Lock(false)
    init(_ base: any Ledger) { self.base = base }

    func abandonIdempotent(client: String, key: String) async throws(StorageError) {
        if failing.withLock({ $0 }) { throw StorageError("PostgreSQL unreachable: test", kind: .unreachable) }
        try await base.abandonIdempotent(client: client, key: key)
    }
    func checkHealth() async throws(StorageError) { try await base.checkHealth() }
    func recordWriteIntent(_ intent: WriteIntent) async throws(StorageError) { try await base.recordWriteIntent(intent) }
    func resolveWriteIntent(id: String, result: String, bitsAfter: String?, reason: String?, transactionID: String?) async throws(StorageError) {
        try await base.resolveWriteIntent(id: id, result: result, bitsAfter: bitsAfter, reason: reason, transactionID: transactionID)
    }
    func unknownWriteIntents(tokenPrefix: String, limit: Int) async throws(StorageError) -> [WriteIntent] { try await base.unknownWriteIntents(tokenPrefix: tokenPrefix, limit: limit) }
    func markInterruptedWriteIntents(reason: String) async throws(StorageError) -> Int { try await base.markInterruptedWriteIntents(reason: reason) }
    func record(_ event: AuditEvent) async throws(StorageError) -> Int64 { try await base.record(event) }
    func auditEvent(id: Int64) async throws(StorageError) -> AuditEvent? { try await base.auditEvent(id: id) }
    func auditEvents(limit: Int, before: Int64?, filter: AuditFilter) async throws(StorageError) -> [AuditEvent] { try await base.auditEvents(limit: limit, before: before, filter: filter) }
    func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin {
        try await base.beginIdempotent(client: client, key: key, requestHash: requestHash, owner: owner, now: now)
    }
    func recordIntent(client: String, key: String, intent: String) async throws(StorageError) { try await base.recordIntent(client: client, key: key, intent: intent) }
    func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) {
        if failingCompletes.withLock({ $0 }) { throw StorageError("disk full: test") }
        try await base.completeIdempotent(client: client, key: key, status: status, body: body)
    }
    func setPendingAction(_ action: PendingDeviceAction) async throws(StorageError) { try await base.setPendingAction(action) }
    func pendingActions() async throws(StorageError) -> [PendingDeviceAction] { try await base.pendingActions() }
    func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? { try await base.pendingAction(installID: installID) }
    func removePendingAction(installID: String) async throws(StorageError) { try await base.removePendingAction(installID: installID) }
    func claimPendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? { try await base.claimPendingAction(installID: installID) }
    func completePendingAction(installID: String) async throws(StorageError) { try await base.completePendingAction(installID: installID) }
    func releasePendingAction(installID: String) async throws(StorageError) { try await base.releasePendingAction(installID: installID) }
    func rememberDeviceToken(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool { try await base.rememberDeviceToken(digest: digest, until: until, now: now) }
    func forgetDeviceToken(digest: String) async throws(StorageError) { try await base.forgetDeviceToken(digest: digest) }
    func consumeTokenID(_ jti: String, until: Date, now: Date) async throws(StorageError) -> Bool { try await base.consumeTokenID(jti, until: until, now: now) }
    func addDebugSecret(name: String, digest: String, now: Date) async throws(StorageError) -> Bool { try await base.addDebugSecret(name: name, digest: digest, now: now) }
    func debugSecretNames() async throws(StorageError) -> [(name: String, createdAt: Date)] { try await base.debugSecretNames() }
    func deleteDebugSecret(name: String) async throws(StorageError) -> Bool { try await base.deleteDebugSecret(name: name) }
    func debugSecretName(digest: String) async throws(StorageError) -> String? { try await base.debugSecretName(digest: digest) }
    func recordKeyActivation(kid: String, at: Date) async throws(StorageError) { try await base.recordKeyActivation(kid: kid, at: at) }
    func keyActivations() async throws(StorageError) -> [String: Date] { try await base.keyActivations() }
    func issueAppAttestChallenge(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await base.issueAppAttestChallenge(digest: digest, until: until, now: now)
    }
    func consumeAppAttestChallenge(digest: String, now: Date) async throws(StorageError) -> Bool {
        try await base.consumeAppAttestChallenge(digest: digest, now: now)
    }
    func storeAppAttestKey(_ key: AppAttestKeyRecord) async throws(StorageError) -> Bool { try await base.storeAppAttestKey(key) }
    func appAttestKey(id: String) async throws(StorageError) -> AppAttestKeyRecord? { try await base.appAttestKey(id: id) }
    func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws(StorageError) -> CounterAdvance {
        try await base.advanceAppAttestCounter(keyID: keyID, to: counter)
    }
    func revokeAppAttestKey(keyID: String, reason: String, now: Date) async throws(StorageError) -> Bool {
        try await base.revokeAppAttestKey(keyID: keyID, reason: reason, now: now)
    }
    func addStatistics(_ increments: [StatisticIncrement], forgetBefore: Date) async throws(StorageError) {
        try await base.addStatistics(increments, forgetBefore: forgetBefore)
    }
    func statistics(since: Date) async throws(StorageError) -> [StatisticIncrement] { try await base.statistics(since: since) }
}

/// An idempotency key whose give-back failed stays owned by this live process, and would answer
/// `request_in_progress` for its 24 hours; it is given back before the next claim.
@Suite struct AbandonedKeysTests {
    @Test func aKeyNotGivenBackIsGivenBackBeforeTheNextClaim() async throws {
        let directory = NSTemporaryDirectory() + "twobits-abandoned-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = FailingAbandonLedger(try DatabaseLocation.sqlite(path: directory + "/ledger.sqlite").openLedger(pool: .init()))
        let owner = ClaimService.instance, now = Date()
        #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owner, now: now) == .started)

        let abandoned = AbandonedKeys()
        await abandoned.giveBack(client: "c", key: "k", in: ledger)
        #expect(abandoned.count == 1)
        #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owner, now: now) == .inProgress,
                "not given back: still this live process's")

        await abandoned.retry(in: ledger)
        #expect(abandoned.count == 1, "kept while the ledger still fails")
        ledger.failing.withLock { $0 = false }
        await abandoned.retry(in: ledger)
        #expect(abandoned.count == 0)
        #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owner, now: now) == .started,
                "given back (no intent was recorded): the retry runs afresh")
    }
}

import ChildProcess
import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
@testable import SQLiteLedger
import Testing

/// Issue 12, items 5-8: a failing ledger writes nothing at Apple, every Apple write is audited with its
/// real outcome, an ambiguous 200 is never success, readiness proves a write. Real sandbox, real SQLite
/// file, damaged while the policy runs.
@Suite("Hostile storage", .serialized)
struct HostileStorageTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    static func counter(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .reinstallCounter(banAt: 3), promotions: [])
    }

    /// What happens to the ledger file mid-run.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        /// `chattr +i` on the database and its WAL: every write fails (EPERM), reads still work.
        case readOnly
        /// Another file renamed over the path: the open file is no longer the file at the path.
        case replaced
        /// The file unlinked while open.
        case deleted
        /// The file's bytes overwritten with garbage, the WAL emptied, the WAL index invalidated.
        case corrupted

        var testDescription: String { rawValue }
    }

    static func chattr(_ flag: String, _ paths: [String]) throws {
        let result = try ChildProcess.runBlocking(["chattr", flag] + paths.filter { FileManager.default.fileExists(atPath: $0) })
        try #require(result.status == 0, "chattr \(flag) failed (the read-only case needs root on ext4): \(result.output)")
    }

    static func damage(_ damage: Damage, _ h: PolicyHarness) throws {
        let path = h.ledgerPath
        switch damage {
        case .readOnly:
            try chattr("+i", [path, path + "-wal"])
        case .replaced:
            let other = h.directory.appendingPathComponent("other.sqlite").path
            try Data("not the ledger".utf8).write(to: URL(fileURLWithPath: other))
            try #require(rename(other, path) == 0)
        case .deleted:
            try FileManager.default.removeItem(atPath: path)
        case .corrupted:
            let size = max((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0, 8192)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.write(contentsOf: Data((0..<size).map { _ in UInt8.random(in: 1...255) }))
            try handle.close()
            try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-wal")).truncate(atOffset: 0)
            let shm = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-shm"))
            try shm.write(contentsOf: Data(count: 136))
            try shm.close()
        }
    }

    static func undo(_ damage: Damage, _ h: PolicyHarness) {
        if damage == .readOnly { try? chattr("-i", [h.ledgerPath, h.ledgerPath + "-wal"]) }
    }

    func isStorage(_ f: Failure?) -> Bool { if case .storage = f { return true }; return false }

    /// Claim without a key, ban and unban by device token, a pending order applied: with the ledger
    /// unwritable none of them reaches Apple's update, each fails as `.storage`, and readiness fails.
    @Test(arguments: Damage.allCases)
    func noAppleWriteWhenTheIntentCannotBeRecorded(damage: Damage) async throws {
        try await withPolicy(Self.roles) { h in
            let claimer = try h.newDevice()
            let banned = try h.newDevice()
            let pending = try h.newDevice()
            _ = try await h.useCases.orderPending(.ban, installID: "install-1", reason: "fraud", client: "admin")
            try await h.ledger.checkHealth()
            let updatesBefore = h.calls(.update)

            try Self.damage(damage, h)
            defer { Self.undo(damage, h) }

            #expect(isStorage(await failure { try await h.useCases.claim("spring", token: claimer.token, client: "marketing") }))
            #expect(isStorage(await failure { try await h.useCases.setBanned(true, token: banned.token, reason: "r", client: "admin") }))
            #expect(isStorage(await failure { try await h.useCases.setBanned(false, token: banned.token, reason: nil, client: "admin") }))
            #expect(isStorage(await failure { try await h.useCases.admit(token: pending.token, installID: "install-1", client: "api") }))
            #expect(h.calls(.update) == updatesBefore, "Apple was written although the intent could not be recorded")
            for device in [claimer, banned, pending] { #expect(try h.state(device.id).updates == 0) }
            await #expect(throws: StorageError.self) { try await h.ledger.checkHealth() }
        }
    }

    /// A pending order taken from the ledger whose write intent then cannot be recorded (a trigger refuses the
    /// intent's row; everything else still writes) is not applied to Apple's bits. With the whole file damaged,
    /// above, taking the order fails first and the intent is never reached.
    @Test func aTakenPendingOrderIsNotAppliedWhenItsIntentCannotBeRecorded() async throws {
        try await withPolicy(Self.roles) { h in
            let pending = try h.newDevice()
            _ = try await h.useCases.orderPending(.ban, installID: "install-1", reason: "fraud", client: "admin")
            let updatesBefore = h.calls(.update)
            try SQLiteConnection(path: h.ledgerPath).execute(
                "CREATE TRIGGER refuse_intents BEFORE INSERT ON write_intents BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END")
            #expect(isStorage(await failure { try await h.useCases.admit(token: pending.token, installID: "install-1", client: "api") }))
            #expect(h.calls(.update) == updatesBefore, "Apple was written although the intent could not be recorded")
            #expect(try h.state(pending.id).updates == 0)
            // The order was given back, not lost: once intents can be written, the next install applies it.
            try SQLiteConnection(path: h.ledgerPath).execute("DROP TRIGGER refuse_intents")
            let admitted = await failure { try await h.useCases.admit(token: pending.token, installID: "install-1", client: "api") }
            #expect(admitted?.description == "deviceBanned", "the pending ban applied, the install refused")
            #expect(try h.state(pending.id).updates == 1)
        }
    }

    /// The install counter's write path too (counter layout).
    @Test(arguments: [Damage.readOnly, .deleted])
    func noInstallRegistrationWriteWhenTheIntentCannotBeRecorded(damage: Damage) async throws {
        try await withPolicy(Self.counter) { h in
            let device = try h.newDevice()
            _ = try await h.useCases.registerInstall(token: device.token, installID: "i-1", client: "api")
            let updatesBefore = h.calls(.update)
            try Self.damage(damage, h)
            defer { Self.undo(damage, h) }
            #expect(isStorage(await failure { try await h.useCases.registerInstall(token: try h.token(device.id), installID: "i-1", client: "api") }))
            #expect(h.calls(.update) == updatesBefore)
            #expect(try h.state(device.id).updates == 1)
        }
    }

    /// Starts a claim whose first update the sandbox holds `milliseconds` (then answers 503; the retry
    /// writes), and returns it with the claim events' results as soon as the ledger shows any (5 s at most).
    static func claimWithTheUpdateHeld(_ milliseconds: Int, _ d: (id: String, token: DeviceToken), _ h: PolicyHarness) async throws
        -> (claim: Task<ClaimOutcome, any Error>, seen: [AuditResult]) {
        h.sandbox.inject(Fault(kind: .timeout, count: 1, endpoint: AppleEndpoint.update.rawValue, delayMilliseconds: milliseconds))
        let claim = Task { try await h.useCases.claim("spring", token: d.token, client: "marketing") }
        var seen: [AuditResult] = []
        for _ in 0..<250 where seen.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
            seen = try await h.audit().filter { $0.action == "promotion.claim" }.map(\.result)
        }
        return (claim, seen)
    }

    /// The write is audited `pending` before Apple is called: the event is in the ledger while the update
    /// is on its way.
    @Test func theIntentIsAuditedBeforeTheUpdate() async throws {
        try await withPolicy(clientTimeoutMilliseconds: 6_000, Self.roles) { h in
            let d = try h.newDevice()
            // The first update is held 1.5 s (then answered 503, retried, written): the intent must be there meanwhile.
            let (claim, seen) = try await Self.claimWithTheUpdateHeld(1_500, d, h)
            #expect(seen == [.pending], "no pending intent while the update was held")
            _ = try await claim.value
            let event = try await #require(try h.audit().first { $0.action == "promotion.claim" })
            #expect(event.result == .ok && event.intentID != nil && event.transactionID != nil)
        }
    }

    /// The ledger fails between the update and its resolution: the claim still answers (Apple wrote), the
    /// event stays `pending` while the ledger is down, and the resolution is saved once it is back, by the
    /// retry the service runs every second, without a restart.
    @Test func aResolutionLostToAnOutageIsSavedWhenTheLedgerIsBack() async throws {
        try await withPolicy(clientTimeoutMilliseconds: 6_000, Self.roles) { h in
            let d = try h.newDevice()
            let (claim, seen) = try await Self.claimWithTheUpdateHeld(1_000, d, h)
            try #require(seen == [.pending])
            try Self.damage(.readOnly, h)
            var undone = false
            defer { if !undone { Self.undo(.readOnly, h) } }
            let outcome = try await claim.value
            let updates = try h.state(d.id).updates
            #expect(outcome.transactionID != nil && updates == 1)
            #expect(h.useCases.unsavedResolutionCount == 1)
            await h.useCases.retryUnsavedResolutions()
            #expect(h.useCases.unsavedResolutionCount == 1, "kept while the ledger still refuses writes")
            Self.undo(.readOnly, h)
            undone = true
            let stillPending = try await h.audit().first { $0.action == "promotion.claim" }?.result
            #expect(stillPending == .pending)
            await h.useCases.retryUnsavedResolutions()
            #expect(h.useCases.unsavedResolutionCount == 0)
            let event = try await #require(try h.audit().first { $0.action == "promotion.claim" })
            #expect(event.result == .ok && event.transactionID == outcome.transactionID, "\(event)")
        }
    }

    /// Item 7: an update that times out after Apple wrote is `unknown`, never `failed`; the retry's own
    /// query settles it `ok` (and the retry, resuming, answers the claim without writing again).
    @Test func aTimedOutWriteThatLandedIsUnknownThenSettledOk() async throws {
        try await withPolicy(clientTimeoutMilliseconds: AppleFailureTests.updateOnlyTimeout, Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.inject(Fault(kind: .timeout, count: 1_000, endpoint: AppleEndpoint.update.rawValue, delayMilliseconds: 2_500, apply: true))
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "marketing") }?.isAppleUnavailable == true)
            #expect(try h.query(d.id) == state(1, 0, h.month), "the sandbox wrote")
            var event = try await #require(try h.audit().first { $0.action == "promotion.claim" })
            #expect(event.result == .unknown, "a write of unknown outcome was audited \(event.result)")
            #expect(event.bitsAfter == "(1,0)@\(h.month)")

            h.sandbox.clearFaults()
            let outcome = try await h.useCases.claim("spring", token: d.token, client: "marketing", resuming: true)
            #expect(outcome.transactionID == nil)
            event = try await #require(try h.audit().first { $0.id == event.id })
            #expect(event.result == .ok, "\(event)")
            #expect(event.reason?.contains("settled by a later query") == true)
            await #expect(try h.audit().filter { $0.action == "promotion.claim" }.count == 1)
        }
    }

    /// An update that timed out without landing is `unknown`, and the retry's query settles it `failed`
    /// before the retry writes (its own event `ok`).
    @Test func aTimedOutWriteThatDidNotLandIsSettledFailed() async throws {
        try await withPolicy(clientTimeoutMilliseconds: AppleFailureTests.updateOnlyTimeout, Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.inject(Fault(kind: .timeout, count: 1_000, endpoint: AppleEndpoint.update.rawValue, delayMilliseconds: 2_500))
            #expect(await failure { try await h.useCases.setBanned(true, token: d.token, reason: "r", client: "admin") } != nil)
            let first = try await #require(try h.audit().first { $0.action == "ban" })
            #expect(first.result == .unknown)
            h.sandbox.clearFaults()
            _ = try await h.useCases.setBanned(true, token: d.token, reason: "r", client: "admin")
            let events = try await h.audit().filter { $0.action == "ban" }
            #expect(events.first { $0.id == first.id }?.result == .failed)
            #expect(events.first { $0.id != first.id }?.result == .ok)
        }
    }

    /// Item 8: a 200 to an update with a body (Apple's success body is empty) is ambiguous: never success,
    /// audited `unknown`.
    @Test func aTwoHundredWithABodyIsNotSuccess() async throws {
        try await withPolicy(clientTimeoutMilliseconds: AppleFailureTests.updateOnlyTimeout, Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.inject(Fault(kind: .status, status: 200, body: #"{"error":"try later"}"#, count: 1_000, endpoint: AppleEndpoint.update.rawValue))
            let f = await failure { try await h.useCases.claim("spring", token: d.token, client: "marketing") }
            #expect(f?.isAppleUnavailable == true, "\(String(describing: f))")
            await #expect(try h.audit().first { $0.action == "promotion.claim" }?.result == .unknown)
        }
    }

    /// Item 7, crash: an intent left `pending` by a process that stopped becomes `unknown` at start-up, and
    /// the next request with the same device token settles it from its query.
    @Test func interruptedWritesAreReconciledAtStartAndSettledByTheNextQuery() async throws {
        try await withPolicy(Self.roles) { h in
            let landed = try h.newDevice()
            let lost = try h.newDevice()
            for (device, written) in [(landed, true), (lost, false)] {
                // What a killed process leaves behind: the intent recorded, maybe written, never resolved.
                try await h.ledger.recordWriteIntent(WriteIntent(
                    id: UUID().uuidString, tokenPrefix: device.token.shortDigest, bits: Bits(bit0: false, bit1: true), month: h.month, successResult: .ok,
                    event: AuditEvent(client: "admin", action: "ban", bitsBefore: "never-set", bitsAfter: "(0,1)@\(h.month)", result: .pending,
                                      tokenPrefix: device.token.shortDigest)))
                if written { _ = h.sandbox.seed(device.id, bits: bits(0, 1), lastUpdated: h.month) }
            }
            #expect(try await h.useCases.reconcileInterruptedWrites() == 2)
            await #expect(try h.audit().map(\.result) == [.unknown, .unknown])
            #expect(try await h.useCases.reconcileInterruptedWrites() == 0)

            _ = try await h.useCases.inspect(token: landed.token)  // a read alone settles nothing
            await #expect(try h.audit().map(\.result) == [.unknown, .unknown])
            #expect(await failure { try await h.useCases.claim("spring", token: landed.token, client: "marketing") } == .deviceBanned)
            _ = try await h.useCases.setBanned(true, token: lost.token, reason: "r", client: "admin")
            let events = try await h.audit()
            #expect(events.first { $0.tokenPrefix == landed.token.shortDigest }?.result == .ok)
            #expect(events.filter { $0.tokenPrefix == lost.token.shortDigest }.map(\.result) == [.ok, .failed])
        }
    }

    /// An `unknown` write is settled `ok` only when the device shows the intended bits (typed `Bits`, not their
    /// text) stamped in the intent's month or later: other bits in the same month, or the intended bits stamped
    /// a month earlier, settle it `failed`.
    @Test func anUnknownWriteIsSettledByBothTheBitsAndTheMonthTheDeviceShows() async throws {
        try await withPolicy(Self.roles) { h in
            var intents: [(id: String, device: (id: String, token: DeviceToken), expected: AuditResult)] = []
            for (shown, month, expected) in [(bits(0, 1), h.month, AuditResult.ok), (bits(1, 0), h.month, .failed),
                                             (bits(0, 1), h.month(-1), .failed)] {
                let device = try h.newDevice()
                let id = UUID().uuidString
                try await h.ledger.recordWriteIntent(WriteIntent(
                    id: id, tokenPrefix: device.token.shortDigest, bits: Bits(bit0: false, bit1: true), month: h.month, successResult: .ok,
                    event: AuditEvent(client: "admin", action: "ban", bitsBefore: "never-set", bitsAfter: "(0,1)@\(h.month)", result: .pending,
                                      tokenPrefix: device.token.shortDigest)))
                _ = h.sandbox.seed(device.id, bits: shown, lastUpdated: month)
                intents.append((id, device, expected))
            }
            #expect(try await h.useCases.reconcileInterruptedWrites() == 3)
            for intent in intents { _ = try await h.useCases.setBanned(true, token: intent.device.token, reason: "r", client: "admin") }
            let events = try await h.audit()
            for intent in intents {
                #expect(events.first { $0.intentID == intent.id }?.result == intent.expected, "\(intent)")
            }
        }
    }

    /// Item 6: readiness proves a write (a read-only ledger is not ready) and notices a file that is no
    /// longer the file at its path.
    @Test(arguments: [Damage.readOnly, .deleted, .replaced])
    func readinessFailsOnAnUnwritableOrMissingFile(damage: Damage) async throws {
        try await withPolicy(Self.roles) { h in
            try await h.ledger.checkHealth()
            try Self.damage(damage, h)
            defer { Self.undo(damage, h) }
            await #expect(throws: StorageError.self) { try await h.ledger.checkHealth() }
        }
    }

    /// The cached verdict never hides a deleted file: the inode check runs on every call.
    @Test func aCachedVerdictStillNoticesADeletedFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("l.sqlite").path
        let ledger = try SQLiteLedger(path: path, healthProbeInterval: .seconds(600))
        try await ledger.checkHealth()
        try FileManager.default.removeItem(atPath: path)
        await #expect(throws: StorageError.self) { try await ledger.checkHealth() }
        await #expect(throws: StorageError.self) { try await ledger.record(AuditEvent(client: "t", action: "ban", result: .ok)) }
    }

    /// Item 9: the database and its -wal and -shm are created readable by the service's user only.
    @Test func theDatabaseFilesAreCreatedOwnerOnly() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            for suffix in ["", "-wal", "-shm"] {
                let mode = try FileManager.default.attributesOfItem(atPath: h.ledgerPath + suffix)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(suffix.isEmpty ? "database" : suffix) has mode \(String(mode ?? 0, radix: 8))")
            }
        }
    }

    /// A database of schema version 2 (before write intents) migrates: old events read back, new writes
    /// carry an intent id.
    @Test func aVersionTwoDatabaseMigrates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        do {
            let db = try SQLiteConnection(path: path)
            for step in SchemaMigrations.steps.prefix(2) {
                for statement in step.split(separator: ";") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    try db.execute(String(statement))
                }
            }
            try db.execute("PRAGMA user_version = 2")
            try db.execute("INSERT INTO audit_events (at_ms, client, action, result) VALUES (1000, 'admin', 'ban', 'ok')")
        }
        let ledger = try SQLiteLedger(path: path)
        #expect(ledger.schemaVersion == SchemaMigrations.steps.count && ledger.schemaVersion == 9)
        let old = try #require(try await ledger.auditEvents(limit: 10, before: nil).first)
        #expect(old.action == "ban" && old.intentID == nil)
        try await ledger.recordWriteIntent(WriteIntent(id: "intent-1", tokenPrefix: "abcdefabcdef", bits: Bits(bit0: true, bit1: false), month: YearMonth(year: 2026, month: 11)!, successResult: .ok,
                                                 event: AuditEvent(client: "m", action: "promotion.claim", result: .pending)))
        try await ledger.resolveWriteIntent(id: "intent-1", result: .unknown, bitsAfter: "(1,0)@2026-11", reason: nil, transactionID: nil)
        #expect(try await ledger.unknownWriteIntents(tokenPrefix: "abcdefabcdef", limit: 5).map(\.id) == ["intent-1"])
        try await ledger.checkHealth()
    }
}

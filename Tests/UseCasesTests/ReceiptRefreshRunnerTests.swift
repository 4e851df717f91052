import Foundation
import Ledger
import Locking
import SQLiteLedger
import TestSupport
import Testing
import UseCases

/// A `ReceiptRenewing` that answers from a script, per key, and counts its calls (the real one, Apple's
/// client and the receipt verifier, is built at the composition root).
final class ScriptedRenewer: ReceiptRenewing {
    private let state = Lock<(script: [String: [ReceiptRenewal]], calls: [String])>(([:], []))

    init(_ script: [String: [ReceiptRenewal]]) { state.withLock { $0.script = script } }

    var calls: [String] { state.withLock { $0.calls } }

    func renew(receipt: Data, key: AppAttestKeyRecord, now: Date) async -> ReceiptRenewal {
        state.withLock { s in
            s.calls.append(key.keyID)
            guard var answers = s.script[key.keyID], !answers.isEmpty else { return .unavailable("no answer scripted") }
            let answer = answers.removeFirst()
            s.script[key.keyID] = answers
            return answer
        }
    }
}

/// The runner end to end on a real SQLite file: two runners (replicas) share it; each key reaches the
/// renewer once per due time, a renewed metric is stored with its history, 404 stops the key, a 429
/// backs off.
struct ReceiptRefreshRunnerTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func key(_ id: String, firstSeen: Date) -> AppAttestKeyRecord {
        AppAttestKeyRecord(keyID: id, publicKey: Data([0x04] + [UInt8](repeating: 7, count: 64)), receipt: Data([0x30, 0x80]),
                           environment: .production, appID: "TEAMID1234.com.example.app", firstSeen: firstSeen)
    }

    func renewed(_ metric: Int, at time: Date) -> ReceiptRenewal {
        .renewed(RenewedReceipt(receipt: Data([UInt8(metric)]), riskMetric: metric, creation: time, notBefore: time.addingTimeInterval(86_400),
                                expiration: time.addingTimeInterval(90 * 86_400)))
    }

    @Test func twoReplicasRenewEachKeyOnceAndStoreWhatCameBack() async throws {
        let directory = try makeTemporaryDirectory(prefix: "receipt-runner-")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/ledger.sqlite"
        let ledger = try SQLiteLedger(path: path)
        for id in ["a", "b", "c", "gone", "busy"] { #expect(try await ledger.storeAppAttestKey(Self.key(id, firstSeen: start))) }
        let renewer = ScriptedRenewer(["a": [renewed(2, at: start)], "b": [renewed(9, at: start)], "c": [.notYet],
                                       "gone": [.noData], "busy": [.throttled]])
        let clock = Lock(start)
        let reports = Lock<[ReceiptRefreshReport]>([])
        let replicas = (0..<2).map { i in
            ReceiptRefreshRunner(settings: ReceiptRefreshSettings(maxRefreshesPerSecond: 5), store: try! SQLiteLedger(path: path), renewer: renewer,
                                 owner: "replica-\(i)", clock: { clock.withLock { $0 } }, jitter: { 1 },
                                 onReport: { report in reports.withLock { $0.append(report) } })
        }
        await withTaskGroup(of: Void.self) { group in
            for replica in replicas { group.addTask { for _ in 0..<3 { await replica.step() } } }
        }
        #expect(renewer.calls.sorted() == ["a", "b", "busy", "c", "gone"], "each due key reached Apple once: \(renewer.calls)")
        #expect(try await ledger.appAttestReceiptState(keyID: "a")?.riskMetric == 2)
        #expect(try await ledger.appAttestKey(id: "b")?.riskMetric == 9)
        #expect(try await ledger.appAttestKey(id: "b")?.receipt == Data([9]), "the renewed receipt replaced the attestation's")
        #expect(try await ledger.appAttestReceiptState(keyID: "gone")?.stoppedAt == start)
        #expect(Set(reports.withLock { $0 }.map(\.outcome)).isSuperset(of: [.renewed, .notYet, .noData, .throttled]))

        // A day later: the renewed keys are due again (their not-before), the 304 one too (an hour), the
        // stopped one never; the throttled one came back after its back-off.
        clock.withLock { $0 = start.addingTimeInterval(86_400) }
        let later = ScriptedRenewer([:])
        let runner = ReceiptRefreshRunner(settings: ReceiptRefreshSettings(), store: ledger, renewer: later,
                                          owner: "replica-2", clock: { clock.withLock { $0 } }, jitter: { 1 })
        await runner.step()
        // Every key but the stopped one is due; the first answer (unscripted: an outage) pauses the rest.
        #expect(later.calls.count == 1 && !later.calls.contains("gone"), "\(later.calls)")
        func due(at time: Date) async throws -> [String] {
            try await ledger.leaseDueReceipts(owner: "x", until: time.addingTimeInterval(1), activeSince: start, now: time, limit: 10).map(\.keyID)
        }
        #expect(try await due(at: start.addingTimeInterval(86_410)).isEmpty, "the back-off (30 s) holds every key back")
        #expect(Set(try await due(at: start.addingTimeInterval(86_431))) == ["a", "b", "c", "busy"], "then all but the stopped one")
    }
}


import Foundation
import Ledger
import Testing

/// App Attest receipts: the refresher's leases (one owner per key), what is due, the renewed receipt and
/// its metric with a history of ten, the stop after Apple's 404, the back-off, and the list by metric.
@Suite("Ledger contract: App Attest receipts")
struct AppAttestReceiptContractTests {
    let now = Date.ms(1_800_000_000_000)
    var activeSince: Date { now.addingTimeInterval(-30 * 86_400) }

    func lease(_ ledger: any Ledger, _ owner: String, at time: Date? = nil, limit: Int = 100) async throws -> [String] {
        let at = time ?? now
        return try await ledger.leaseDueReceipts(owner: owner, until: at.addingTimeInterval(120), activeSince: at.addingTimeInterval(-30 * 86_400),
                                                 now: at, limit: limit).map(\.keyID)
    }

    @Test(arguments: Backend.all)
    func twoOwnersNeverLeaseTheSameKey(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let replicas = [try store.open(), try store.open(), try store.open()]
            for i in 0..<30 { #expect(try await replicas[0].storeAppAttestKey(AppAttestContractTests.key("k\(i)", firstSeen: now))) }
            let leased = try await withThrowingTaskGroup(of: [String].self) { group in
                for i in 0..<6 { group.addTask { try await lease(replicas[i % 3], "owner-\(i)", limit: 7) } }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(leased.count == 30, "every due key leased once: \(leased.count)")
            #expect(Set(leased).count == leased.count, "no key leased twice")
            #expect(try await lease(replicas[1], "late").isEmpty, "a running lease keeps the key from others")
            // After the lease runs out, another owner takes the key over.
            #expect(try await lease(replicas[1], "late", at: now.addingTimeInterval(121)).count == 30)
        }
    }

    @Test(arguments: Backend.all)
    func onlyKeysUsedLatelyNotRevokedAndPastTheirNotBeforeAreDue(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("fresh", firstSeen: now)))
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("quiet", firstSeen: now.addingTimeInterval(-31 * 86_400))))
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("asserted", firstSeen: now.addingTimeInterval(-40 * 86_400))))
            #expect(try await ledger.advanceAppAttestCounter(keyID: "asserted", to: 1, now: now.addingTimeInterval(-86_400)) == .advanced)
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("revoked", firstSeen: now)))
            #expect(try await ledger.revoke(keyID: "revoked", reason: "x", now: now))
            #expect(Set(try await lease(ledger, "a")) == ["fresh", "asserted"], "an attestation's receipt has no not-before: due at once")

            // Renewed: due again at its not-before, not before.
            let notBefore = now.addingTimeInterval(86_400)
            #expect(try await ledger.storeRenewedReceipt(keyID: "fresh", owner: "a", receipt: Data([1]), riskMetric: 2, notBefore: notBefore,
                                                         expiration: now.addingTimeInterval(90 * 86_400), now: now))
            #expect(try await ledger.storeRenewedReceipt(keyID: "asserted", owner: "a", receipt: Data([2]), riskMetric: 1,
                                                         notBefore: notBefore.addingTimeInterval(3_600), expiration: now.addingTimeInterval(90 * 86_400), now: now))
            #expect(try await lease(ledger, "b", at: now.addingTimeInterval(600)).isEmpty, "the lease ended, but neither not-before has passed")
            #expect(try await lease(ledger, "b", at: notBefore) == ["fresh"], "due at its not-before")
        }
    }

    @Test(arguments: Backend.all)
    func aRenewedReceiptReplacesTheOldAndTheHistoryKeepsTen(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("k", firstSeen: now)))
            #expect(try await ledger.appAttestReceiptState(keyID: "k")?.riskMetric == nil)
            #expect(try await ledger.appAttestReceiptState(keyID: "nobody") == nil)
            var at = now
            for metric in 1...12 {
                #expect(try await lease(ledger, "a", at: at) == ["k"])
                #expect(try await ledger.storeRenewedReceipt(keyID: "k", owner: "a", receipt: Data([UInt8(metric)]), riskMetric: metric,
                                                             notBefore: at.addingTimeInterval(86_400), expiration: at.addingTimeInterval(90 * 86_400), now: at))
                #expect(try await ledger.storeRenewedReceipt(keyID: "k", owner: "a", receipt: Data([0]), riskMetric: 99,
                                                             notBefore: nil, expiration: at, now: at) == false, "the lease ended with the first store")
                at = at.addingTimeInterval(86_400)
            }
            let last = at.addingTimeInterval(-86_400)
            let state = try #require(try await ledger.appAttestReceiptState(keyID: "k"))
            #expect(state.riskMetric == 12 && state.riskMetricAt == last)
            #expect(state.history.map(\.metric) == Array((3...12).reversed()), "the last ten, newest first")
            #expect(state.notBefore == last.addingTimeInterval(86_400) && state.expiresAt == last.addingTimeInterval(90 * 86_400))
            let key = try #require(try await ledger.appAttestKey(id: "k"))
            #expect(key.receipt == Data([12]) && key.riskMetric == 12, "the renewed receipt replaced the attestation's")
        }
    }

    @Test(arguments: Backend.all)
    func aStoppedKeyIsNeverDueAgainAndABackOffHoldsItBack(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("gone", firstSeen: now)))
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("busy", firstSeen: now)))
            #expect(Set(try await lease(ledger, "a")) == ["gone", "busy"])
            try await ledger.stopReceiptRefresh(keyID: "gone", owner: "a", now: now)
            try await ledger.postponeReceiptRefresh(keyID: "busy", owner: "a", retryAt: now.addingTimeInterval(60))
            #expect(try await ledger.appAttestReceiptState(keyID: "gone")?.stoppedAt == now)
            #expect(try await lease(ledger, "b", at: now.addingTimeInterval(30)).isEmpty, "backing off, and stopped")
            #expect(try await lease(ledger, "b", at: now.addingTimeInterval(10 * 86_400)) == ["busy"], "the stopped key never comes back")
        }
    }

    @Test(arguments: Backend.all)
    func keysAreListedByMinimumMetricInPages(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            for (id, metric) in [("a", 1), ("b", 7), ("c", 12), ("d", nil as Int?), ("e", 5)] {
                #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key(id, firstSeen: now)))
                guard let metric else { continue }
                _ = try await lease(ledger, "o")
                #expect(try await ledger.storeRenewedReceipt(keyID: id, owner: "o", receipt: Data([1]), riskMetric: metric, notBefore: now.addingTimeInterval(86_400),
                                                             expiration: now.addingTimeInterval(86_400 * 90), now: now))
            }
            #expect(try await ledger.appAttestKeys(minRiskMetric: 5, after: nil, limit: 10).map(\.keyID) == ["b", "c", "e"])
            #expect(try await ledger.appAttestKeys(minRiskMetric: 5, after: nil, limit: 2).map(\.keyID) == ["b", "c"])
            #expect(try await ledger.appAttestKeys(minRiskMetric: 5, after: "c", limit: 2).map(\.keyID) == ["e"])
            #expect(try await ledger.appAttestKeys(minRiskMetric: 0, after: nil, limit: 10).count == 4, "a key without a metric is not listed")
        }
    }

    /// The admin's page of keys is one read: each key with the receipt state a read of that key alone gives.
    @Test(arguments: Backend.all)
    func aPageOfKeysComesWithEachKeysReceiptStateInOneRead(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            for id in ["a", "b", "c", "d", "e"] { #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key(id, firstSeen: now))) }
            // Renewed on three days (b, c, d, e) with metrics that differ per key and per day: histories of several samples.
            for day in 0..<3 {
                let at = now.addingTimeInterval(Double(day) * 2 * 86_400)
                for id in try await lease(ledger, "o", at: at) where id != "a" {
                    let metric = (id == "d" ? 1 : 5) + day * 3 + Int(id.unicodeScalars.first!.value % 7)
                    #expect(try await ledger.storeRenewedReceipt(keyID: id, owner: "o", receipt: Data([UInt8(day)]), riskMetric: metric,
                                                                 notBefore: at.addingTimeInterval(86_400), expiration: at.addingTimeInterval(86_400 * 90), now: at))
                }
            }
            for (minimum, after, limit) in [(5, nil as String?, 10), (5, nil, 2), (5, "c", 2), (0, nil, 10), (100, nil, 10)] {
                let page = try await ledger.appAttestKeyReceipts(minRiskMetric: minimum, after: after, limit: limit)
                let keys = try await ledger.appAttestKeys(minRiskMetric: minimum, after: after, limit: limit)
                #expect(page.map(\.key) == keys, "the same page as appAttestKeys (\(minimum), \(String(describing: after)), \(limit))")
                for (key, receipt) in page {
                    #expect(receipt == (try await ledger.appAttestReceiptState(keyID: key.keyID)), "key \(key.keyID)")
                }
            }
            let all = try await ledger.appAttestKeyReceipts(minRiskMetric: 0, after: nil, limit: 10)
            #expect(all.map(\.key.keyID) == ["b", "c", "d", "e"], "a key without a metric is not listed")
            #expect(all.allSatisfy { $0.receipt.history.count == 3 }, "\(all.map(\.receipt.history))")
        }
    }

    @Test(arguments: Backend.all)
    func theReceiptRenewedAtAttestationIsStoredOnlyWhileNoLeaseIsHeld(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("new", firstSeen: now)))
            let notBefore = now.addingTimeInterval(86_400)
            #expect(try await ledger.storeAttestationReceipt(keyID: "new", receipt: Data([7]), riskMetric: 3, notBefore: notBefore,
                                                             expiration: now.addingTimeInterval(90 * 86_400), now: now))
            let state = try #require(try await ledger.appAttestReceiptState(keyID: "new"))
            #expect(state.riskMetric == 3 && state.riskMetricAt == now && state.history.map(\.metric) == [3] && state.notBefore == notBefore)
            #expect(try await ledger.appAttestKey(id: "new")?.receipt == Data([7]))
            #expect(try await lease(ledger, "a").isEmpty, "not due before the renewed receipt's not-before")
            // A key a refresher holds is the refresher's: the attestation's copy is not written over it.
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("held", firstSeen: now)))
            #expect(try await lease(ledger, "a") == ["held"])
            #expect(try await ledger.storeAttestationReceipt(keyID: "held", receipt: Data([8]), riskMetric: 9, notBefore: nil,
                                                             expiration: now, now: now) == false)
            #expect(try await ledger.appAttestReceiptState(keyID: "held")?.riskMetric == nil)
            #expect(try await ledger.storeAttestationReceipt(keyID: "unknown", receipt: Data([8]), riskMetric: 1, notBefore: nil,
                                                             expiration: now, now: now) == false)
        }
    }

    @Test(arguments: Backend.all)
    func keysWithoutAMetricPastTheGraceAreCounted(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let old = now.addingTimeInterval(-3 * 86_400)
            for id in ["old-unknown", "old-known", "old-revoked"] {
                #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key(id, firstSeen: old)))
            }
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("new-unknown", firstSeen: now)))
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("idle-unknown", firstSeen: now.addingTimeInterval(-40 * 86_400))))
            #expect(try await ledger.storeAttestationReceipt(keyID: "old-known", receipt: Data([1]), riskMetric: 2, notBefore: nil,
                                                             expiration: now, now: old))
            #expect(try await ledger.revoke(keyID: "old-revoked", reason: "test", now: now))
            let count = try await ledger.countAppAttestKeysWithUnknownMetric(attestedBefore: now.addingTimeInterval(-2 * 86_400), activeSince: activeSince)
            #expect(count == 1, "only old-unknown: new-unknown is within the grace, idle-unknown unused for 40 days")
        }
    }
}

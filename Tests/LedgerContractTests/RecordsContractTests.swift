import Foundation
import Ledger
import Testing

/// Pending orders by install id, replay protection, debug secrets and key activations.
@Suite("Ledger contract: records")
struct RecordsContractTests {
    let now = Date.ms(1_800_000_000_000)

    @Test(arguments: Backend.all)
    func pendingActionsAreKeptOnePerInstallNewestFirst(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.pendingActions().isEmpty)
            #expect(try await ledger.pendingAction(installID: "a") == nil)
            let a = PendingDeviceAction(installID: "a", kind: .ban, reason: "fraud", client: "admin", createdAt: .ms(1_000))
            let b = PendingDeviceAction(installID: "b", kind: .unban, reason: nil, client: "admin", createdAt: .ms(2_000))
            try await ledger.order(a)
            try await ledger.order(b)
            #expect(try await ledger.pendingActions() == [b, a])
            #expect(try await ledger.pendingAction(installID: "a") == a)

            let replaced = PendingDeviceAction(installID: "a", kind: .unban, reason: "appeal", client: "support", createdAt: .ms(3_000))
            try await ledger.order(replaced)
            #expect(try await ledger.pendingActions() == [replaced, b], "a later order replaces the earlier one")

            try await ledger.removePendingAction(installID: "a")
            try await ledger.removePendingAction(installID: "none")
            #expect(try await ledger.pendingActions() == [b])
        }
    }

    @Test(arguments: Backend.all)
    func aPendingOrderIsTakenOnceReleasedOrCompleted(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let ban = PendingDeviceAction(installID: "a", kind: .ban, reason: "fraud", client: "admin", createdAt: .ms(1_000))
            #expect(try await ledger.claimPendingAction(installID: "a") == nil, "nothing pending")
            try await ledger.order(ban)
            #expect(try await ledger.claimPendingAction(installID: "a") == ban)
            #expect(try await ledger.claimPendingAction(installID: "a") == nil, "taken by this live process: a twin leaves it")
            #expect(try await ledger.pendingAction(installID: "a") == ban, "still listed while it is applied")

            try await ledger.releasePendingAction(installID: "a")
            #expect(try await ledger.claimPendingAction(installID: "a") == ban, "given back, taken again")
            try await ledger.completePendingAction(installID: "a")
            #expect(try await ledger.pendingAction(installID: "a") == nil)

            // A newer order set while the older one is being applied survives the older one's completion.
            try await ledger.order(ban)
            #expect(try await ledger.claimPendingAction(installID: "a") == ban)
            let unban = PendingDeviceAction(installID: "a", kind: .unban, reason: "appeal", client: "admin", createdAt: .ms(2_000))
            try await ledger.order(unban)
            try await ledger.completePendingAction(installID: "a")
            #expect(try await ledger.pendingAction(installID: "a") == unban)
            #expect(try await ledger.claimPendingAction(installID: "a") == unban)
        }
    }

    /// Another process (the next start on the same SQLite file, or another replica) takes over an order
    /// whose taker has stopped.
    @Test(arguments: Backend.all)
    func anOrderTakenByAStoppedProcessIsTakenOver(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let first = try store.open()
            let ban = PendingDeviceAction(installID: "a", kind: .ban, reason: nil, client: "admin", createdAt: .ms(1_000))
            try await first.order(ban)
            #expect(try await first.claimPendingAction(installID: "a") == ban)
            store.stop(first)
            let next = try store.open()
            #expect(try await next.claimPendingAction(installID: "a") == ban)
        }
    }

    @Test(arguments: Backend.all)
    func aDeviceTokenIsAcceptedOnceWithinItsWindow(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let until = now.addingTimeInterval(60)
            #expect(try await ledger.rememberDeviceToken(digest: "d1", until: until, now: now))
            #expect(try await ledger.rememberDeviceToken(digest: "d1", until: until, now: now) == false)
            #expect(try await ledger.rememberDeviceToken(digest: "d2", until: until, now: now))
            try await ledger.forgetDeviceToken(digest: "d1")
            #expect(try await ledger.rememberDeviceToken(digest: "d1", until: until, now: now), "forgotten after a transient failure")
            #expect(try await ledger.rememberDeviceToken(digest: "d1", until: until.addingTimeInterval(60), now: until.addingTimeInterval(-0.001)) == false)
            // Past its time the row counts as absent, and is replaced with the new window.
            #expect(try await ledger.rememberDeviceToken(digest: "d1", until: until.addingTimeInterval(60), now: until))
            #expect(try await ledger.rememberDeviceToken(digest: "d1", until: until.addingTimeInterval(120), now: until.addingTimeInterval(30)) == false)
        }
    }

    @Test(arguments: Backend.all)
    func aTokenIDIsConsumedOnce(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let until = now.addingTimeInterval(300)
            #expect(try await ledger.consumeTokenID("jti-1", until: until, now: now))
            #expect(try await ledger.consumeTokenID("jti-1", until: until, now: now.addingTimeInterval(1)) == false)
            #expect(try await ledger.consumeTokenID("jti-2", until: until, now: now))
            // Sweeps of expired rows never forget a live one (each call may sweep, at most once a second).
            #expect(try await ledger.consumeTokenID("jti-2", until: until, now: now.addingTimeInterval(5)) == false)
            #expect(try await ledger.consumeTokenID("jti-1", until: until.addingTimeInterval(300), now: until), "expired: consumable again")
            #expect(try await ledger.consumeTokenID("jti-1", until: until, now: until.addingTimeInterval(2)) == false)
        }
    }

    @Test(arguments: Backend.all)
    func debugSecretsAreUniqueByNameAndDigest(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.debugSecretNames().isEmpty)
            #expect(try await ledger.addDebugSecret(name: "qa-b", digest: "digest-b", now: .ms(2_000)))
            #expect(try await ledger.addDebugSecret(name: "qa-a", digest: "digest-a", now: .ms(1_000)))
            #expect(try await ledger.addDebugSecret(name: "QA-c", digest: "digest-c", now: .ms(3_000)))
            #expect(try await ledger.addDebugSecret(name: "qa-a", digest: "digest-new", now: now) == false, "name taken")
            #expect(try await ledger.addDebugSecret(name: "qa-new", digest: "digest-a", now: now) == false, "digest taken")
            let names = try await ledger.debugSecretNames()
            #expect(names.map(\.name) == ["QA-c", "qa-a", "qa-b"], "byte order")
            #expect(names.map(\.createdAt) == [.ms(3_000), .ms(1_000), .ms(2_000)])
            #expect(try await ledger.debugSecretName(digest: "digest-a") == "qa-a")
            #expect(try await ledger.debugSecretName(digest: "digest-new") == nil)
            #expect(try await ledger.deleteDebugSecret(name: "qa-a"))
            #expect(try await ledger.deleteDebugSecret(name: "qa-a") == false)
            #expect(try await ledger.debugSecretName(digest: "digest-a") == nil)
            #expect(try await ledger.addDebugSecret(name: "qa-a", digest: "digest-a", now: now), "free again")
        }
    }

    @Test(arguments: Backend.all)
    func keyActivationsKeepTheLatestTime(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.keyActivations().isEmpty)
            try await ledger.recordKeyActivation(kid: "k1", at: .ms(5_000))
            try await ledger.recordKeyActivation(kid: "k1", at: .ms(4_000))
            try await ledger.recordKeyActivation(kid: "k2", at: .ms(1_234))
            #expect(try await ledger.keyActivations() == ["k1": .ms(5_000), "k2": .ms(1_234)])
            try await ledger.recordKeyActivation(kid: "k1", at: .ms(6_001))
            #expect(try await ledger.keyActivations() == ["k1": .ms(6_001), "k2": .ms(1_234)])
            // Another ledger on the same store sees them (a restart, or another replica).
            let other = try store.open()
            #expect(try await other.keyActivations() == ["k1": .ms(6_001), "k2": .ms(1_234)])
        }
    }
}

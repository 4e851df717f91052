import Foundation
import Ledger
import Testing

/// App Attest's storage: one-time challenges, attested keys, the counter that only moves forward, revocation.
@Suite("Ledger contract: App Attest")
struct AppAttestContractTests {
    let now = Date.ms(1_800_000_000_000)

    static func key(_ id: String, counter: UInt32 = 0, firstSeen: Date = .ms(1_800_000_000_000)) -> AppAttestKeyRecord {
        AppAttestKeyRecord(keyID: id, publicKey: Data([0x04] + [UInt8](repeating: 7, count: 64)), counter: counter,
                           receipt: Data([0x30, 0x82, 0x00, 0x01, 0xFF]), environment: .production, appID: "TEAMID1234.com.example.app",
                           validationCategory: 4, firstSeen: firstSeen)
    }

    @Test(arguments: Backend.all)
    func aChallengeIsUsedOnceAndNotAfterItExpires(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let until = now.addingTimeInterval(300)
            #expect(try await ledger.issueAppAttestChallenge(digest: "c1", until: until, now: now))
            #expect(try await ledger.issueAppAttestChallenge(digest: "c2", until: until, now: now))
            #expect(try await ledger.consumeAppAttestChallenge(digest: "unknown", now: now) == false)
            #expect(try await ledger.consumeAppAttestChallenge(digest: "c1", now: now.addingTimeInterval(10)))
            #expect(try await ledger.consumeAppAttestChallenge(digest: "c1", now: now.addingTimeInterval(11)) == false, "used once")
            #expect(try await ledger.consumeAppAttestChallenge(digest: "c2", now: until) == false, "expired at its time")
        }
    }

    @Test(arguments: Backend.all)
    func aKeyIsStoredOnceAndReadBackWhole(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let key = Self.key("a2V5LWE=")
            #expect(try await ledger.appAttestKey(id: key.keyID) == nil)
            #expect(try await ledger.storeAppAttestKey(key))
            #expect(try await ledger.appAttestKey(id: key.keyID) == key)
            var other = Self.key("a2V5LWE=", counter: 9)
            other.appID = "OTHER.app"
            #expect(try await ledger.storeAppAttestKey(other) == false, "a second attestation of one key id changes nothing")
            #expect(try await ledger.appAttestKey(id: key.keyID) == key)
            var bare = Self.key("bare")
            bare.validationCategory = nil
            #expect(try await ledger.storeAppAttestKey(bare))
            #expect(try await ledger.appAttestKey(id: "bare")?.validationCategory == nil)
        }
    }

    @Test(arguments: Backend.all)
    func theCounterOnlyMovesForward(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(Self.key("k")))
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: 1) == .advanced)
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: 1) == .notIncreasing(stored: 1), "a replay")
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: 5) == .advanced)
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: 3) == .notIncreasing(stored: 5), "a stale assertion")
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: UInt32.max) == .advanced, "the whole 32-bit range")
            #expect(try await ledger.appAttestKey(id: "k")?.counter == UInt32.max)
            #expect(try await ledger.advanceAppAttestCounter(keyID: "nobody", to: 1) == .unknownKey)
        }
    }

    @Test(arguments: Backend.all)
    func aRevokedKeyNeverAdvancesAndKeepsItsFirstReason(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(Self.key("k")))
            #expect(try await ledger.revoke(keyID: "nobody", reason: "x", now: now) == false)
            #expect(try await ledger.revoke(keyID: "k", reason: "stolen phone", now: now))
            #expect(try await ledger.revoke(keyID: "k", reason: "again", now: now.addingTimeInterval(60)))
            let revoked = try await ledger.appAttestKey(id: "k")
            #expect(revoked?.revokedAt == now)
            #expect(revoked?.revokedReason == "stolen phone")
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: 10) == .revoked)
            #expect(try await ledger.appAttestKey(id: "k")?.counter == 0)
        }
    }

    @Test(arguments: Backend.all)
    func oneOfManyRacersWithTheSameCounterWins(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(Self.key("race")))
            let outcomes = try await withThrowingTaskGroup(of: CounterAdvance.self) { group in
                for _ in 0..<16 { group.addTask { try await ledger.advanceAppAttestCounter(keyID: "race", to: 7) } }
                return try await group.reduce(into: [CounterAdvance]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .advanced }.count == 1)
            #expect(outcomes.filter { $0 == .notIncreasing(stored: 7) }.count == 15)
        }
    }
}

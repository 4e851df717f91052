import Foundation
import Ledger
import Testing

/// Idempotency keys: one reservation per client and key for 24 hours, told apart by owner.
@Suite("Ledger contract: idempotency")
struct IdempotencyContractTests {
    let now = Date.ms(1_800_000_000_000)

    @Test(arguments: Backend.all)
    func beginReplayConflictAndTwins(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let me = "owner-" + UUID().uuidString
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: me, now: now) == .started)
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: me, now: now) == .inProgress)
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "other", owner: me, now: now) == .conflict)
            #expect(try await ledger.beginIdempotent(client: "other-client", key: "k", requestHash: "h", owner: me, now: now) == .started,
                    "keys are per client")

            let body = Data([0, 1, 2, 0xff, 0x7b, 0x22, 0])
            try await ledger.completeIdempotent(client: "c", key: "k", status: 201, body: body)
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: me, now: now) == .replay(status: 201, body: body))
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "someone-else", now: now)
                    == .replay(status: 201, body: body))
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "other", owner: me, now: now) == .conflict)
            try await ledger.completeIdempotent(client: "c", key: "empty", status: 500, body: Data())   // no such key: nothing happens
            #expect(try await ledger.beginIdempotent(client: "c", key: "empty", requestHash: "h", owner: me, now: now) == .started)
        }
    }

    @Test(arguments: Backend.all)
    func aKeyOfAGoneOwnerIsUnfinishedAndTakenOver(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let me = "owner-" + UUID().uuidString
            // An owner no running process holds (a crashed one).
            let gone = "owner-gone-" + UUID().uuidString
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: gone, now: now) == .started)
            try await ledger.recordIntent(client: "c", key: "k", intent: "(1,0)")
            store.stop(ledger)
            let next = try store.open()
            #expect(try await next.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: me, now: now) == .unfinished(intent: "(1,0)"))
            #expect(try await next.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: me, now: now) == .inProgress, "taken over")
        }
    }

    @Test(arguments: Backend.all)
    func abandonForgetsAKeyWithoutIntentAndKeepsOneWithIntentOwnerless(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let me = "owner-" + UUID().uuidString
            #expect(try await ledger.beginIdempotent(client: "c", key: "plain", requestHash: "h", owner: me, now: now) == .started)
            try await ledger.abandonIdempotent(client: "c", key: "plain")
            #expect(try await ledger.beginIdempotent(client: "c", key: "plain", requestHash: "h2", owner: me, now: now) == .started,
                    "forgotten: even another request may use the key")

            #expect(try await ledger.beginIdempotent(client: "c", key: "written", requestHash: "h", owner: me, now: now) == .started)
            try await ledger.recordIntent(client: "c", key: "written", intent: "(0,1)")
            try await ledger.abandonIdempotent(client: "c", key: "written")
            #expect(try await ledger.beginIdempotent(client: "c", key: "written", requestHash: "h", owner: me, now: now) == .unfinished(intent: "(0,1)"),
                    "kept without an owner: the retry must find out whether the write happened")

            // A completed key is never abandoned.
            #expect(try await ledger.beginIdempotent(client: "c", key: "done", requestHash: "h", owner: me, now: now) == .started)
            try await ledger.completeIdempotent(client: "c", key: "done", status: 200, body: Data("{}".utf8))
            try await ledger.abandonIdempotent(client: "c", key: "done")
            #expect(try await ledger.beginIdempotent(client: "c", key: "done", requestHash: "h", owner: "x", now: now)
                    == .replay(status: 200, body: Data("{}".utf8)))
        }
    }

    @Test(arguments: Backend.all)
    func aKeyExpiresAfterTwentyFourHours(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let me = "owner-" + UUID().uuidString
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: me, now: now) == .started)
            try await ledger.completeIdempotent(client: "c", key: "k", status: 201, body: Data("a".utf8))
            let almost = now.addingTimeInterval(24 * 3600 - 1)
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "other", owner: me, now: almost) == .conflict)
            let later = now.addingTimeInterval(24 * 3600 + 1)
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "other", owner: me, now: later) == .started)
        }
    }
}

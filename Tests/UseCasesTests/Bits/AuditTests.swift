import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// Every bit write and admin action leaves an audit event; the token itself is never stored.
@Suite("Audit trail")
struct AuditTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    func prefix(_ token: DeviceToken) -> String { String(ReferenceSHA256.hex(token.base64).prefix(12)) }

    @Test func theReferenceDigestMatchesKnownVectors() {
        #expect(ReferenceSHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(ReferenceSHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(ReferenceSHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func everyWriteRecordsWhoWhatBitsResultTransactionAndTokenPrefix() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            let t1 = d.token, t2 = try h.token(d.id), t3 = try h.token(d.id)
            let claim = try await h.useCases.claim("spring", token: t1, client: "marketing")
            _ = try await h.useCases.setBanned(true, token: t2, reason: "fraud", client: "admin")
            _ = try await h.useCases.setBanned(false, token: t3, reason: "appeal", client: "admin")

            let events = try await h.audit()
            try #require(events.count == 3)
            let (unban, ban, claimEvent) = (events[0], events[1], events[2])
            #expect(events.map(\.id) == events.map(\.id).sorted(by: >))

            #expect(claimEvent.client == "marketing" && claimEvent.action == "promotion.claim" && claimEvent.subject == "spring")
            #expect(claimEvent.bitsBefore == "never-set" && claimEvent.bitsAfter == "(1,0)@\(h.month)")
            #expect(claimEvent.result == .ok && claimEvent.reason == nil)
            #expect(claimEvent.transactionID == claim.transactionID)
            #expect(claimEvent.tokenPrefix == prefix(t1))
            #expect(claimEvent.at == h.date)

            #expect(ban.client == "admin" && ban.action == "ban" && ban.subject == nil && ban.reason == "fraud" && ban.result == .ok)
            #expect(ban.bitsBefore == "(1,0)@\(h.month)" && ban.bitsAfter == "(1,1)@\(h.month)")
            #expect(ban.tokenPrefix == prefix(t2))

            #expect(unban.client == "admin" && unban.action == "unban" && unban.reason == "appeal" && unban.result == .ok)
            #expect(unban.bitsBefore == "(1,1)@\(h.month)" && unban.bitsAfter == "(1,0)@\(h.month)")
            #expect(unban.tokenPrefix == prefix(t3))

            for (event, token) in zip(events, [t3, t2, t1]) {
                let transaction = try #require(event.transactionID)
                #expect(!transaction.isEmpty)
                #expect(event.tokenPrefix?.count == 12)
                #expect(event.tokenPrefix?.allSatisfy { "0123456789abcdef".contains($0) } == true)
                for field in [event.subject, event.bitsBefore?.description, event.bitsAfter?.description, event.reason, event.transactionID, event.tokenPrefix, event.client, event.action] {
                    #expect(field?.contains(token.base64.prefix(32)) != true)
                    #expect(field?.contains(ReferenceSHA256.hex(token.base64)) != true)
                }
            }
            #expect(Set(events.compactMap(\.transactionID)).count == 3)
        }
    }

    @Test func installRegistrationsAreAudited() async throws {
        try await withPolicy({ _ in PolicyConfiguration(layout: .reinstallCounter(banAt: 2)) }) { h in
            let d = try h.newDevice()
            let token = d.token
            let outcome = try await h.useCases.registerInstall(token: token, installID: "install-1", client: "api")
            #expect(outcome.reinstalls == 0)
            let event = try await #require(try h.audit().first)
            #expect(event.client == "api" && event.action == "install.register" && event.subject == "install-1")
            #expect(event.bitsBefore == "never-set" && event.bitsAfter == "(0,0)@\(h.month)" && event.result == .ok)
            #expect(event.transactionID?.isEmpty == false)
            #expect(event.tokenPrefix == prefix(token))
        }
    }

    /// Neither the token nor its full digest reaches the ledger file (or its WAL).
    @Test func theLedgerFilesNeverHoldTheToken() async throws {
        var tokens: [DeviceToken] = []
        var directory: URL?
        try await withPolicy(Self.roles) { h in
            directory = h.directory
            let d = try h.newDevice()
            tokens = [d.token, try h.token(d.id), try h.token(d.id)]
            _ = try await h.useCases.claim("spring", token: tokens[0], client: "marketing")
            // A ban and an unban through one install id: the unban lifts a ban of its own kind only.
            _ = try await h.useCases.orderPending(.ban, installID: "install-1", reason: nil, client: "admin")
            _ = try? await h.useCases.admitMeaning(token: tokens[1], installID: "install-1", client: "api")
            _ = try await h.useCases.orderPending(.unban, installID: "install-1", reason: nil, client: "admin")
            _ = try await h.useCases.admitMeaning(token: tokens[2], installID: "install-1", client: "api")
            try await #require(try h.audit().map(\.action) == ["unban.applied", "unban.pending", "ban.applied", "ban.pending", "promotion.claim"])

            let files = try FileManager.default.contentsOfDirectory(atPath: h.directory.path)
            #expect(files.contains { $0.hasSuffix("-wal") || $0.hasSuffix(".sqlite") })
            var bytes = Data()
            for file in files { bytes.append(try Data(contentsOf: h.directory.appendingPathComponent(file))) }
            for token in tokens {
                #expect(bytes.range(of: Data(token.base64.prefix(40).utf8)) == nil, "the token reached the ledger")
                #expect(bytes.range(of: Data(ReferenceSHA256.hex(token.base64).utf8)) == nil, "the full digest reached the ledger")
                #expect(bytes.range(of: Data(prefix(token).utf8)) != nil, "the short prefix is recorded")
            }
        }
        #expect(directory.map { FileManager.default.fileExists(atPath: $0.path) } == false)
    }

    @Test func auditEventsPageNewestFirst() async throws {
        try await withPolicy(Self.roles) { h in
            for i in 0..<7 { _ = try await h.useCases.orderPending(.ban, installID: "install-\(i)", reason: nil, client: "admin") }
            let d = try h.newDevice()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")

            let all = try await h.ledger.auditEvents(limit: 100, before: nil)
            #expect(all.count == 8)
            #expect(all.first?.action == "promotion.claim")
            #expect(all.dropFirst().map(\.subject) == (0..<7).reversed().map { "install-\($0)" })
            #expect(all.map(\.id) == all.map(\.id).sorted(by: >))

            var paged: [AuditEvent] = []
            var cursor: Int64?
            var pages = 0
            while true {
                let page = try await h.ledger.auditEvents(limit: 3, before: cursor)
                if page.isEmpty { break }
                #expect(page.count <= 3)
                #expect(page.allSatisfy { e in cursor.map { e.id < $0 } ?? true })
                paged += page
                cursor = page.last?.id
                pages += 1
            }
            #expect(pages == 3)
            #expect(paged == all)
            #expect(try await h.ledger.auditEvents(limit: 2, before: all[1].id) == Array(all[2...3]))
        }
    }
}

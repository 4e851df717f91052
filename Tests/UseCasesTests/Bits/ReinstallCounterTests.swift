import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// `{"mode": "reinstall-counter", "ban_at": n}`: both bits count fresh installs, bit1 high, bit0 low.
@Suite("Reinstall counter")
struct ReinstallCounterTests {
    static func counter(_ banAt: Int) -> (YearMonth) -> PolicyConfiguration {
        { _ in PolicyConfiguration(layout: .reinstallCounter(banAt: banAt)) }
    }

    @Test(arguments: [1, 2, 3])
    func registrationsCountUpToBanAt(banAt: Int) async throws {
        try await withPolicy(Self.counter(banAt)) { h in
            let d = try h.newDevice()
            for expected in 0...banAt {
                let outcome = try await h.useCases.registerInstall(token: try h.token(d.id), installID: "install-\(expected)", client: "api")
                #expect(outcome.reinstalls == expected)
                #expect(outcome.banned == (expected == banAt))
                #expect(outcome.banned == (expected == banAt))
                #expect(outcome.appliedPending == nil)
                #expect(try h.query(d.id) == .state(BitState(bits: Bits(counter: expected), lastUpdated: h.month)))
            }
            // Banned: further registrations are refused and the count never moves (nor passes 3).
            for _ in 0..<3 {
                #expect(await failure { try await h.useCases.registerInstall(token: try h.token(d.id), installID: nil, client: "api") } == .deviceBanned)
            }
            #expect(try h.query(d.id) == .state(BitState(bits: Bits(counter: banAt), lastUpdated: h.month)))
            #expect(try h.state(d.id).bits.counter <= 3)
            #expect(try h.state(d.id).updates == banAt + 1)
            #expect(await failure { try await h.useCases.admitMeaning(token: try h.token(d.id), installID: nil, client: "api") } == .deviceBanned)
            let meaning = try await h.useCases.inspect(token: try h.token(d.id))
            #expect(meaning.banned && meaning.reinstalls == banAt)

            let events = try await h.audit().reversed().map { $0 }
            #expect(events.map(\.action) == Array(repeating: "install.register", count: banAt + 1))
            #expect(events.map(\.subject) == (0...banAt).map { "install-\($0)" })
            #expect(events.map(\.result) == Array(repeating: .ok, count: banAt) + [.banned])
            #expect(events.last?.reason?.contains("ban_at \(banAt)") == true)
            #expect(events.first?.bitsBefore == "never-set")
            #expect(events.first?.bitsAfter == "(0,0)@\(h.month)")
        }
    }

    /// Counts already on the device (written by an earlier registration some months ago) continue.
    @Test(arguments: [(0, 1), (1, 2), (2, 3)])
    func aSeededCountContinues(seeded: Int, expected: Int) async throws {
        try await withPolicy(Self.counter(3)) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: Bits(counter: seeded), lastUpdated: h.month(-10))
            let outcome = try await h.useCases.registerInstall(token: d.token, installID: nil, client: "api")
            #expect(outcome.reinstalls == expected && outcome.banned == (expected == 3))
            #expect(try h.query(d.id) == .state(BitState(bits: Bits(counter: expected), lastUpdated: h.month)))
        }
    }

    @Test(arguments: [1, 2, 3])
    func aManualBanSetsThreeAndAnUnbanResetsToZero(banAt: Int) async throws {
        try await withPolicy(Self.counter(banAt)) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.registerInstall(token: d.token, installID: nil, client: "api")
            let ban = try await h.useCases.setBanned(true, token: try h.token(d.id), reason: "abuse", client: "admin")
            #expect(ban.banned && ban.applied)
            #expect(try h.query(d.id) == state(1, 1, h.month))
            #expect(await failure { try await h.useCases.registerInstall(token: try h.token(d.id), installID: nil, client: "api") } == .deviceBanned)
            let banned = try await h.useCases.inspect(token: try h.token(d.id))
            #expect(banned.banned && banned.reinstalls == 3)

            let unban = try await h.useCases.setBanned(false, token: try h.token(d.id), reason: nil, client: "admin")
            #expect(!unban.banned && unban.applied)
            #expect(try h.query(d.id) == state(0, 0, h.month))
            let meaning = try await h.useCases.inspect(token: try h.token(d.id))
            #expect(!meaning.banned && meaning.reinstalls == 0)
            // Counting starts over from 0.
            let next = try await h.useCases.registerInstall(token: try h.token(d.id), installID: nil, client: "api")
            #expect(next.reinstalls == 1 && next.banned == (banAt == 1))
        }
    }

    @Test func banAndUnbanOfANeverSetDevice() async throws {
        try await withPolicy(Self.counter(3)) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(1, 1, h.month))
            let e = try h.newDevice()
            _ = try await h.useCases.setBanned(false, token: e.token, reason: nil, client: "admin")
            #expect(try h.query(e.id) == state(0, 0, h.month))
        }
    }

    @Test func promotionsAreNotEnabledAndNameTheLayout() async throws {
        try await withPolicy(Self.counter(2)) { h in
            let d = try h.newDevice()
            let layout = #"{"mode":"reinstall-counter","ban_at":2}"#
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "m") }?.notEnabledMessage?.contains(layout) == true)
            #expect(await failure { try await h.useCases.eligibility("spring", token: d.token) }?.notEnabledMessage?.contains(layout) == true)
            #expect(h.totalCalls == 0)
        }
    }

    /// Admission under the counter reads the bits (a query, which validates too) and refuses banned devices.
    @Test func admissionQueriesAndRefusesBannedDevices() async throws {
        try await withPolicy(Self.counter(3)) { h in
            let d = try h.newDevice()
            let fresh = try await h.useCases.admitMeaning(token: d.token, installID: nil, client: "api")
            #expect(fresh?.raw == nil && fresh?.banned == false && fresh?.reinstalls == nil)
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month)
            let two = try await h.useCases.admitMeaning(token: try h.token(d.id), installID: nil, client: "api")
            #expect(two?.reinstalls == 2 && two?.banned == false)
            #expect(h.calls(.query) == 2 && h.calls(.validate) == 0 && h.calls(.update) == 0)
        }
    }
}

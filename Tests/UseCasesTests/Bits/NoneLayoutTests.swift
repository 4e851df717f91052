import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// `{"mode": "none"}`: bits are never read or written; only token validity is used.
@Suite("None layout")
struct NoneLayoutTests {
    static func none(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .none, promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    @Test func everyMeaningIsNotEnabledAndNamesTheLayout() async throws {
        try await withPolicy(Self.none) { h in
            let d = try h.newDevice()
            let failures: [Failure?] = [
                await failure { try await h.useCases.claim("spring", token: d.token, client: "m") },
                await failure { try await h.useCases.eligibility("spring", token: d.token) },
                await failure { try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin") },
                await failure { try await h.useCases.setBanned(false, token: d.token, reason: nil, client: "admin") },
                await failure { try await h.useCases.orderPending(.ban, installID: "i", reason: nil, client: "admin") },
                await failure { try await h.useCases.orderPending(.unban, installID: "i", reason: nil, client: "admin") },
                await failure { try await h.useCases.registerInstall(token: d.token, installID: "i", client: "api") },
            ]
            for f in failures {
                let message = f?.notEnabledMessage
                #expect(message?.contains(#"{"mode":"none"}"#) == true, "got \(String(describing: f))")
            }
            #expect(h.totalCalls == 0)
            await #expect(try h.ledger.pendingActions().isEmpty)
            await #expect(try h.audit().isEmpty)
            #expect(try h.query(d.id) == .neverSet)
        }
    }

    @Test func admissionOnlyValidates() async throws {
        try await withPolicy(Self.none) { h in
            let d = try h.newDevice()
            #expect(try await h.useCases.admitMeaning(token: d.token, installID: nil, client: "api") == nil)
            // Even a device whose bits say "banned" under another layout is admitted, and nothing is read.
            h.sandbox.seed(d.id, bits: bits(1, 1), lastUpdated: h.month)
            #expect(try await h.useCases.admitMeaning(token: try h.token(d.id), installID: "install-1", client: "api") == nil)
            let calls = h.sandbox.counters.calls
            #expect(calls[AppleEndpoint.validate.rawValue] == 2)
            #expect(calls[AppleEndpoint.query.rawValue] == nil)
            #expect(calls[AppleEndpoint.update.rawValue] == nil)
            #expect(try h.query(d.id) == state(1, 1, h.month))
            await #expect(try h.audit().isEmpty)
        }
    }

    @Test func admissionRefusesAnInvalidToken() async throws {
        try await withPolicy(Self.none) { h in
            let unknown = try #require(DeviceToken(Data(repeating: 9, count: 900).base64EncodedString()))
            #expect(await failure { try await h.useCases.admitMeaning(token: unknown, installID: nil, client: "api") } == .apple(.invalidDeviceToken))
            #expect(h.calls(.validate) == 1)
        }
    }
}

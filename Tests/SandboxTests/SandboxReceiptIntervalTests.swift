import AppAttest
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// `PUT /sandbox/v1/app-attest/receipt-interval` (docs/sandbox.md): the time between a refreshed receipt's
/// creation and its Not Before, Apple's 24 h unless a test shortens it, so the refresher's second renewal can
/// come seconds after its first. Raw HTTP to `POST /v1/attestationData`, no Apple client.
@Suite struct SandboxReceiptIntervalTests {
    static let appID = sandboxTeamID + ".com.example.interval"

    /// A key attested through the control API: its ATTEST receipt and its public key.
    static func attestedKey(_ h: SandboxHarness) async throws -> (receipt: Data, publicKey: Data) {
        let key = try await h.attestedAppAttestKey(appID: appID)
        return (key.receipt, key.publicKey)
    }

    /// One renewal as Apple takes it: the bare developer JWT, the receipt's base64 as the body.
    static func renew(_ h: SandboxHarness, _ receipt: Data) async throws -> OutboundResponse {
        try await SandboxHarness.controlClient.send(OutboundRequest(method: "POST", url: h.sandbox.baseURL + "/v1/attestationData",
                                                                   headers: [("Authorization", try h.provider().current().jwt)],
                                                                   body: Data(receipt.base64EncodedString().utf8), timeoutMilliseconds: 5_000))
    }

    @Test func aShortenedIntervalSetsTheNextReceiptsNotBefore() async throws {
        try await withSandbox { h in
            let read = try await h.control("GET", "/sandbox/v1/app-attest/receipt-interval")
            #expect(read.status == 200 && read.json?["seconds"]?.intValue == 86_400, "Apple's 24 h by default")
            let set = try await h.control("PUT", "/sandbox/v1/app-attest/receipt-interval", #"{"seconds":3}"#)
            #expect(set.status == 200 && set.json?["seconds"]?.intValue == 3)
            #expect(h.sandbox.receiptRefreshInterval == 3)

            let key = try await Self.attestedKey(h)
            let first = try await Self.renew(h, key.receipt)
            #expect(first.status == 200)
            let receipt = try #require(Data(base64Encoded: String(decoding: first.body, as: UTF8.self)))
            let verified = try h.sandbox.appAttestAuthority.receiptAuthority.verifier.verify(receipt, appID: Self.appID, publicKey: key.publicKey,
                                                                                            at: Date(), freshness: 300)
            #expect(verified.type == .receipt)
            #expect(verified.notBefore == verified.creation + 3)
            #expect(verified.expiration == verified.creation + 90 * 86_400, "the lifetime does not follow the interval")
            // Before the Not Before: 304. Four seconds later on the fraud service's clock (no sleep): a new receipt.
            #expect(try await Self.renew(h, receipt).status == 304)
            #expect(try await h.control("PUT", "/sandbox/v1/app-attest/clock", #"{"offset_seconds":4}"#).status == 200)
            #expect(try await Self.renew(h, receipt).status == 200)

            // Back to Apple's: the next receipt waits a day again.
            #expect(try await h.control("PUT", "/sandbox/v1/app-attest/receipt-interval", #"{"seconds":86400}"#).status == 200)
            let daily = try await Self.renew(h, key.receipt)
            let dailyReceipt = try #require(Data(base64Encoded: String(decoding: daily.body, as: UTF8.self)))
            let dailyVerified = try h.sandbox.appAttestAuthority.receiptAuthority.verifier.verify(dailyReceipt, appID: Self.appID, publicKey: key.publicKey,
                                                                                                 at: Date() + 4, freshness: 300)
            #expect(dailyVerified.notBefore == dailyVerified.creation + 86_400)
        }
    }

    @Test(arguments: [
        #"{"seconds":0}"#, #"{"seconds":2592001}"#, #"{"seconds":-5}"#, #"{"seconds":2.5}"#, #"{"seconds":"3"}"#, #"{"seconds":null}"#,
        "{}", #"{"seconds":3,"offset_seconds":3}"#, #"{"interval":3}"#, "[3]", "3", "not json",
    ])
    func anythingButWholeSecondsFromOneToThirtyDaysIs400(body: String) async throws {
        try await withSandbox { h in
            let refused = try await h.control("PUT", "/sandbox/v1/app-attest/receipt-interval", body)
            #expect(refused.status == 400)
            #expect(refused.json?["error"]?.stringValue?.contains("seconds") == true, "the sandbox's JSON error: \(String(describing: refused.json))")
            #expect(h.sandbox.receiptRefreshInterval == 86_400, "unchanged")
        }
    }

    @Test func theBoundsAreAccepted() async throws {
        try await withSandbox { h in
            let second = try await h.control("PUT", "/sandbox/v1/app-attest/receipt-interval", #"{"seconds":1}"#)
            #expect(second.status == 200 && second.json?["seconds"]?.intValue == 1)
            let thirtyDays = try await h.control("PUT", "/sandbox/v1/app-attest/receipt-interval", #"{"seconds":2592000}"#)
            #expect(thirtyDays.status == 200 && thirtyDays.json?["seconds"]?.intValue == 2_592_000)
        }
    }
}

import AppAttest
import Foundation
import Ledger
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
@testable import TwoBitsService
import UseCases

/// `AppleReceiptRenewer` against the sandbox's `POST /v1/attestationData` over loopback: Apple's new receipt is
/// kept only when it verifies and is a RECEIPT; anything else Apple's host answers with is refused, never stored.
@Suite struct AppleReceiptRenewerTests {
    static let appID = sandboxTeamID + ".com.example.renewer"

    /// A key attested on the sandbox, as the ledger holds it after the attestation (its ATTEST receipt).
    static func attestedKey(_ h: SandboxHarness) async throws -> AppAttestKeyRecord {
        let created = try await h.control("POST", "/sandbox/v1/app-attest/keys", #"{"app_id":"\#(appID)","environment":"development"}"#)
        let keyID = try #require(created.json?["key_id"]?.stringValue)
        let hash = SHA256Digest.hash(Data("challenge".utf8)).base64EncodedString()
        let attested = try await h.control("POST", "/sandbox/v1/app-attest/attestations", #"{"key_id":"\#(keyID)","client_data_hash":"\#(hash)"}"#)
        let receipt = try #require(attested.json?["receipt"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        let publicKey = try #require(attested.json?["public_key"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        return AppAttestKeyRecord(keyID: keyID, publicKey: publicKey, receipt: receipt, environment: "development", appID: appID, firstSeen: Date())
    }

    static func renewer(_ h: SandboxHarness) throws -> AppleReceiptRenewer {
        AppleReceiptRenewer(apple: try h.client(), verifier: h.sandbox.appAttestAuthority.receiptAuthority.verifier)
    }

    @Test func aRenewedReceiptIsKeptWithItsMetric() async throws {
        try await withSandbox { h in
            let key = try await Self.attestedKey(h)
            guard case .renewed(let renewed) = await (try Self.renewer(h)).renew(receipt: key.receipt, key: key, now: Date()) else {
                Issue.record("not renewed"); return
            }
            #expect(renewed.riskMetric == 1)
            #expect(renewed.notBefore == renewed.creation + 86_400)
        }
    }

    /// Apple's host (or whoever answers for it) hands back an ATTEST receipt of the same key: it verifies (signature,
    /// chain, app, key, fresh), yet it carries no metric and is not a renewal, so it is refused.
    @Test func anAttestReceiptInTheAnswerIsRefused() async throws {
        try await withSandbox { h in
            let key = try await Self.attestedKey(h)
            h.sandbox.inject(Fault(kind: .status, status: 200, body: key.receipt.base64EncodedString(), endpoint: AppleSandbox.attestationDataEndpoint))
            let renewal = await (try Self.renewer(h)).renew(receipt: key.receipt, key: key, now: Date())
            guard case .refused(let detail) = renewal else { Issue.record("not refused: \(renewal)"); return }
            #expect(detail.contains("ATTEST"), "\(detail)")
        }
    }
}

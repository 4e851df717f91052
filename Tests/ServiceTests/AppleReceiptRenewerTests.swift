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
        let key = try await h.attestedAppAttestKey(appID: appID)
        return AppAttestKeyRecord(keyID: key.keyID, publicKey: key.publicKey, receipt: key.receipt, environment: .development, appID: appID, firstSeen: Date())
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

import AppAttestFormats
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

/// `POST /v1/attestationData` takes back the sandbox's own receipts only: signed by its signer, in any of the forms
/// it signs in, while that signer's certificate is valid on the fraud service's clock (ReceiptAuthority's own check,
/// not App Attest's verifier). Raw HTTP, no Apple client.
@Suite struct SandboxReceiptOwnershipTests {
    static let appID = sandboxTeamID + ".com.example.ownership"

    static func renew(_ h: SandboxHarness, _ receipt: Data) async throws -> OutboundResponse {
        try await SandboxHarness.controlClient.send(OutboundRequest(method: "POST", url: h.sandbox.baseURL + "/v1/attestationData",
                                                                   headers: [("Authorization", try h.provider().current().jwt)],
                                                                   body: Data(receipt.base64EncodedString().utf8), timeoutMilliseconds: 5_000))
    }

    static func isBadPayload(_ response: OutboundResponse) -> Bool {
        response.status == 400 && String(decoding: response.body, as: UTF8.self) == "Bad Payload"
    }

    @Test func itsOwnPayloadIsTakenBackInEachSignatureForm() async throws {
        try await withSandbox { h in
            let key = try await h.attestedAppAttestKey(appID: Self.appID)
            let payload = try CMSSignedData(key.receipt).content
            for form in ReceiptSignatureForm.allCases {
                let resigned = h.sandbox.appAttestAuthority.receiptAuthority.sign(payload: payload, form: form)
                #expect(try await Self.renew(h, resigned).status == 200, "\(form)")
            }
        }
    }

    @Test func anotherSignerOrAForgedDigestIsBadPayload() async throws {
        try await withSandbox { h in
            let key = try await h.attestedAppAttestKey(appID: Self.appID)
            let payload = try CMSSignedData(key.receipt).content
            // The same payload under another authority's signer: its signature verifies, but the signer is not the sandbox's.
            #expect(Self.isBadPayload(try await Self.renew(h, ReceiptAuthority().sign(payload: payload))))
            // Apple's 2020 form whose message digest attribute is not the payload's.
            let forged = h.sandbox.appAttestAuthority.receiptAuthority.sign(payload: payload, form: .signedAttributesOverPayload,
                                                                            messageDigest: SHA256Digest.hash(Data("other".utf8)))
            #expect(Self.isBadPayload(try await Self.renew(h, forged)))
            #expect(try await Self.renew(h, key.receipt).status == 200, "the receipt itself still is its own")
        }
    }

    @Test func pastItsSignersValidityItsReceiptIsBadPayloadNotNoData() async throws {
        try await withSandbox { h in
            let key = try await h.attestedAppAttestKey(appID: Self.appID)
            // The signer's certificate ends about a year from now (ReceiptAuthority.signerValidity from 30 days ago);
            // the receipt's own expiry (90 days) alone would be 404.
            h.sandbox.appAttestClockOffset = ReceiptAuthority.signerValidity
            #expect(Self.isBadPayload(try await Self.renew(h, key.receipt)))
            h.sandbox.appAttestClockOffset = 91 * 86_400
            #expect(try await Self.renew(h, key.receipt).status == 404)
        }
    }
}

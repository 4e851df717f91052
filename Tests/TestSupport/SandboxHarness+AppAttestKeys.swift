import Foundation
import TwoBitsCrypto

extension SandboxHarness {
    /// A key the sandbox made for `appID` in the development environment and attested over a fixed challenge,
    /// through the control API: its id, its ATTEST receipt and its public key (what a ledger keeps after the
    /// attestation).
    public func attestedAppAttestKey(appID: String) async throws -> (keyID: String, receipt: Data, publicKey: Data) {
        let created = try await control("POST", "/sandbox/v1/app-attest/keys", #"{"app_id":"\#(appID)","environment":"development"}"#)
        guard let keyID = created.json?["key_id"]?.stringValue else { throw HarnessError("no key_id in \(created)") }
        let hash = SHA256Digest.hash(Data("challenge".utf8)).base64EncodedString()
        let attested = try await control("POST", "/sandbox/v1/app-attest/attestations", #"{"key_id":"\#(keyID)","client_data_hash":"\#(hash)"}"#)
        guard let receipt = attested.json?["receipt"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
              let publicKey = attested.json?["public_key"]?.stringValue.flatMap({ Data(base64Encoded: $0) })
        else { throw HarnessError("no receipt or public key in \(attested)") }
        return (keyID, receipt, publicKey)
    }
}

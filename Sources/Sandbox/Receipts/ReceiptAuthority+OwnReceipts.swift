import AppAttestFormats
import FoundationEssentials
import TwoBitsCrypto

extension ReceiptAuthority {
    /// A receipt sent back to the sandbox that it did not sign.
    struct NotItsOwnReceipt: Error {}

    /// The payload of `receipt` if this authority signed it: one CMS signed-data whose signer is this authority's
    /// own certificate, the signature verifying in one of the forms it signs in, the signer's chain valid at
    /// `time` (the fraud service's clock), the payload well formed.
    ///
    /// Narrower than App Attest's `ReceiptVerifier`, which sits above the sandbox: the sandbox only takes back its
    /// own receipts, so its signer's bytes replace a search for a chain to a root, and the checks a server makes
    /// of a receipt (app id, freshness, expiration, key) are left out: Apple answers an expired receipt with 404,
    /// not with 400.
    func payload(ofItsOwn receipt: Data, at time: Date) throws -> ReceiptPayload {
        let signed = try CMSSignedData(receipt)
        guard let carried = signed.signerCertificate, carried.hasSameDER(as: signer) else { throw NotItsOwnReceipt() }
        do { try signed.verifySignature() } catch {
            guard signed.hasSignedAttributes, ReceiptSignatureForm.signatureCoversPayload(signed, signer: signer) else { throw error }
        }
        try chainVerifier.verify(leaf: signer, intermediates: [intermediate], at: time)
        return try ReceiptPayload(signed.content)
    }
}

package import TwoBitsCrypto

extension ReceiptSignatureForm {
    /// A receipt of September 2020 carried signed attributes whose signature covers the raw payload: it verifies
    /// only when its message digest attribute is SHA-256 of that payload and the signature verifies over it. A
    /// check of the signature alone (no trust): the verifier runs it after the standard form failed, and so does
    /// the sandbox on a receipt it is sent back.
    package static func signatureCoversPayload(_ signed: CMSSignedData, signer: X509Certificate) -> Bool {
        guard let digest = signed.messageDigestAttribute, digest == SHA256Digest.hash(signed.content) else { return false }
        guard let point = try? signer.p256PublicPoint(), let key = try? P256PublicKey(uncompressedPoint: point) else { return false }
        return key.verifyDER(signature: signed.signature, message: signed.content)
    }
}

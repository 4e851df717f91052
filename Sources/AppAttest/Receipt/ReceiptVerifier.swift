public import FoundationEssentials
public import TwoBitsCrypto

/// Verifies App Attest receipts (the one in an attestation, and those `attestationData` returns), Apple's steps
/// of "Assessing fraud risk" in order: signature, chain, payload, app id, freshness, expiration, key. Stateless but for the
/// chain verifier's memory of intermediates already verified.
public struct ReceiptVerifier: Sendable {
    public let chainVerifier: CertificateChainVerifier

    /// The extension marking Apple's receipt signing certificates (`Application Attestation Fraud Receipt Signing`).
    public static let receiptSignerOID = AppAttestCertificateExtension.receiptSignerOID
    /// How old a receipt just received from Apple may be (Apple's step 5: five minutes).
    public static let freshness: TimeInterval = 300

    /// Trusts Apple Root CA - G3 alone (compiled in).
    public init() { chainVerifier = AppleRootCertificates.receiptVerifier }

    /// Trusts `chainVerifier`'s roots instead (the sandbox's, in tests and development).
    public init(chainVerifier: CertificateChainVerifier) { self.chainVerifier = chainVerifier }

    /// Trusts `root` alone instead of Apple's.
    public init(root: X509Certificate) throws(X509Error) { chainVerifier = try CertificateChainVerifier(roots: [root]) }

    /// Verifies `receipt` (the CMS bytes, BER or DER) for `appID` ("TEAMID.bundle.id") at `time`.
    /// - Parameters:
    ///   - publicKey: the key stored at attestation (0x04 ‖ X ‖ Y); nil skips step 6 (offline, no key at hand).
    ///   - freshness: how old field 12 may be (`ReceiptVerifier.freshness` for a receipt just received from
    ///     Apple); nil skips step 5 (a stored receipt, offline verification).
    public func verify(_ receipt: Data, appID: String, publicKey: Data?, at time: Date, freshness: TimeInterval?) throws(ReceiptFailure) -> VerifiedReceipt {
        // 0. The container.
        let signed: CMSSignedData
        do { signed = try CMSSignedData(receipt) } catch { throw ReceiptFailure(at: .container, error.description) }
        guard let signer = signed.signerCertificate else {
            throw ReceiptFailure(at: .container, "the signed-data does not carry its signer's certificate")
        }

        // 1. The signature, standard first; then Apple's 2020 quirk (attributes whose signature covers the payload).
        do { try signed.verifySignature() } catch {
            guard signed.hasSignedAttributes, Self.signatureCoversPayload(signed, signer: signer) else {
                throw ReceiptFailure(at: .signature, error.description)
            }
        }

        // 2. The signer chains to the pinned root at `time`, through the other certificates it carries (never
        // trusting a root it carries: self-issued ones are left out), and is a receipt signer.
        let intermediates = signed.certificates.filter { !$0.hasSameDER(as: signer) && $0.subject != $0.issuer }
        do { try chainVerifier.verify(leaf: signer, intermediates: intermediates, at: time) } catch {
            throw ReceiptFailure(at: .chain, error.description)
        }
        guard signer.extensionValue(oid: Self.receiptSignerOID) != nil else {
            throw ReceiptFailure(at: .chain, "the signer certificate has no \(Self.receiptSignerOID) extension: not a receipt signer")
        }

        // 3. The payload.
        let payload = try ReceiptPayload(signed.content)

        // 4. The app id.
        guard payload.appID == appID else { throw ReceiptFailure(at: .appID, "the receipt is for \(payload.appID), not \(appID)") }

        // 5. Freshness: Apple's clock may run about a minute ahead of ours, so the window counts both ways.
        if let freshness {
            let age = time.timeIntervalSince(payload.creation)
            guard abs(age) <= freshness else {
                throw ReceiptFailure(at: .freshness, "created \(ReceiptTime.format(payload.creation)), \(Int(age)) s from \(ReceiptTime.format(time)): more than \(Int(freshness)) s")
            }
        }

        // 5b. Expiration: past field 21 a receipt is no longer Apple's word on the key (and Apple will not renew it).
        guard time <= payload.expiration else {
            throw ReceiptFailure(at: .expiration, "expired \(ReceiptTime.format(payload.expiration)), before \(ReceiptTime.format(time))")
        }

        // 6. The attested key.
        if let publicKey {
            guard payload.attestedPublicKey == publicKey else {
                throw ReceiptFailure(at: .publicKey, "field 3's certificate key is not the stored key")
            }
        }

        return VerifiedReceipt(payload)
    }

    /// Apple's September 2020 form (`ReceiptSignatureForm.signedAttributesOverPayload`): attributes whose
    /// signature covers the raw payload, accepted only with a message digest attribute equal to its SHA-256.
    static func signatureCoversPayload(_ signed: CMSSignedData, signer: X509Certificate) -> Bool {
        ReceiptSignatureForm.signatureCoversPayload(signed, signer: signer)
    }
}

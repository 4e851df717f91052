public import AppAttestFormats
public import FoundationEssentials
public import TwoBitsCrypto

/// The sandbox's stand-in for Apple's receipt signer: a root (as Apple Root CA - G3), an intermediate (as
/// "Apple Application Integration CA 5 - G1") and a leaf "Application Attestation Fraud Receipt Signing" with
/// Apple's marker extension, all generated at start. Receipts are CMS signed-data encoded as Apple's: BER with
/// indefinite lengths, the payload in 1,000-byte chunks, the three certificates, one signer, ECDSA with SHA-256.
///
/// The keys are P-256 (Apple's root is P-384): `X509CertificateBuilder` signs with P-256 only, and the verifier
/// checks the chain with OpenSSL whatever the curve.
public final class ReceiptAuthority: Sendable {
    private let rootKey = P256PrivateKey.generate()
    private let intermediateKey = P256PrivateKey.generate()
    private let signerKey = P256PrivateKey.generate()
    /// The trust anchor to give a receipt verifier (`twobits app-attest receipt --root`).
    public let root: X509Certificate
    public let intermediate: X509Certificate
    public let signer: X509Certificate
    /// The signer certificate's issuer name and serial number, DER, as the signer info names them.
    private let signerIssuerAndSerial: Data

    /// How long the signer's certificate lasts from `now - 30 days` (Apple's: about 13 months).
    public static let signerValidity: TimeInterval = 395 * 86_400
    /// Apple's chunk size for the payload's constructed OCTET STRING.
    public static let chunkSize = 1000

    /// - Parameter signerMarker: false leaves Apple's marker extension out of the signer certificate, for tests
    ///   of a verifier that must refuse a signer that is not a receipt signer.
    public init(now: Date = Date(), signerMarker: Bool = true) {
        let year: TimeInterval = 365 * 86_400
        root = try! X509CertificateBuilder(commonName: "TwoBits Sandbox Root CA - G3", serial: 1, notBefore: now - year, notAfter: now + 20 * year, isCA: true)
            .issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        intermediate = try! X509CertificateBuilder(commonName: "TwoBits Sandbox Application Integration CA 5 - G1", serial: 2, notBefore: now - year,
                                                   notAfter: now + 10 * year, isCA: true)
            .issue(subjectKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
        // The marker extension's value is ASN.1 NULL in Apple's certificates.
        signer = try! X509CertificateBuilder(commonName: "Application Attestation Fraud Receipt Signing", serial: 3, notBefore: now - 30 * 86_400,
                                             notAfter: now - 30 * 86_400 + Self.signerValidity, isCA: false,
                                             extensions: signerMarker ? [(AppAttestCertificateExtension.receiptSignerOID, Data([0x05, 0x00]))] : [])
            .issue(subjectKey: signerKey.publicKey, issuer: intermediate, issuerKey: intermediateKey)
        signerIssuerAndSerial = Self.issuerAndSerial(of: signer.der)
        // The root was built above; a verifier over it cannot fail to build.
        chainVerifier = try! CertificateChainVerifier(roots: [root])
    }

    /// The root as PEM (`GET /sandbox/v1/app-attest/receipt-root.pem`).
    public var rootPEM: String { root.pem }

    /// A chain verifier trusting this root alone (built once: it remembers the intermediate), for a receipt
    /// verifier of the sandbox's receipts (`ReceiptVerifier(chainVerifier:)`).
    public let chainVerifier: CertificateChainVerifier

    /// Signs `payload` into a receipt: CMS signed-data, BER, indefinite lengths, the payload in 1,000-byte chunks.
    /// `messageDigest` replaces the attribute's SHA-256 of the payload (tests of a forged attribute).
    public func sign(payload: Data, form: ReceiptSignatureForm = .plain, messageDigest: Data? = nil) -> Data {
        let sha256 = BER.sequence(BER.sha256OID)
        var chunks: [Data] = []
        var start = payload.startIndex
        while start < payload.endIndex {
            let end = payload.index(start, offsetBy: Self.chunkSize, limitedBy: payload.endIndex) ?? payload.endIndex
            chunks.append(BER.octetString(Data(payload[start..<end])))
            start = end
        }
        let encapsulated = BER.indefinite(0x30, [BER.dataOID, BER.indefinite(0xA0, [BER.indefinite(0x24, chunks)])])
        let certificates = BER.indefinite(0xA0, [signer.der, intermediate.der, root.der])

        var signerParts = [BER.integer(1), signerIssuerAndSerial, sha256]
        let signature: Data
        switch form {
        case .plain:
            signature = ES256Signer(key: signerKey).signDER(payload)
        case .signedAttributes, .signedAttributesOverPayload:
            let attributes = [
                BER.sequence(BER.contentTypeOID, BER.set([BER.dataOID])),
                BER.sequence(BER.messageDigestOID, BER.set([BER.octetString(messageDigest ?? SHA256Digest.hash(payload))])),
            ].reduce(Data(), +)
            // Signed as a SET (RFC 5652 5.4), carried as [0] IMPLICIT.
            let signedAsSet = BER.definite(0x31, attributes)
            signerParts.append(BER.definite(0xA0, attributes))
            signature = ES256Signer(key: signerKey).signDER(form == .signedAttributes ? signedAsSet : payload)
        }
        signerParts.append(BER.sequence(BER.ecdsaWithSHA256OID))
        signerParts.append(BER.octetString(signature))
        let signerInfo = BER.definite(0x30, signerParts.reduce(Data(), +))

        let signedData = BER.indefinite(0x30, [
            BER.integer(1), BER.set([sha256]), encapsulated, certificates, BER.indefinite(0x31, [signerInfo]),
        ])
        return BER.indefinite(0x30, [BER.signedDataOID, BER.indefinite(0xA0, [signedData])])
    }

    /// SEQUENCE { issuer Name, serialNumber INTEGER } read from a certificate's TBSCertificate.
    private static func issuerAndSerial(of certificate: Data) -> Data {
        do {
            var outer = DERReader(certificate)
            var body = try outer.read(tag: 0x30)
            var tbs = try body.read(tag: 0x30)
            var copy = tbs
            if try copy.read().tag == 0xA0 { _ = try tbs.read() } // the explicit version
            let serial = try tbs.readElement()
            _ = try tbs.readElement() // signature algorithm
            let issuer = try tbs.readElement()
            return BER.definite(0x30, issuer + serial)
        } catch {
            fatalError("a certificate OpenSSL just issued does not parse: \(error)")
        }
    }
}

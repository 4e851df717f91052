import AppAttestFormats
public import FoundationEssentials
public import TwoBitsCrypto
import WireFormats

/// The sandbox's stand-in for Apple's App Attestation CA: a root and an intermediate generated at start,
/// issuing each simulated key's credential certificate with the nonce extension laid out as Apple's.
///
/// Apple's CA keys are P-384; these are P-256 (what `X509CertificateBuilder` signs with). The verifier
/// checks the chain with OpenSSL whatever the curve, so nothing a verifier does differs.
public final class AppAttestAuthority: Sendable {
    private let rootKey = P256PrivateKey.generate()
    private let intermediateKey = P256PrivateKey.generate()
    /// The trust anchor to give the service (`app_attest.root_ca_file`, or in process).
    public let root: X509Certificate
    let intermediate: X509Certificate
    /// A chain nobody trusts, for the `bad_chain` fault: same names, other keys.
    private let rogueKey = P256PrivateKey.generate()
    private let rogueIntermediate: X509Certificate
    /// The signer of the receipts in attestations and of `attestationData`'s answers (Apple's Root CA - G3 chain).
    public let receiptAuthority: ReceiptAuthority

    public init(now: Date = Date()) {
        let year: TimeInterval = 365 * 86_400
        func ca(_ name: String, serial: UInt64, key: P256PrivateKey, issuer: X509Certificate?, issuerKey: P256PrivateKey) -> X509Certificate {
            // Builder failures mean OpenSSL cannot build a certificate at all: nothing the sandbox could serve without.
            try! X509CertificateBuilder(commonName: name, serial: serial, notBefore: now - year, notAfter: now + 10 * year, isCA: true)
                .issue(subjectKey: key.publicKey, issuer: issuer, issuerKey: issuerKey)
        }
        root = ca("TwoBits Sandbox App Attestation Root CA", serial: 1, key: rootKey, issuer: nil, issuerKey: rootKey)
        intermediate = ca("TwoBits Sandbox App Attestation CA 1", serial: 2, key: intermediateKey, issuer: root, issuerKey: rootKey)
        let rogueRoot = ca("TwoBits Sandbox App Attestation Root CA", serial: 1, key: rogueKey, issuer: nil, issuerKey: rogueKey)
        receiptAuthority = ReceiptAuthority(now: now)
        rogueIntermediate = ca("TwoBits Sandbox App Attestation CA 1", serial: 2, key: rogueKey, issuer: rogueRoot, issuerKey: rogueKey)
    }

    /// The root as PEM, what `twobits sandbox --app-attest-root FILE` writes.
    public var rootPEM: String { root.pem }

    /// A verifier trusting this root, for in-process use (tests, the built-in sandbox).
    public func chainVerifier() -> CertificateChainVerifier {
        // The root was built above; a verifier over it cannot fail to build.
        try! CertificateChainVerifier(roots: [root])
    }

    /// x5c for a credential key: [credential certificate, intermediate]. Valid 3 days from `notBefore`, as Apple's.
    func x5c(for key: P256PublicKey, keyID: Data, nonce: Data, notBefore: Date, rogue: Bool) -> [Data] {
        let leaf = try! X509CertificateBuilder(
            commonName: keyID.hexString, serial: UInt64.random(in: 3...UInt64(Int64.max)), notBefore: notBefore, notAfter: notBefore + 3 * 86_400,
            isCA: false, extensions: [(AppAttestCertificateExtension.nonceOID, AppAttestCertificateExtension.noncePrefix + nonce)])
            .issue(subjectKey: key, issuer: rogue ? rogueIntermediate : intermediate, issuerKey: rogue ? rogueKey : intermediateKey)
        return [leaf.der, (rogue ? rogueIntermediate : intermediate).der]
    }
}

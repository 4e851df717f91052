public import FoundationEssentials
public import TwoBitsCrypto
import WireFormats

/// Verifies App Attest attestation objects, every step of Apple's "Validating apps that connect to your
/// server" in its order. Stateless: challenges, stored keys and counters belong to the caller.
public struct AttestationVerifier: Sendable {
    public let appIDs: [AppID]
    public let environment: AppAttestEnvironment
    public let chainVerifier: CertificateChainVerifier
    /// Intermediates already parsed: an x5c entry with the same DER reuses the object (parsing only, never trust).
    public let knownIntermediates: [X509Certificate]
    public let decoder: CBORDecoder
    /// The attestation's own receipt, checked last; nil leaves it unchecked (the offline command, tests of Apple's steps).
    public let receiptCheck: AttestationReceiptCheck?

    /// The OID of the credential certificate's nonce extension.
    public static let nonceExtensionOID = AppAttestCertificateExtension.nonceOID
    /// The DER around the nonce in that extension: SEQUENCE { [1] { OCTET STRING (32) } }.
    static let nonceExtensionPrefix = AppAttestCertificateExtension.noncePrefix

    /// - Parameter chainVerifier: the trust anchors; Apple's App Attestation root unless a test says otherwise.
    public init(appIDs: [AppID], environment: AppAttestEnvironment,
                chainVerifier: CertificateChainVerifier = AppleRootCertificates.appAttestationVerifier,
                knownIntermediates: [X509Certificate] = [AppleRootCertificates.appAttestationCA1],
                decoder: CBORDecoder = CBORDecoder(), receiptCheck: AttestationReceiptCheck? = nil) {
        self.receiptCheck = receiptCheck
        self.appIDs = appIDs
        self.environment = environment
        self.chainVerifier = chainVerifier
        self.knownIntermediates = knownIntermediates
        self.decoder = decoder
    }

    /// Verifies `attestationObject` (the CBOR `attestKey` returned) for the key `keyID` (32 bytes, as
    /// `generateKey` returned it, base64-decoded) and the `clientDataHash` the app passed to `attestKey`,
    /// with certificate validity judged at `time`. `clientDataHash` may have any length: it is only hashed
    /// into the nonce. The server passes SHA-256 of its challenge; Apple's validation guide built its sample
    /// attestation with the raw bytes of its challenge string, which the offline verifier must accept.
    public func verify(attestationObject: Data, keyID: Data, clientDataHash: Data, at time: Date) throws(AppAttestFailure) -> VerifiedAttestation {
        // 0. Decode.
        let object: CBORValue
        do { object = try decoder.decode(attestationObject) } catch { throw AppAttestFailure(.badFormat, at: .decode, "attestation object: \(error)") }
        guard case .map = object else { throw AppAttestFailure(.badFormat, at: .decode, "the attestation object is not a CBOR map") }
        guard let authDataBytes = object["authData"]?.bytesValue else { throw AppAttestFailure(.badFormat, at: .decode, "authData missing or not bytes") }
        let authData = try AuthenticatorData(authDataBytes, kind: .attestation, decoder: decoder)
        guard let credential = authData.credential else { throw AppAttestFailure(.badFormat, at: .decode, "no attested credential data") }

        // Format: fmt, x5c, receipt.
        guard let fmt = object["fmt"]?.textValue else { throw AppAttestFailure(.badFormat, at: .format, "fmt missing or not text") }
        guard fmt == "apple-appattest" else { throw AppAttestFailure(.badFormat, at: .format, "fmt is \(fmt.debugDescription), not \"apple-appattest\"") }
        guard let statement = object["attStmt"], case .map = statement else { throw AppAttestFailure(.badFormat, at: .format, "attStmt missing or not a map") }
        guard let x5c = statement["x5c"]?.arrayValue, (2...4).contains(x5c.count) else {
            throw AppAttestFailure(.badFormat, at: .format, "attStmt.x5c missing or not 2 to 4 certificates")
        }
        var certificateBytes: [Data] = []
        for item in x5c {
            guard let der = item.bytesValue else { throw AppAttestFailure(.badFormat, at: .format, "an x5c entry is not bytes") }
            certificateBytes.append(der)
        }
        guard let receipt = statement["receipt"]?.bytesValue else { throw AppAttestFailure(.badFormat, at: .format, "attStmt.receipt missing or not bytes") }
        guard keyID.count == 32 else { throw AppAttestFailure(.badFormat, at: .format, "the key id is \(keyID.count) bytes, not 32") }

        // 1. The x5c chain (credCert first) to the root, at `time`.
        var certificates: [X509Certificate] = []
        for (index, der) in certificateBytes.enumerated() {
            if index > 0, let known = knownIntermediates.first(where: { $0.hasDER(der) }) {
                certificates.append(known)
                continue
            }
            do { certificates.append(try X509Certificate(der: der)) } catch {
                throw AppAttestFailure(.badChain, at: .chain, "x5c[\(index)]: \(error)")
            }
        }
        let credCert = certificates[0]
        do { try chainVerifier.verify(leaf: credCert, intermediates: Array(certificates.dropFirst()), at: time) } catch {
            throw AppAttestFailure(.badChain, at: .chain, error.description)
        }

        // 2-4. nonce = SHA-256(authData ‖ clientDataHash), equal to the octet string in credCert's extension.
        let nonce = SHA256Digest.hash(authData.raw + clientDataHash)
        guard let extensionValue = credCert.extensionValue(oid: Self.nonceExtensionOID) else {
            throw AppAttestFailure(.nonceMismatch, at: .nonce, "the credential certificate has no \(Self.nonceExtensionOID) extension")
        }
        guard extensionValue.count == 38, extensionValue.prefix(6) == Self.nonceExtensionPrefix else {
            throw AppAttestFailure(.nonceMismatch, at: .nonce, "the \(Self.nonceExtensionOID) extension is not SEQUENCE { [1] { OCTET STRING (32) } }")
        }
        guard extensionValue.suffix(32) == nonce else {
            throw AppAttestFailure(.nonceMismatch, at: .nonce, "expected \(nonce.hexString), certificate has \(Data(extensionValue.suffix(32)).hexString)")
        }

        // 5. key id = SHA-256 of the credential public key (uncompressed point).
        let publicKey: Data
        do { publicKey = try credCert.p256PublicPoint() } catch { throw AppAttestFailure(.badFormat, at: .keyID, "credential certificate key: \(error)") }
        let computedKeyID = SHA256Digest.hash(publicKey)
        guard computedKeyID == keyID else {
            throw AppAttestFailure(.keyIDMismatch, at: .keyID, "the certificate's key hashes to \(computedKeyID.base64EncodedString()), the key id is \(keyID.base64EncodedString())")
        }

        // 6. RP ID hash = SHA-256 of a configured app id.
        guard let appID = appIDs.first(where: { $0.rpIDHash == authData.rpIDHash }) else {
            throw AppAttestFailure(.rpIDMismatch, at: .rpID, "RP ID hash \(authData.rpIDHash.hexString) is none of \(appIDs.map(\.description).joined(separator: ", "))")
        }

        // 7. counter 0.
        guard authData.counter == 0 else { throw AppAttestFailure(.counterNotZero, at: .counter, "counter is \(authData.counter), not 0") }

        // 8. AAGUID of the configured environment.
        guard credential.aaguid == environment.aaguid else {
            let found = AppAttestEnvironment(aaguid: credential.aaguid).map { "the \($0.rawValue) AAGUID" } ?? "AAGUID \(credential.aaguid.hexString)"
            throw AppAttestFailure(.aaguidMismatch, at: .aaguid, "\(found), expected \(environment.rawValue)")
        }

        // 9. credential id = key id.
        guard credential.credentialID == keyID else {
            throw AppAttestFailure(.credentialIDMismatch, at: .credentialID, "credential id \(credential.credentialID.base64EncodedString()) is not the key id")
        }

        // The COSE key in authData is the certificate's key (WebAuthn's consistency check; Apple's list stops above).
        guard credential.publicKey == publicKey else {
            throw AppAttestFailure(.publicKeyMismatch, at: .publicKey, "the COSE key in authData differs from the credential certificate's key")
        }

        // The ATTEST receipt, whose refreshes carry the risk metric: a receipt that is not this key's never refreshes.
        try receiptCheck?.verify(receipt, appID: appID, publicKey: publicKey, environment: environment, at: time)

        return VerifiedAttestation(keyID: keyID, publicKey: publicKey, receipt: receipt, environment: environment, appID: appID,
                                   validationCategory: authData.validationCategory, bundleVersion: authData.bundleVersion, counter: 0)
    }
}

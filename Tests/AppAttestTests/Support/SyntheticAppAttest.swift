import AppAttest
import Foundation
import TwoBitsCrypto
import WireFormats

/// An App Attest CA and device of our own, laid out byte for byte like the real captures, so that the steps
/// real data can never reach (a nonzero attestation counter, a wrong credential id, iOS 27 extensions in a
/// full attestation, an assertion without the AT flag) are tested end to end.
struct SyntheticAppAttest {
    let rootKey = P256PrivateKey.generate()
    let intermediateKey = P256PrivateKey.generate()
    let root: X509Certificate
    let intermediate: X509Certificate
    let chainVerifier: CertificateChainVerifier
    let appID = AppID(teamID: "TEAMID1234", bundleID: "com.example.twobits")
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    init() {
        let year: TimeInterval = 365 * 86_400
        root = try! X509CertificateBuilder(commonName: "Test App Attestation Root CA", serial: 1, notBefore: Self.now - year,
                                           notAfter: Self.now + 10 * year, isCA: true)
            .issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        intermediate = try! X509CertificateBuilder(commonName: "Test App Attestation CA 1", serial: 2, notBefore: Self.now - year,
                                                   notAfter: Self.now + 5 * year, isCA: true)
            .issue(subjectKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
        chainVerifier = try! CertificateChainVerifier(roots: [root])
    }

    /// What a device sends, with knobs for each thing a device (or attacker) could get wrong.
    struct Options {
        var counter: UInt32 = 0
        var environment: AppAttestEnvironment = .development
        var credentialID: Data? = nil
        var coseKey: P256PublicKey? = nil
        var extensions: CBORValue? = nil
        var flags: UInt8 = 0x40
        /// What the app passes to `attestKey`; nil: SHA-256 of a challenge, as apps usually do.
        var clientDataHash: Data? = nil
    }

    struct Device {
        let key: P256PrivateKey
        let keyID: Data
        let attestation: Data
        let clientDataHash: Data
    }

    func attest(_ options: Options = Options()) -> Device {
        let key = P256PrivateKey.generate()
        let point = key.publicKey.uncompressedPoint
        let keyID = SHA256Digest.hash(point)
        let cosePoint = (options.coseKey ?? key.publicKey).uncompressedPoint
        let cose = CBORValue.map([
            (.unsigned(1), .unsigned(2)), (.unsigned(3), .negative(6)), (.negative(0), .unsigned(1)),
            (.negative(1), .bytes(cosePoint[1..<33])), (.negative(2), .bytes(cosePoint[33..<65])),
        ])
        let credentialID = options.credentialID ?? keyID
        var authData = appID.rpIDHash
        authData.append(options.flags)
        authData.append(contentsOf: withUnsafeBytes(of: options.counter.bigEndian, Array.init))
        authData.append(options.environment.aaguid)
        authData.append(contentsOf: [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)])
        authData.append(credentialID)
        authData.append(CBOREncoder.encode(cose))
        if let extensions = options.extensions { authData.append(CBOREncoder.encode(extensions)) }
        let clientDataHash = options.clientDataHash ?? SHA256Digest.hash(Data("challenge-\(keyID.hexString)".utf8))
        let nonce = SHA256Digest.hash(authData + clientDataHash)
        let leaf = try! X509CertificateBuilder(commonName: keyID.hexString, serial: 3, notBefore: Self.now - 86_400, notAfter: Self.now + 2 * 86_400,
                                               isCA: false, extensions: [("1.2.840.113635.100.8.2", Data([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20]) + nonce)])
            .issue(subjectKey: key.publicKey, issuer: intermediate, issuerKey: intermediateKey)
        let object = CBOREncoder.encode(.map([
            (.text("fmt"), .text("apple-appattest")),
            (.text("attStmt"), .map([(.text("x5c"), .array([.bytes(leaf.der), .bytes(intermediate.der)])), (.text("receipt"), .bytes(Data("receipt".utf8)))])),
            (.text("authData"), .bytes(authData)),
        ]))
        return Device(key: key, keyID: keyID, attestation: object, clientDataHash: clientDataHash)
    }

    func assertion(_ device: Device, clientData: Data, counter: UInt32, flags: UInt8 = 0x40, extensions: CBORValue? = nil) -> Data {
        var authData = appID.rpIDHash
        authData.append(flags)
        authData.append(contentsOf: withUnsafeBytes(of: counter.bigEndian, Array.init))
        if let extensions { authData.append(CBOREncoder.encode(extensions)) }
        let nonce = SHA256Digest.hash(authData + SHA256Digest.hash(clientData))
        let signature = ES256Signer(key: device.key).signDER(nonce)
        return CBOREncoder.encode(.map([(.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authData))]))
    }

    func verifier(_ environment: AppAttestEnvironment = .development) -> AttestationVerifier {
        AttestationVerifier(appIDs: [appID], environment: environment, chainVerifier: chainVerifier)
    }

    func verify(_ device: Device, environment: AppAttestEnvironment = .development) throws(AppAttestFailure) -> VerifiedAttestation {
        try verifier(environment).verify(attestationObject: device.attestation, keyID: device.keyID, clientDataHash: device.clientDataHash, at: Self.now)
    }
}

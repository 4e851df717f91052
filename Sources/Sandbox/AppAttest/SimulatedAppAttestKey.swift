import AppAttestFormats
import FoundationEssentials
import Locking
import TwoBitsCrypto

/// A key made by `DCAppAttestService.generateKey` on a simulated device: it attests itself and signs
/// assertions byte for byte as an iPhone does (docs/app-attest.md; the layouts match the real captures in
/// Tests/Fixtures/AppAttest).
final class SimulatedAppAttestKey: Sendable {
    let privateKey = P256PrivateKey.generate()
    /// SHA-256 of the uncompressed public point: what `generateKey` returns (base64) and the credential id.
    let keyID: Data
    let appID: AppID
    let environment: AppAttestEnvironment
    /// iOS 27's `apple_validation_category_01` and `apple_bundle_version_01`, appended to authData when set.
    let validationCategory: Int?
    let bundleVersion: String?
    /// The sandbox DeviceCheck device this key lives on, if the caller linked one.
    let deviceID: String?
    /// The last assertion's counter (0 after the attestation).
    private let counter = Lock<UInt32>(0)
    /// Field 5 of its receipts: 88 characters, the base64 of 64 random bytes, the same for every receipt of the key.
    let receiptToken = SecureRandom.bytes(64).base64EncodedString()
    /// What Apple's fraud service remembers of the key.
    let receiptState = Lock(KeyReceiptState())

    init(appID: AppID, environment: AppAttestEnvironment, validationCategory: Int?, bundleVersion: String?, deviceID: String?) {
        keyID = SHA256Digest.hash(privateKey.publicKey.uncompressedPoint)
        self.appID = appID
        self.environment = environment
        self.validationCategory = validationCategory
        self.bundleVersion = bundleVersion
        self.deviceID = deviceID
    }

    /// What `attestKey(keyId, clientDataHash:)` returns.
    /// `receiptNow` is the time of Apple's fraud service (the sandbox's App Attest clock); `now` by default.
    func attestationObject(clientDataHash: Data, fault: AttestationFault?, authority: AppAttestAuthority, now: Date, receiptNow: Date? = nil) -> Data {
        let point = privateKey.publicKey.uncompressedPoint
        let cose = CBORValue.map([
            (.unsigned(1), .unsigned(2)), (.unsigned(3), .negative(6)), (.negative(0), .unsigned(1)),
            (.negative(1), .bytes(point[1..<33])), (.negative(2), .bytes(point[33..<65])),
        ])
        let aaguidEnvironment: AppAttestEnvironment = fault == .wrongEnvironment ? (environment == .production ? .development : .production) : environment
        let credentialID = fault == .wrongKeyID ? SHA256Digest.hash(keyID) : keyID
        var authData = rpIDHash(wrong: fault == .wrongAppID)
        authData.append(AuthenticatorData.attestedCredentialFlag)
        authData.append(contentsOf: [0, 0, 0, 0])
        authData.append(aaguidEnvironment.aaguid)
        authData.append(contentsOf: [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)])
        authData.append(credentialID)
        authData.append(CBOREncoder.encode(cose))
        authData.append(extensions)
        let nonce = SHA256Digest.hash(authData + (fault == .wrongNonce ? SHA256Digest.hash(clientDataHash) : clientDataHash))
        let notBefore = fault == .expired ? now - 4 * 86_400 : now - 60
        let x5c = authority.x5c(for: privateKey.publicKey, keyID: keyID, nonce: nonce, notBefore: notBefore, rogue: fault == .badChain)
        let receiptTime = (receiptNow ?? now) - (fault == .staleReceipt ? 3_600 : 0)
        var receipt = attestReceipt(credentialCertificate: x5c[0], clientDataHash: clientDataHash, authority: authority.receiptAuthority, now: receiptTime)
        switch fault {
        case .garbageReceipt: receipt = Data(repeating: 0, count: 64)
        case .emptyReceipt: receipt = Data()
        case .nestedReceipt: receipt = Data([UInt8](repeating: 0, count: 20_000).enumerated().map { $0.offset % 2 == 0 ? 0x30 : 0x80 })
        case .foreignReceipt:
            let other = SimulatedAppAttestKey(appID: appID, environment: environment, validationCategory: nil, bundleVersion: nil, deviceID: nil)
            let otherCertificate = authority.x5c(for: other.privateKey.publicKey, keyID: other.keyID, nonce: nonce, notBefore: notBefore, rogue: false)[0]
            receipt = other.attestReceipt(credentialCertificate: otherCertificate, clientDataHash: clientDataHash, authority: authority.receiptAuthority,
                                          now: receiptTime)
        case .otherEnvironmentReceipt:
            receipt = attestReceipt(credentialCertificate: x5c[0], clientDataHash: clientDataHash, authority: authority.receiptAuthority, now: receiptTime,
                                    environmentField: environment == .production ? "sandbox" : "production")
        case .refreshedReceipt:
            receipt = refreshedReceipt(metric: 1, authority: authority.receiptAuthority, now: receiptTime) ?? receipt
        default: break
        }
        return CBOREncoder.encode(.map([
            (.text("fmt"), .text("apple-appattest")),
            (.text("attStmt"), .map([
                (.text("x5c"), .array(x5c.map { .bytes($0) })),
                // An ATTEST receipt, signed under the sandbox's stand-in for Apple Root CA - G3.
                (.text("receipt"), .bytes(receipt)),
            ])),
            (.text("authData"), .bytes(authData)),
        ]))
    }

    /// What `generateAssertion(keyId, clientDataHash:)` returns, and the counter it carries.
    func assertion(clientDataHash: Data, fault: AssertionFault?) -> (assertion: Data, counter: UInt32) {
        let counter = self.counter.withLock { current -> UInt32 in
            if fault == .replayedCounter { return current }
            current += 1
            return current
        }
        var authData = rpIDHash(wrong: fault == .wrongAppID)
        authData.append(fault == .atFlag ? AuthenticatorData.attestedCredentialFlag : 0)
        authData.append(contentsOf: withUnsafeBytes(of: counter.bigEndian, Array.init))
        authData.append(extensions)
        let signed = fault == .badSignature ? SHA256Digest.hash(authData + clientDataHash + Data([0])) : SHA256Digest.hash(authData + clientDataHash)
        let signature = ES256Signer(key: privateKey).signDER(signed)
        let assertion = CBOREncoder.encode(.map([(.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authData))]))
        return (assertion, counter)
    }

    private func rpIDHash(wrong: Bool) -> Data {
        wrong ? AppID(teamID: appID.teamID, bundleID: appID.bundleID + ".other").rpIDHash : appID.rpIDHash
    }

    /// iOS 27 appends this map with the ED flag clear; older devices append nothing.
    private var extensions: Data {
        var entries: [(key: CBORValue, value: CBORValue)] = []
        if let validationCategory { entries.append((.text("apple_validation_category_01"), .unsigned(UInt64(validationCategory)))) }
        if let bundleVersion { entries.append((.text("apple_bundle_version_01"), .text(bundleVersion))) }
        return entries.isEmpty ? Data() : CBOREncoder.encode(.map(entries))
    }
}

import AppAttestFormats
import FoundationEssentials
import TwoBitsCrypto

extension SimulatedAppAttestKey {
    /// How long a receipt lasts (Apple: creation + 90 days).
    static let receiptLifetime: TimeInterval = 90 * 86_400
    /// When Apple allows the next refresh: creation + 24 hours (the sandbox's default; a test may shorten it).
    static let refreshInterval: TimeInterval = 86_400

    /// Field 7 as Apple writes it.
    var receiptEnvironment: String { environment == .production ? "production" : "sandbox" }

    /// The public key, 0x04 ‖ X ‖ Y: what a server stores at attestation and compares with field 3.
    var publicKey: Data { privateKey.publicKey.uncompressedPoint }

    /// The ATTEST receipt of an attestation made at `now`, remembered as Apple's fraud service does.
    /// `environmentField`: field 7 as written (a fault names the other environment's); the key's by default.
    func attestReceipt(credentialCertificate: Data, clientDataHash: Data, authority: ReceiptAuthority, now: Date,
                       environmentField: String? = nil) -> Data {
        receiptState.withLock { state in
            state.attestedAt = now
            state.lastSeen = now
            state.credentialCertificate = credentialCertificate
            state.clientDataHash = clientDataHash
        }
        // Apple's order for an ATTEST receipt: 2, 3, 4, 5, 6, 7, 12, 21.
        let fields = ReceiptPayloadFields([
            (2, Data(appID.description.utf8)), (3, credentialCertificate), (4, clientDataHash), (5, Data(receiptToken.utf8)),
            (6, Data("ATTEST".utf8)), (7, Data((environmentField ?? receiptEnvironment).utf8)), (12, Data(ReceiptTime.format(now).utf8)),
            (21, Data(ReceiptTime.format(now + Self.receiptLifetime).utf8)),
        ])
        let receipt = authority.sign(payload: fields.der)
        receiptState.withLock { $0.lastReceipt = receipt }
        return receipt
    }

    /// A refreshed RECEIPT made at `now` with `metric`, its Not Before `refreshInterval` later; nil when the key
    /// was never attested.
    func refreshedReceipt(metric: Int, authority: ReceiptAuthority, now: Date, refreshInterval: TimeInterval = SimulatedAppAttestKey.refreshInterval) -> Data? {
        let remembered = receiptState.withLock { state -> (Data, Data)? in
            guard let certificate = state.credentialCertificate, let hash = state.clientDataHash else { return nil }
            state.lastSeen = now
            return (certificate, hash)
        }
        guard let (certificate, clientDataHash) = remembered else { return nil }
        // Apple's order for a RECEIPT: 17, 6, 2, 3, 4, 5, 7, 12, 19, 21.
        let fields = ReceiptPayloadFields([
            (17, Data(String(metric).utf8)), (6, Data("RECEIPT".utf8)), (2, Data(appID.description.utf8)), (3, certificate),
            (4, Self.mangled(clientDataHash)), (5, Data(receiptToken.utf8)), (7, Data(receiptEnvironment.utf8)),
            (12, Data(ReceiptTime.format(now).utf8)), (19, Data(ReceiptTime.format(now + refreshInterval).utf8)),
            (21, Data(ReceiptTime.format(now + Self.receiptLifetime).utf8)),
        ])
        let receipt = authority.sign(payload: fields.der)
        receiptState.withLock { $0.lastReceipt = receipt }
        return receipt
    }

    /// Field 4 as Apple's refreshed receipts carry it: the hash through a lossy UTF-8 round trip (each invalid
    /// byte becomes U+FFFD), made 54 bytes long as every one seen.
    static func mangled(_ hash: Data) -> Data {
        var bytes = Data(String(decoding: hash, as: UTF8.self).utf8)
        let replacement = Data([0xEF, 0xBF, 0xBD])
        while bytes.count < 54 { bytes.append(replacement) }
        return bytes.prefix(54)
    }
}

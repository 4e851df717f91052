public import FoundationEssentials

/// The attested credential data of an attestation's authenticator data: AAGUID, credential id and the
/// credential public key (a COSE EC2 P-256 key, kept as the uncompressed point).
public struct AttestedCredentialData: Sendable, Equatable {
    public let aaguid: Data
    public let credentialID: Data
    /// 0x04 ‖ X ‖ Y, from the COSE key.
    public let publicKey: Data

    /// Reads the COSE key map {1: 2 (EC2), 3: -7 (ES256, optional), -1: 1 (P-256), -2: X, -3: Y}.
    static func point(fromCOSE key: CBORValue) -> Data? {
        guard case .map = key,
              key[int: 1]?.intValue == 2,
              key[int: -1]?.intValue == 1,
              let x = key[int: -2]?.bytesValue, x.count == 32,
              let y = key[int: -3]?.bytesValue, y.count == 32 else { return nil }
        if let alg = key[int: 3], alg.intValue != -7 { return nil }
        return Data([0x04]) + x + y
    }

    init(aaguid: Data, credentialID: Data, publicKey: Data) {
        self.aaguid = aaguid
        self.credentialID = credentialID
        self.publicKey = publicKey
    }
}

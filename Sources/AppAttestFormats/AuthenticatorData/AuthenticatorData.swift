public import FoundationEssentials

/// Authenticator data as App Attest writes it: RP ID hash (32), flags (1), counter (4, big-endian), then
/// in attestations the attested credential data, and from iOS 27 a CBOR map of extensions — appended even
/// when the ED flag is clear, so it is read whenever bytes remain.
public struct AuthenticatorData: Sendable {
    /// The bytes exactly as received (hashed into the nonce).
    public let raw: Data
    public let rpIDHash: Data
    public let flags: UInt8
    public let counter: UInt32
    /// Present in attestations; never read in assertions.
    public let credential: AttestedCredentialData?
    /// The extensions map, when bytes followed.
    public let extensions: CBORValue?

    public static let attestedCredentialFlag: UInt8 = 0x40
    public static let extensionDataFlag: UInt8 = 0x80

    /// Where authenticator data comes from: attestations carry credential data, assertions do not.
    public enum Kind: Sendable { case attestation, assertion }

    /// Parses `raw`. In an attestation the AT flag and the credential data are required; in an assertion
    /// the AT flag is ignored (real devices set it with no credential data following).
    public init(_ raw: Data, kind: Kind, decoder: CBORDecoder = CBORDecoder()) throws(AppAttestFailure) {
        func bad(_ detail: String) -> AppAttestFailure { AppAttestFailure(.badFormat, at: .decode, "authenticator data: " + detail) }
        let bytes = [UInt8](raw)
        guard bytes.count >= 37 else { throw bad("\(bytes.count) bytes, fewer than the 37 of rpIdHash, flags and counter") }
        self.raw = raw
        rpIDHash = Data(bytes[0..<32])
        flags = bytes[32]
        counter = UInt32(bytes[33]) << 24 | UInt32(bytes[34]) << 16 | UInt32(bytes[35]) << 8 | UInt32(bytes[36])
        var position = 37
        switch kind {
        case .assertion:
            credential = nil
        case .attestation:
            guard flags & Self.attestedCredentialFlag != 0 else { throw bad("the AT flag is clear in an attestation") }
            guard bytes.count >= position + 18 else { throw bad("truncated attested credential data") }
            let aaguid = Data(bytes[position..<position + 16])
            let idLength = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
            position += 18
            guard idLength <= bytes.count - position else { throw bad("credential id length \(idLength) beyond the data") }
            let credentialID = Data(bytes[position..<position + idLength])
            position += idLength
            let key: CBORValue
            do { (key, position) = try decoder.decodePrefix(raw, from: position) } catch { throw bad("COSE key: \(error)") }
            guard let point = AttestedCredentialData.point(fromCOSE: key) else { throw bad("the COSE key is not an EC2 P-256 key") }
            credential = AttestedCredentialData(aaguid: aaguid, credentialID: credentialID, publicKey: point)
        }
        if position < bytes.count {
            let map: CBORValue
            do { map = try decoder.decode(Data(bytes[position...])) } catch { throw bad("extensions: \(error)") }
            guard case .map = map else { throw bad("extensions are not a CBOR map") }
            extensions = map
        } else {
            guard flags & Self.extensionDataFlag == 0 else { throw bad("the ED flag is set but no extensions follow") }
            extensions = nil
        }
    }

    /// `apple_validation_category_01`, when the extensions carry it.
    public var validationCategory: ValidationCategory? {
        switch extensions?["apple_validation_category_01"] {
        case .unsigned(let n)? where n <= 1_000_000: return ValidationCategory(rawValue: Int(n))
        case .text(let s)?: return Int(s).map(ValidationCategory.init(rawValue:))
        default: return nil
        }
    }

    /// `apple_bundle_version_01`, when the extensions carry it.
    public var bundleVersion: String? {
        switch extensions?["apple_bundle_version_01"] {
        case .text(let s)?: return s
        case .unsigned(let n)?: return String(n)
        default: return nil
        }
    }
}

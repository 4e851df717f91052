package import FoundationEssentials

/// Reads the P-256 public key of a DER certificate (a receipt's field 3) with the DER reader alone.
///
/// Why not OpenSSL: parsing a certificate there decodes its key through OpenSSL 3's decoders, about a sixth of
/// a receipt verification's CPU (Benchmarks/AppAttestBench), for a key the verifier only compares with the
/// stored one. The certificate is inside Apple's signed payload; its structure is still checked here.
package enum CredentialCertificateKey {
    /// AlgorithmIdentifier { id-ecPublicKey, prime256v1 }, encoded.
    static let p256Algorithm: [UInt8] = [0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                                         0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]

    /// The key as 0x04 ‖ X ‖ Y, or a description of what is wrong.
    package static func publicKey(_ certificate: Data) -> Result<Data, DERError> {
        do {
            var outer = DERReader(certificate)
            var body = try outer.read(tag: 0x30)
            guard outer.isAtEnd else { return .failure(.badLength) }
            var tbs = try body.read(tag: 0x30)
            _ = try body.read(tag: 0x30) // signatureAlgorithm
            _ = try body.read(tag: 0x03) // signatureValue
            guard body.isAtEnd else { return .failure(.badLength) }
            var probe = tbs
            if try probe.read().tag == 0xA0 { _ = try tbs.read() } // [0] version
            _ = try tbs.read(tag: 0x02) // serialNumber
            for _ in 0..<4 { _ = try tbs.read(tag: 0x30) } // signature, issuer, validity, subject
            var spki = try tbs.read(tag: 0x30)
            guard Array(try spki.readElement()) == p256Algorithm else { return .failure(.unexpectedTag(expected: 0x30, found: 0x30)) }
            let bits = Array(try spki.read(tag: 0x03).remaining)
            guard spki.isAtEnd, bits.count == 66, bits[0] == 0, bits[1] == 0x04 else { return .failure(.badLength) }
            return .success(Data(bits.dropFirst()))
        } catch {
            return .failure(error)
        }
    }
}

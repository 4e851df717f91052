import COpenSSL
import COpenSSLShims
public import FoundationEssentials

extension ES256Signer {
    /// Signs `message` (SHA-256 inside), returning the DER ECDSA-Sig-Value (what App Attest assertions carry)
    /// instead of JWS's raw r‖s.
    public func signDER(_ message: Data) -> Data {
        let raw = sign(message)
        var der = [UInt8](repeating: 0, count: 80)
        let length = raw.withUnsafeBytes { twobits_ecdsa_raw_to_der($0.bindMemory(to: UInt8.self).baseAddress, &der, Int32(der.count)) }
        precondition(length > 0, "raw to DER signature conversion failed")
        return Data(der.prefix(Int(length)))
    }
}

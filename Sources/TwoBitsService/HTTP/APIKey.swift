import TwoBitsCrypto
import WireFormats

/// API keys for clients.
public enum APIKey {
    /// A fresh random key (256 bits, base64url, prefixed `tb_`) and its SHA-256 hex digest for `key_sha256`.
    public static func generate() -> (key: String, sha256: String) {
        let key = "tb_" + SecureRandom.bytes(32).base64URLEncodedString()
        return (key, SHA256Digest.hex(key))
    }
}

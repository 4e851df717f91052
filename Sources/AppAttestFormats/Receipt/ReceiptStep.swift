/// One step of Apple's receipt verification ("Assessing fraud risk"), in the order `ReceiptVerifier` runs them.
public enum ReceiptStep: String, Sendable, CaseIterable {
    /// The bytes are one CMS signed-data (BER or DER) with embedded content and one signer.
    case container
    /// 1. The signature over the payload verifies with the signer's certificate.
    case signature
    /// 2. The signer's certificate chains to the pinned root at the verification time.
    case chain
    /// 3. The payload parses: every required field once, each well formed.
    case payload
    /// 4. Field 2 is the expected app id.
    case appID = "app_id"
    /// 5. Field 12 (creation) is recent, for a receipt just received from Apple.
    case freshness
    /// 5b. Field 21 (expiration) has not passed at the verification time.
    case expiration
    /// 6. Field 3's certificate carries the key stored at attestation.
    case publicKey = "public_key"

    /// What the step checks, for people reading the offline command's output.
    public var summary: String {
        switch self {
        case .container: return "one CMS signed-data with embedded content and one signer"
        case .signature: return "the signer's signature over the payload"
        case .chain: return "the signer certificate chains to Apple Root CA - G3 (or the given root) and is a receipt signer"
        case .payload: return "the payload's fields: each once, required ones present, lengths, times and the metric well formed"
        case .appID: return "field 2 equals the app id"
        case .freshness: return "field 12 (creation) is within the freshness window of the verification time"
        case .expiration: return "field 21 (expiration) has not passed at the verification time"
        case .publicKey: return "field 3's certificate key equals the stored public key"
        }
    }
}

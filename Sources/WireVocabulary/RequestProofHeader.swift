/// The headers a request proof travels in, from the app to the main API (docs/app-attest.md, "Request proof"):
/// all three base64url without padding, the request's body unchanged.
public enum RequestProofHeader {
    /// The key's artifact (`aa1.…`), as its attestation answered it.
    public static let key = "TwoBits-Proof-Key"
    /// The signed client data's bytes: `{"challenge","method","path","body_sha256"}`.
    public static let clientData = "TwoBits-Proof-Client-Data"
    /// What `generateAssertion` returned over the client data's SHA-256.
    public static let assertion = "TwoBits-Proof-Assertion"
}

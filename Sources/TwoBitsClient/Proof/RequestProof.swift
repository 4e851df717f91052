#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireVocabulary

/// One request signed by the install's App Attest key: what the app adds to that request, as headers, for the
/// main API to forward to `POST /v1/app-attest/request-proofs/verify` with what it received (docs/client.md,
/// "Signing a request"). Good for that one request, once.
public struct RequestProof: Sendable, Equatable {
    /// The key's artifact (`aa1.…`).
    public let artifact: String
    /// The signed client data: `{"challenge","method","path","body_sha256"}`.
    public let clientData: Data
    /// What `generateAssertion` returned over the client data's SHA-256.
    public let assertion: Data

    /// The three `TwoBits-Proof-*` headers, base64url without padding, to set on the request as they are.
    public var headers: [String: String] {
        [RequestProofHeader.key: artifact, RequestProofHeader.clientData: Base64URL.encode(clientData),
         RequestProofHeader.assertion: Base64URL.encode(assertion)]
    }
}

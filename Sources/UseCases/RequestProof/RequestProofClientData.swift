public import FoundationEssentials
import WireFormats

/// The client data of a request proof, as the app signed it with `generateAssertion` (over its SHA-256): a JSON
/// object of exactly four strings, `{"challenge":…,"method":…,"path":…,"body_sha256":…}` (any member order and
/// spacing, read by the strict parser: a duplicate member is refused, so a reader of the bytes cannot see another
/// request than TwoBits compared).
public struct RequestProofClientData: Sendable, Equatable {
    /// A challenge issued with purpose `request_proof`.
    public let challenge: String
    /// The request the app signed.
    public let request: BoundRequest

    /// The members, and nothing else: an unknown member is refused rather than ignored, so that what a proof binds
    /// is exactly what is compared.
    static let members: Set<String> = ["challenge", "method", "path", "body_sha256"]

    /// Nil when `bytes` is not such an object (`client_data_mismatch`).
    public init?(_ bytes: Data) {
        guard let object = try? JSONValue.parse(bytes).objectValue, Set(object.keys) == Self.members,
              let challenge = object["challenge"]?.stringValue, let method = object["method"]?.stringValue,
              let path = object["path"]?.stringValue, let body = object["body_sha256"]?.stringValue else { return nil }
        self.challenge = challenge
        request = BoundRequest(method: method, path: path, bodySHA256: body)
    }
}

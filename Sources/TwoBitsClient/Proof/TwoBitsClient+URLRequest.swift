// Full Foundation (and FoundationNetworking on Linux) for URLRequest: this file only, as URLSessionRelay.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TwoBitsClient {
    /// Signs `request` as it will be sent: its method (`GET` when unset), its URL's path and query as encoded,
    /// and its `httpBody` (empty when nil); adds the three `TwoBits-Proof-*` headers. Set the body before.
    ///
    /// - Throws: as `proof(method:path:body:)`; `.unsignableRequest` for a body stream or a URL without a path.
    public func sign(_ request: inout URLRequest) async throws(TwoBitsClientError) {
        guard request.httpBodyStream == nil else { throw .unsignableRequest("a body stream cannot be hashed before it is sent") }
        guard let url = request.url, let target = Self.requestTarget(of: url) else { throw .unsignableRequest("no absolute URL") }
        let proof = try await proof(method: request.httpMethod ?? "GET", path: target, body: request.httpBody ?? Data())
        for (name, value) in proof.headers { request.setValue(value, forHTTPHeaderField: name) }
    }

    /// The request target as it goes on the wire: the percent-encoded path (`/` when empty) and `?query`.
    static func requestTarget(of url: URL) -> String? {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: true), parts.host != nil else { return nil }
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        return parts.percentEncodedQuery.map { path + "?" + $0 } ?? path
    }
}

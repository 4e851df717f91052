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
        let unsigned = request
        request = try await gate.run { () async throws(TwoBitsClientError) -> URLRequest in try await self.signed(unsigned) }
    }

    /// Signs `request` and sends it with `send` before any other assertion of the key is made (a token's, another
    /// proof's): the key's queue is held until `send` returns, so the proof reaches the main API while its counter
    /// is still the key's latest. `sign` alone leaves that order to the app (`counter_not_increasing` when a token
    /// assertion reaches TwoBits first).
    ///
    /// - Throws: as `sign(_:)` (a `TwoBitsClientError`), or what `send` throws.
    public func send<Answer: Sendable>(_ request: URLRequest,
                                       through send: @escaping @Sendable (URLRequest) async throws -> Answer) async throws -> Answer {
        try await gate.run { () async throws -> Answer in
            let signed = try await self.signed(request)
            return try await send(signed)
        }
    }

    /// `request` with its proof's headers, made inside the queue.
    private func signed(_ request: URLRequest) async throws(TwoBitsClientError) -> URLRequest {
        guard request.httpBodyStream == nil else { throw .unsignableRequest("a body stream cannot be hashed before it is sent") }
        guard let url = request.url, let target = Self.requestTarget(of: url) else { throw .unsignableRequest("no absolute URL") }
        let proof = try await signRequest(method: request.httpMethod ?? "GET", path: target, body: request.httpBody ?? Data())
        var signed = request
        for (name, value) in proof.headers { signed.setValue(value, forHTTPHeaderField: name) }
        return signed
    }

    /// The request target as it goes on the wire: the percent-encoded path (`/` when empty) and `?query`.
    static func requestTarget(of url: URL) -> String? {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: true), parts.host != nil else { return nil }
        let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
        return parts.percentEncodedQuery.map { path + "?" + $0 } ?? path
    }
}

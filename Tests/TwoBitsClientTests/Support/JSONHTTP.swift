import Foundation
import OutboundHTTP

/// JSON over HTTP for the tests' own calls (the sandbox's control API, TwoBits' admin API, the test relay),
/// through TwoBits' own curl client: Foundation's URLSession is not used in the Swift suite, which also runs
/// under the sanitizers (`make sanitize`).
struct JSONHTTP: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let client: CurlClient

    func send(_ method: String, _ url: URL, _ body: Data?, headers: [String: String] = [:]) async throws -> OutboundResponse {
        var fields = headers.map { ($0.key, $0.value) }
        if body != nil { fields.append(("Content-Type", "application/json")) }
        return try await client.send(OutboundRequest(method: method, url: url.absoluteString, headers: fields, body: body,
                                                     timeoutMilliseconds: 20_000))
    }

    func send(_ method: String, _ url: URL, _ body: [String: Any]?, headers: [String: String] = [:]) async throws -> (status: Int, json: [String: Any]) {
        let response = try await send(method, url, try body.map { try JSONSerialization.data(withJSONObject: $0) }, headers: headers)
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// A POST that must answer 2xx; its JSON.
    func post(_ url: URL, _ body: [String: Any]) async throws -> [String: Any] {
        let (status, json) = try await send("POST", url, body)
        guard (200..<300).contains(status) else { throw Failure(description: "\(url.path): \(status) \(json)") }
        return json
    }
}

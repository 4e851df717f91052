import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// JSON over HTTP for the tests' own calls (the sandbox's control API, TwoBits' admin API).
enum JSONHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func send(_ method: String, _ url: URL, _ body: [String: Any]?, headers: [String: String] = [:]) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: url, timeoutInterval: 20)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (status, json)
    }

    /// A POST that must answer 2xx; its JSON.
    static func post(_ url: URL, _ body: [String: Any]) async throws -> [String: Any] {
        let (status, json) = try await send("POST", url, body)
        guard (200..<300).contains(status) else { throw Failure(description: "\(url.path): \(status) \(json)") }
        return json
    }
}

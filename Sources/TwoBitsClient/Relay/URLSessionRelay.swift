// Full Foundation (and FoundationNetworking on Linux) for URLSession: this file only; the rest of the library
// needs FoundationEssentials alone.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The reference relay: posts each call as JSON to a path of the team's main API, which adds TwoBits' API key
/// and forwards it (docs/client.md). Statuses and TwoBits' error envelope are expected to pass through
/// unchanged.
public struct URLSessionRelay: TwoBitsRelay, Sendable {
    /// The main API, e.g. `https://api.example.com/`.
    public let baseURL: URL
    public let paths: RelayPaths
    private let headers: @Sendable () async throws -> [String: String]
    private let binding: @Sendable () async -> String?
    // URLSession is Sendable (Apple documents it thread-safe; both Foundations declare it so).
    private let session: URLSession
    private let timeout: TimeInterval

    /// - Parameters:
    ///   - headers: asked before every call: the user's session with the main API, typically `Authorization`.
    ///   - binding: the session the main API binds tokens to, as the app knows it (typically the same session
    ///     token `headers` sends), for `sessionBinding()`: cached tokens are kept apart per value. Nil when the
    ///     main API does not bind tokens.
    ///   - timeout: seconds per call.
    public init(baseURL: URL, paths: RelayPaths = RelayPaths(),
                headers: @escaping @Sendable () async throws -> [String: String] = { [:] },
                binding: @escaping @Sendable () async -> String? = { nil },
                session: URLSession = .shared, timeout: TimeInterval = 20) {
        self.baseURL = baseURL
        self.paths = paths
        self.headers = headers
        self.binding = binding
        self.session = session
        self.timeout = timeout
    }

    public func challenge() async throws -> ChallengeAnswer {
        try await challenge(ChallengeRequest())
    }

    public func challenge(_ request: ChallengeRequest) async throws -> ChallengeAnswer {
        try await post(paths.challenge, body: request)
    }

    public func attest(_ request: AttestationRequest) async throws -> TokenAnswer {
        try await post(paths.attestation, body: request)
    }

    public func assert(_ request: AssertionRequest) async throws -> TokenAnswer {
        try await post(paths.assertion, body: request)
    }

    public func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer {
        try await post(paths.fallbackExchange, body: request)
    }

    public func sessionBinding() async -> String? {
        await binding()
    }

    private func post<Answer: Decodable>(_ path: String, body: some Encodable) async throws -> Answer {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for (name, value) in try await headers() { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = try JSONEncoder().encode(body)

        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw RelayFailure.unreachable(String(describing: error))
        }
        guard let http = response as? HTTPURLResponse else { throw RelayFailure.malformedAnswer("not an HTTP answer") }
        guard (200..<300).contains(http.statusCode) else {
            let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: data)
            throw RelayFailure.refused(status: http.statusCode, code: envelope?.error.code ?? "http_\(http.statusCode)",
                                       reason: envelope?.error.reason,
                                       retryAfterSeconds: http.value(forHTTPHeaderField: "Retry-After").flatMap { Int($0) })
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw RelayFailure.malformedAnswer("\(Answer.self): \(error)")
        }
    }

    /// TwoBits' error envelope: `{"error": {"code", "message", "reason"?}}`.
    private struct ErrorEnvelope: Decodable {
        struct Body: Decodable {
            let code: String
            let reason: String?
        }
        let error: Body
    }
}

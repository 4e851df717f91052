public import DeviceCheckModel
import FoundationEssentials
import OutboundHTTP
import Locking
import Mechanisms
import TwoBitsCrypto
import WireFormats

/// Calls Apple's DeviceCheck endpoints (or the sandbox) over libcurl.
///
/// Every call: waits for a slot under `maxInFlight`, sends the exact body Apple documents with the
/// shared developer token, re-signs once on 401, retries transient failures with capped exponential
/// backoff and full jitter, and gives up at the call's deadline with a typed error.
public final class AppleDeviceCheckClient: DeviceCheckAPI {
    public let configuration: AppleClientConfiguration
    public let tokens: DeveloperTokenProvider
    let http: CurlClient
    let limiter: InFlightLimiter
    private let observer: (any AppleCallObserver)?
    /// The developer JWT Apple last accepted. A 400 with the authorization body for that same JWT cannot
    /// be about our credentials: it is a device token from a build of the other environment.
    private let acceptedJWT = Lock<String?>(nil)

    public init(configuration: AppleClientConfiguration, tokens: DeveloperTokenProvider, observer: (any AppleCallObserver)? = nil) {
        self.configuration = configuration
        self.tokens = tokens
        self.http = CurlClient(maxConnectionsPerHost: configuration.maxConnections,
                               maxTotalConnections: max(configuration.maxConnections * 2, 16), caFile: configuration.caFile,
                               connectionsOpened: Self.connectionsObserver(observer))
        self.limiter = InFlightLimiter(limit: InFlightLimiter.slots(
            maxInFlight: configuration.maxInFlight, maxConnections: configuration.maxConnections, baseURL: configuration.baseURL))
        self.observer = observer
    }

    deinit { http.shutdown() }

    public func validate(_ token: DeviceToken) async throws(DeviceCheckError) {
        _ = try await call(.validate, token: token, bits: nil)
    }

    public func query(_ token: DeviceToken) async throws(DeviceCheckError) -> QueryResult {
        // `classify` has parsed (and checked) the 200 body of every query attempt.
        guard let result = try await call(.query, token: token, bits: nil).query else {
            throw .unavailable(.unparseable("query answered without a state"))
        }
        return result
    }

    @discardableResult
    public func update(_ token: DeviceToken, bits: Bits) async throws(DeviceCheckError) -> String {
        try await call(.update, token: token, bits: bits).transactionID
    }

    /// Reads a 200 answer to a query: Apple's "not found" text, or the JSON state.
    static func parseQuery(_ body: Data) throws(DeviceCheckError) -> QueryResult {
        if body.first != UInt8(ascii: "{") {
            let text = trimmed(body)
            if text == AppleResponseBody.bitStateNotFound || text == AppleResponseBody.bitStateNotFoundDocumented { return .neverSet }
        }
        guard let json = try? JSONValue.parse(body),
              let bit0 = json["bit0"]?.boolValue, let bit1 = json["bit1"]?.boolValue,
              let month = json["last_update_time"]?.stringValue.flatMap(YearMonth.init)
        else { throw .unavailable(.unparseable("query answered 200 with an unrecognised body")) }
        return .state(BitState(bits: Bits(bit0: bit0, bit1: bit1), lastUpdated: month))
    }

    struct Answer {
        /// The parsed state, for queries.
        let query: QueryResult?
        let transactionID: String
    }

    /// No attempt starts with less time than this left: it could not finish, and its timeout would
    /// hide what Apple actually answered before.
    var minimumAttemptMilliseconds: Int { min(250, max(10, configuration.timeoutMilliseconds / 4)) }

    private func call(_ endpoint: AppleEndpoint, token: DeviceToken, bits: Bits?) async throws(DeviceCheckError) -> Answer {
        let deadline = ContinuousClock.now + .milliseconds(configuration.timeoutMilliseconds)
        let acquired: Bool
        do { acquired = try await limiter.acquire(timeoutMilliseconds: configuration.timeoutMilliseconds) } catch {
            // Nobody waits for the answer any more; nothing was sent, as when curl drops a cancelled call.
            throw .unavailable(.connectionFailed("cancelled"))
        }
        guard acquired else {
            observeOverloaded(.deviceCheck(endpoint))
            throw .unavailable(.overloaded)
        }
        defer { limiter.release() }
        // A slot handed over at (or just before) the deadline is as good as none.
        guard Self.milliseconds(until: deadline) >= minimumAttemptMilliseconds else {
            observeOverloaded(.deviceCheck(endpoint))
            throw .unavailable(.overloaded)
        }

        var attempt = 0
        var resigned = false
        var lastAnswer: TransientFailure?
        // An update attempt that may have reached Apple makes every later failure of the call ambiguous.
        var mayHaveWritten = false
        func failing(_ error: DeviceCheckError) -> DeviceCheckError {
            guard mayHaveWritten, case .unavailable(let failure) = error else { return error }
            return .unavailable(.outcomeUnknown(failure))
        }
        while true {
            attempt += 1
            let remaining = Self.milliseconds(until: deadline)
            let transactionID = SecureRandom.uuid()
            let developerToken = tokens.current()
            let outcome = await attemptOnce(endpoint, token: token, bits: bits, developerToken: developerToken,
                                            transactionID: transactionID, timeoutMilliseconds: remaining)
            switch outcome {
            case .success(let query):
                acceptedJWT.withLock { $0 = developerToken.jwt }
                return Answer(query: query, transactionID: transactionID)
            case .failure(.rejected(400, let text)) where text.hasPrefix(AppleResponseBody.badAuthorizationToken)
                && acceptedJWT.withLock({ $0 == developerToken.jwt }):
                throw .invalidDeviceToken
            case .failure(.rejected(401, _)) where !resigned:
                // The token may have expired or the key been rotated: sign anew once, then give up.
                resigned = true
                tokens.invalidate(developerToken)
                continue
            case .failure(.unavailable(let failure)):
                if failure != .timedOut { lastAnswer = failure }
                if endpoint == .update && Self.isAmbiguous(failure) { mayHaveWritten = true }
                let backoff = Self.backoff(attempt: attempt, configuration)
                // Retry only when the wait and a whole attempt still fit in the deadline, and someone still waits.
                guard !Task.isCancelled, Self.milliseconds(until: deadline) >= backoff + minimumAttemptMilliseconds else {
                    // An attempt cut short by our own deadline says less than Apple's last answer.
                    throw failing(.unavailable(failure == .timedOut ? (lastAnswer ?? failure) : failure))
                }
                try? await Task.sleep(for: .milliseconds(backoff))
            case .failure(.invalidDeviceToken):
                throw .invalidDeviceToken
            case .failure(.rejected(let status, let body)) where mayHaveWritten:
                // An earlier attempt may have written; this answer says nothing about that one.
                throw .unavailable(.outcomeUnknown(.unparseable("rejected after an attempt of unknown outcome (\(status) \(body.prefix(60)))")))
            case .failure(let error):
                throw error
            }
        }
    }

    private func attemptOnce(_ endpoint: AppleEndpoint, token: DeviceToken, bits: Bits?, developerToken: DeveloperToken,
                             transactionID: String, timeoutMilliseconds: Int) async -> Result<QueryResult?, DeviceCheckError> {
        let body = AppleRequestBody(deviceToken: token.base64, transactionID: transactionID,
                                    timestamp: Int64(Date().timeIntervalSince1970 * 1000), bit0: bits?.bit0, bit1: bits?.bit1)
        let request = OutboundRequest(
            method: "POST", url: configuration.baseURL + endpoint.path,
            headers: [("Authorization", developerToken.authorization), ("Content-Type", "application/json")],
            body: body.encoded(), timeoutMilliseconds: max(1, timeoutMilliseconds))
        let started = ContinuousClock.now
        let result: Result<QueryResult?, DeviceCheckError>
        do {
            let response = try await http.send(request)
            result = Self.classify(endpoint, status: response.status, body: response.body)
        } catch {
            switch error {
            case .timedOut: result = .failure(.unavailable(.timedOut))
            case .connectionFailed(let m): result = .failure(.unavailable(.connectionFailed(m)))
            case .tlsFailed(let m):
                result = .failure(.unavailable(.tlsFailed(m)))
                observeTLSFailure(.deviceCheck(endpoint), url: configuration.baseURL, reason: m)
            case .shutDown: result = .failure(.unavailable(.connectionFailed("client shut down")))
            // Never sent: like a call that found no in-flight slot, and an update stays unwritten for sure.
            case .noStream: result = .failure(.unavailable(.overloaded))
            // Taken out of curl mid-call: for an update that may have reached Apple, ambiguous like a lost connection.
            case .cancelled: result = .failure(.unavailable(.connectionFailed("cancelled")))
            }
        }
        observe(.deviceCheck(endpoint), outcome: Self.outcomeLabel(endpoint, result), since: started)
        return result
    }

    /// Maps an HTTP answer onto the three error classes; a 200 to a query carries its parsed state
    /// (an unparseable one is transient, never "clear").
    static func classify(_ endpoint: AppleEndpoint, status: Int, body: Data) -> Result<QueryResult?, DeviceCheckError> {
        if status == 200 {
            // Apple's documented success answer to an update is an empty body; anything else is ambiguous
            // (maybe written, maybe not), never success.
            if endpoint == .update && !body.isEmpty { return .failure(.unavailable(.unparseable("update answered 200 with an unexpected body"))) }
            guard endpoint == .query else { return .success(nil) }
            do { return .success(try parseQuery(body)) } catch { return .failure(error) }
        }
        let text = trimmed(body)
        switch status {
        case 400 where text.hasPrefix(AppleResponseBody.badDeviceToken):
            return .failure(.invalidDeviceToken)
        case 429:
            return .failure(.unavailable(.throttled))
        case 500...599:
            return .failure(.unavailable(.serverError(status)))
        case 400...499:
            return .failure(.rejected(status: status, body: String(text.prefix(200))))
        default:
            return .failure(.unavailable(.unparseable("unexpected status \(status)")))
        }
    }

    /// Failures after which an update may have been applied: no answer (timeout, lost connection) or
    /// an answer that is not one of Apple's (unparseable). 429 and 5xx are Apple saying it did not write.
    static func isAmbiguous(_ failure: TransientFailure) -> Bool {
        switch failure {
        case .timedOut, .connectionFailed, .unparseable, .outcomeUnknown: return true
        // A failed handshake comes before the request: nothing reached Apple.
        case .throttled, .serverError, .overloaded, .tlsFailed: return false
        }
    }

    /// Reports one attempt, sent at `started`, to the observer.
    func observe(_ endpoint: AppleCallEndpoint, outcome: String, since started: ContinuousClock.Instant) {
        guard let observer else { return }
        let elapsed = ContinuousClock.now - started
        observer.appleCall(endpoint: endpoint, outcome: outcome, seconds: elapsed.inSeconds)
    }

    /// What the HTTP client tells of the connections it opened, for `observer` by host name.
    static func connectionsObserver(_ observer: (any AppleCallObserver)?) -> (@Sendable (String, Int) -> Void)? {
        guard let observer else { return nil }
        return { origin, count in observer.appleConnectionsOpened(host: host(of: origin), count: count) }
    }

    /// Reports an attempt whose TLS handshake with the host of `url` failed.
    func observeTLSFailure(_ endpoint: AppleCallEndpoint, url: String, reason: String) {
        observer?.appleTLSFailed(endpoint: endpoint, host: Self.host(of: url), reason: reason)
    }

    /// The host name of an `https://host[:port]/…` URL (userinfo left out: it never reaches a log).
    static func host(of url: String) -> String {
        var rest = Substring(url)
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") { rest = rest[rest.index(colon, offsetBy: 3)...] }
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.first == "[", let close = rest.firstIndex(of: "]") { return String(rest[...close]) }
        return String(rest.prefix { $0 != ":" })
    }

    /// Reports a call that found no in-flight slot: nothing was sent.
    func observeOverloaded(_ endpoint: AppleCallEndpoint) {
        observer?.appleCall(endpoint: endpoint, outcome: TransientFailure.overloaded.label, seconds: 0)
    }

    private static func outcomeLabel(_ endpoint: AppleEndpoint, _ result: Result<QueryResult?, DeviceCheckError>) -> String {
        switch result {
        case .success(let query): return query == .neverSet ? "not_found" : "ok"
        case .failure(.invalidDeviceToken): return "invalid_device_token"
        case .failure(.rejected): return "rejected"
        case .failure(.unavailable(let f)): return f.label
        }
    }

    /// The body as text without surrounding whitespace (Apple's plain-text answers).
    static func trimmed(_ body: Data) -> String {
        var bytes = body[...]
        while let first = bytes.first, first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Milliseconds to wait before the retry after `attempt` failed: exponential, with full jitter.
    static func backoff(attempt: Int, _ configuration: AppleClientConfiguration) -> Int {
        let backoff = ExponentialBackoff(base: .milliseconds(configuration.initialBackoffMilliseconds),
                                         maximum: .milliseconds(configuration.maxBackoffMilliseconds), jitter: .full)
        return Int((backoff.delay(afterFailures: attempt, random: .random(in: 0...1)).inMilliseconds).rounded())
    }

    static func milliseconds(until deadline: ContinuousClock.Instant) -> Int {
        max(0, (deadline - ContinuousClock.now).wholeMilliseconds)
    }
}

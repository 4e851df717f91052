import DeviceCheckModel
import FoundationEssentials
import OutboundHTTP
import TwoBitsCrypto

extension AppleDeviceCheckClient {
    /// One query of a device token Apple cannot know, signed with the configured credentials: Apple answers
    /// 400 "Missing or incorrectly formatted device token payload" only once it has accepted the developer token.
    public func checkLink() async -> AppleLinkReport {
        let url = configuration.baseURL + AppleEndpoint.query.path
        let token = SecureRandom.bytes(48).base64EncodedString()
        let body = AppleRequestBody(deviceToken: token, transactionID: SecureRandom.uuid(),
                                    timestamp: Int64(Date().timeIntervalSince1970 * 1000), bit0: nil, bit1: nil)
        var request = OutboundRequest(
            method: "POST", url: url,
            headers: [("Authorization", tokens.current().authorization), ("Content-Type", "application/json")],
            body: body.encoded(), timeoutMilliseconds: configuration.timeoutMilliseconds)
        request.describesLink = true
        let started = ContinuousClock.now
        let verdict: AppleLinkReport.Verdict
        var tls: String?
        var version: String?
        do {
            let response = try await http.send(request)
            tls = response.tls
            version = response.httpVersion
            let text = String(Self.trimmed(response.body).prefix(200))
            switch response.status {
            case 400 where text.hasPrefix(AppleResponseBody.badDeviceToken), 200: verdict = .accepted
            case 400, 401, 403: verdict = .refused(status: response.status, body: text)
            default: verdict = .inconclusive(status: response.status, body: text)
            }
        } catch {
            switch error {
            case .timedOut: verdict = .unreachable("no answer within apple.timeout_ms (\(configuration.timeoutMilliseconds) ms)")
            case .connectionFailed(let reason), .tlsFailed(let reason): verdict = .unreachable(reason)
            case .noStream: verdict = .unreachable("no connection to the host was ready within apple.timeout_ms")
            case .shutDown, .cancelled: verdict = .unreachable("cancelled")
            }
        }
        let elapsed = ContinuousClock.now - started
        return AppleLinkReport(url: url, verdict: verdict, tls: tls, httpVersion: version,
                               milliseconds: Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000))
    }
}

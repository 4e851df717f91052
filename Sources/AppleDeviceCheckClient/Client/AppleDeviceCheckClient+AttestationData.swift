import DeviceCheckModel
public import FoundationEssentials
import OutboundHTTP

extension AppleDeviceCheckClient {
    /// Sends `receipt` (an App Attest receipt, DER/BER bytes) to `<appAttestDataBaseURL>/v1/attestationData` as
    /// Apple requires: the padded base64 text as the whole body, the bare developer JWT in `Authorization`.
    /// One attempt (and one more with a newly signed token after a 401): retries and back-off are the caller's.
    public func attestationData(receipt: Data) async -> AttestationDataAnswer {
        let acquired: Bool
        do { acquired = try await limiter.acquire(timeoutMilliseconds: configuration.timeoutMilliseconds) } catch { return .unavailable("cancelled") }
        guard acquired else {
            observeOverloaded(.attestationData)
            return .unavailable("overloaded: no slot to call Apple within the deadline")
        }
        defer { limiter.release() }
        var developerToken = tokens.current()
        var answer = await attestationDataOnce(receipt: receipt, jwt: developerToken.jwt)
        if answer == .unauthorized {
            // The token may have expired or the key been rotated: sign anew once.
            tokens.invalidate(developerToken)
            developerToken = tokens.current()
            answer = await attestationDataOnce(receipt: receipt, jwt: developerToken.jwt)
        }
        return answer
    }

    private func attestationDataOnce(receipt: Data, jwt: String) async -> AttestationDataAnswer {
        let request = OutboundRequest(
            method: "POST", url: configuration.appAttestDataBaseURL + "/v1/attestationData",
            headers: [("Authorization", jwt), ("Content-Type", "text/plain")],
            body: Data(receipt.base64EncodedString().utf8), timeoutMilliseconds: max(1, configuration.timeoutMilliseconds))
        let started = ContinuousClock.now
        let answer: AttestationDataAnswer
        let outcome: String
        do {
            let response = try await http.send(request)
            answer = Self.classifyAttestationData(status: response.status, body: response.body)
            outcome = Self.attestationDataOutcome(status: response.status, answer: answer)
        } catch {
            answer = .unavailable("\(error)")
            switch error {
            case .timedOut: outcome = TransientFailure.timedOut.label
            case .tlsFailed(let reason):
                outcome = TransientFailure.tlsFailed(reason).label
                observeTLSFailure(.attestationData, url: configuration.appAttestDataBaseURL, reason: reason)
            case .noStream: outcome = TransientFailure.overloaded.label
            case .connectionFailed, .shutDown, .cancelled: outcome = TransientFailure.connectionFailed("").label
            }
        }
        observe(.attestationData, outcome: outcome, since: started)
        return answer
    }

    /// The metrics' outcome of one `attestationData` attempt, in the words of the DeviceCheck calls where they mean
    /// the same (`ok`, `rejected`, `throttled`, `server_error`, `unparseable`), and Apple's own answers besides.
    static func attestationDataOutcome(status: Int, answer: AttestationDataAnswer) -> String {
        switch answer {
        case .receipt: "ok"
        case .notModified: "not_modified"
        case .noData: "no_data"
        case .incorrectEnvironment: "incorrect_environment"
        case .badPayload, .unauthorized: "rejected"
        case .throttled: TransientFailure.throttled.label
        case .unavailable: (500...599).contains(status) ? TransientFailure.serverError(status).label : TransientFailure.unparseable("").label
        }
    }

    /// Maps `attestationData`'s HTTP answer onto `AttestationDataAnswer`.
    static func classifyAttestationData(status: Int, body: Data) -> AttestationDataAnswer {
        let text = trimmed(body)
        switch status {
        case 200:
            guard !text.isEmpty, let receipt = Data(base64Encoded: text), !receipt.isEmpty else {
                return .unavailable("200 with a body that is not base64")
            }
            return .receipt(receipt)
        case 304: return .notModified
        case 400 where text == AppleResponseBody.incorrectEnvironment: return .incorrectEnvironment
        case 400: return .badPayload
        case 401: return .unauthorized
        case 404: return .noData
        case 429: return .throttled
        case 500...599: return .unavailable("server error \(status)")
        default: return .unavailable("unexpected status \(status)")
        }
    }
}

import AppAttestFormats
import DeviceCheckModel
public import FoundationEssentials
import HTTPServer

extension AppleSandbox {
    /// The name `attestationData` has in the counters and in faults' `endpoint`.
    public static let attestationDataEndpoint = "attestation_data"
    /// Apple keeps a key's data this long after its latest attestation or refresh, and counts keys over it.
    static let fraudDataWindow: TimeInterval = 30 * 86_400

    /// `POST /v1/attestationData`: Apple's fraud-metric service. The body is the base64 of a receipt, the bare
    /// developer JWT in `Authorization`; answers 200 with a new base64 RECEIPT, 304 before the receipt's Not
    /// Before, 400 `Incorrect Environment` / `Bad Payload`, 401, 404 when Apple has no data for it.
    func answerAttestationData(_ request: ServerRequest) async -> ServerResponse {
        state.withLock { s in
            s.callsInFlight += 1
            s.counters.maxConcurrentCalls = max(s.counters.maxConcurrentCalls, s.callsInFlight)
        }
        let response = await computeAttestationData(request)
        state.withLock { s in
            s.callsInFlight -= 1
            s.counters.calls[Self.attestationDataEndpoint, default: 0] += 1
            s.counters.statuses[String(response.status), default: 0] += 1
        }
        return response
    }

    private func computeAttestationData(_ request: ServerRequest) async -> ServerResponse {
        let latency = latencyMilliseconds
        if latency > 0 { try? await Task.sleep(for: .milliseconds(latency)) }
        if let fault = state.nextFault(for: Self.attestationDataEndpoint) { return await answer(for: fault) }
        return refreshReceipt(request)
    }

    private func refreshReceipt(_ request: ServerRequest) -> ServerResponse {
        // The developer JWT (its clock is the real one: the caller signs with its own), bare as Apple takes it.
        guard case .success = verifier.verify(authorization: request.header("Authorization"), now: now(), bearer: false) else {
            return .text(401, AppleResponseBody.unverifiedAuthorizationToken)
        }
        // The body: padded base64 text of the receipt, nothing else.
        let text = String(decoding: request.body, as: UTF8.self)
        guard !text.isEmpty, let receipt = Data(base64Encoded: text), !receipt.isEmpty else { return .text(400, AppleResponseBody.badPayload) }
        let now = appAttestNow()
        // Only receipts this sandbox signed, at the fraud clock. One past its expiration is still its own: Apple
        // answers that with 404 (below), not 400.
        guard let payload = try? appAttestAuthority.receiptAuthority.payload(ofItsOwn: receipt, at: now) else {
            return .text(400, AppleResponseBody.badPayload)
        }
        let sandboxEnvironment = configuration.environment == .production ? "production" : "sandbox"
        guard payload.environment == sandboxEnvironment else { return .text(400, AppleResponseBody.incorrectEnvironment) }
        // A receipt of another team's app does not match the token.
        guard payload.appID.hasPrefix(configuration.teamID + ".") else { return .text(401, AppleResponseBody.unverifiedAuthorizationToken) }

        let (key, keys) = state.withLock { s in (s.appAttestKeys.values.first { $0.receiptToken == payload.token }, Array(s.appAttestKeys.values)) }
        guard let key else { return .text(404, "") }
        if let notBefore = payload.notBefore, now < notBefore { return .text(304, "") }
        let lastSeen = key.receiptState.withLock { $0.lastSeen }
        guard now <= payload.expiration, let lastSeen, now.timeIntervalSince(lastSeen) <= Self.fraudDataWindow else { return .text(404, "") }

        let metric = Self.riskMetric(of: key, among: keys, at: now)
        guard let fresh = key.refreshedReceipt(metric: metric, authority: appAttestAuthority.receiptAuthority, now: now,
                                               refreshInterval: receiptRefreshInterval) else { return .text(404, "") }
        return ServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data(fresh.base64EncodedString().utf8))
    }

    /// The keys the key's simulated device attested for its app over the past 30 days (itself included): a key
    /// without a device is a device of its own.
    static func riskMetric(of key: SimulatedAppAttestKey, among keys: [SimulatedAppAttestKey], at now: Date) -> Int {
        let peers = key.deviceID.map { device in keys.filter { $0.deviceID == device && $0.appID == key.appID } } ?? [key]
        let recent = peers.filter { peer in
            guard let attested = peer.receiptState.withLock({ $0.attestedAt }) else { return false }
            return now.timeIntervalSince(attested) <= fraudDataWindow
        }
        return max(1, recent.count)
    }

    /// The time of the sandbox's App Attest fraud service: its clock plus `appAttestClockOffset`.
    func appAttestNow() -> Date { now() + appAttestClockOffset }

    /// Seconds added to the clock of App Attest's fraud service (receipt creation, Not Before, expiry, the
    /// 30-day windows), so a test can be "a day later". The developer JWT check and attestation certificates
    /// keep the real clock.
    public var appAttestClockOffset: TimeInterval {
        get { state.withLock { $0.appAttestClockOffset } }
        set { state.withLock { $0.appAttestClockOffset = newValue } }
    }

    /// Seconds between a refreshed receipt's creation and its Not Before (field 19): Apple's 24 h unless a test
    /// shortens it, so the refresher's second renewal comes seconds after its first.
    public var receiptRefreshInterval: TimeInterval {
        get { state.withLock { $0.receiptRefreshInterval } }
        set { state.withLock { $0.receiptRefreshInterval = newValue } }
    }
}

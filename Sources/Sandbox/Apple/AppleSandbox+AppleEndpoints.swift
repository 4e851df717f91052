import DeviceCheckModel
import FoundationEssentials
import HTTPServer
import TwoBitsCrypto
import WireFormats

extension AppleSandbox {
    /// Answers one of Apple's endpoints with Apple's statuses and literal bodies.
    func answerApple(_ endpoint: AppleEndpoint, _ request: ServerRequest) async -> ServerResponse {
        state.withLock { s in
            s.callsInFlight += 1
            s.counters.maxConcurrentCalls = max(s.counters.maxConcurrentCalls, s.callsInFlight)
        }
        let response = await computeAppleAnswer(endpoint, request)
        state.withLock { s in
            s.callsInFlight -= 1
            s.counters.calls[endpoint.rawValue, default: 0] += 1
            s.counters.statuses[String(response.status), default: 0] += 1
        }
        return response
    }

    private func computeAppleAnswer(_ endpoint: AppleEndpoint, _ request: ServerRequest) async -> ServerResponse {
        let latency = latencyMilliseconds
        if latency > 0 { try? await Task.sleep(for: .milliseconds(latency)) }

        if let fault = state.nextFault(for: endpoint.rawValue) {
            if fault.apply == true { _ = applyAppleCall(endpoint, request) }
            return await answer(for: fault)
        }
        return applyAppleCall(endpoint, request)
    }

    /// What a queued fault answers instead of Apple (a status, a dropped connection, or a 503 after its delay).
    func answer(for fault: Fault) async -> ServerResponse {
        switch fault.kind {
        case .status: return .text(fault.status ?? 503, fault.body ?? "")
        case .drop: return .dropped
        case .timeout:
            try? await Task.sleep(for: .milliseconds(fault.delayMilliseconds ?? 30_000))
            return .text(503, "")
        }
    }

    /// What Apple does with a call that reaches it: checks, then the answer (and, for an update, the write).
    private func applyAppleCall(_ endpoint: AppleEndpoint, _ request: ServerRequest) -> ServerResponse {
        // Apple checks the developer JWT before anything in the body.
        switch verifier.verify(authorization: request.header("Authorization"), now: now()) {
        case .failure(.malformed): return .text(400, AppleResponseBody.badAuthorizationToken)
        case .failure(.unverified): return .text(401, AppleResponseBody.unverifiedAuthorizationToken)
        case .failure(.expired): return .text(401, AppleResponseBody.expiredAuthorizationToken)
        case .success(let jwt):
            let digest = SHA256Digest.hex(jwt)
            state.withLock { s in
                if s.developerTokenDigests.insert(digest).inserted { s.counters.distinctDeveloperTokens += 1 }
            }
        }

        guard let body = (try? JSONValue.parse(request.body))?.objectValue else { return .text(400, AppleResponseBody.badDeviceToken) }
        guard let token = body["device_token"]?.stringValue, !token.isEmpty else { return .text(400, AppleResponseBody.badDeviceToken) }
        guard let transaction = body["transaction_id"]?.stringValue, !transaction.isEmpty else {
            return .text(400, "Missing or incorrectly formatted transaction id")
        }
        // Milliseconds since the epoch, within an hour of now; seconds are refused.
        guard let timestamp = body["timestamp"]?.intValue, timestamp > 100_000_000_000,
              abs(timestamp - Int64(now().timeIntervalSince1970 * 1000)) < 3_600_000
        else { return .text(400, AppleResponseBody.badTimestamp) }

        var newBits: (bit0: Bool?, bit1: Bool?) = (nil, nil)
        if endpoint == .update {
            for (index, key) in ["bit0", "bit1"].enumerated() {
                guard let value = body[key] else { continue }
                guard let flag = value.boolValue else { return .text(400, AppleResponseBody.badBits) }
                if index == 0 { newBits.bit0 = flag } else { newBits.bit1 = flag }
            }
        }

        let month = YearMonth(containing: now())
        let environment = configuration.environment
        return state.withLock { s -> ServerResponse in
            guard let minted = s.tokens[token], s.devices[minted.device] != nil else {
                return .text(400, AppleResponseBody.badDeviceToken)
            }
            // A token from the other environment's app fails like a wrong-host call at Apple.
            guard minted.environment == environment else { return .text(400, AppleResponseBody.badAuthorizationToken) }
            switch endpoint {
            case .validate:
                return .text(200, "")
            case .query:
                guard case .state(let state) = s.devices[minted.device]!.queryResult else {
                    return .text(200, AppleResponseBody.bitStateNotFound)
                }
                let json = #"{"bit0":\#(state.bit0),"bit1":\#(state.bit1),"last_update_time":"\#(state.lastUpdated)"}"#
                return ServerResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data(json.utf8))
            case .update:
                if newBits.bit0 == nil || newBits.bit1 == nil { s.counters.updatesMissingBit += 1 }
                var device = s.devices[minted.device]!
                if let b = newBits.bit0 { device.bits.bit0 = b }
                if let b = newBits.bit1 { device.bits.bit1 = b }
                device.lastUpdated = month
                device.updates += 1
                s.devices[minted.device] = device
                s.writes.append(atMilliseconds: Int64((now().timeIntervalSince1970 * 1000).rounded()), deviceID: minted.device,
                                bit0: newBits.bit0, bit1: newBits.bit1, transactionID: transaction)
                return .text(200, "")
            }
        }
    }
}

import AppAttestFormats
import FoundationEssentials
import HTTPServer
import TwoBitsCrypto
import WireFormats

/// The App Attest part of the control API (`/sandbox/v1/app-attest/...`, docs/sandbox.md): simulated devices
/// generate keys, attest them and sign assertions as an iPhone does, or get one thing wrong on request.
extension AppleSandbox {
    private func appAttestError(_ status: Int, _ message: String) -> ServerResponse { .json(status, ["error": message]) }

    /// `POST /sandbox/v1/app-attest/keys {app_id, environment, validation_category?, bundle_version?, device_id?}` → 201 `{key_id}`.
    func controlCreateAppAttestKey(_ request: ServerRequest) -> ServerResponse {
        guard let body = (try? JSONValue.parse(request.body))?.objectValue else { return appAttestError(400, "body must be a JSON object") }
        let known: Set<String> = ["app_id", "environment", "validation_category", "bundle_version", "device_id"]
        if let unknown = body.keys.sorted().first(where: { !known.contains($0) }) { return appAttestError(400, "unknown field \(unknown)") }
        guard let appID = body["app_id"]?.stringValue.flatMap(AppID.init) else { return appAttestError(400, "app_id must be TEAMID.bundle.id") }
        guard let environment = body["environment"]?.stringValue.flatMap(AppAttestEnvironment.init(rawValue:)) else {
            return appAttestError(400, "environment must be development or production")
        }
        var category: Int?
        if let value = body["validation_category"], value != .null {
            guard let n = value.intValue, (0...1_000_000).contains(n) else { return appAttestError(400, "validation_category must be a whole number 0-1000000") }
            category = Int(n)
        }
        var bundleVersion: String?
        if let value = body["bundle_version"], value != .null {
            guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= 64 else { return appAttestError(400, "bundle_version must be a string of 1-64 bytes") }
            bundleVersion = text
        }
        var deviceID: String?
        if let value = body["device_id"], value != .null {
            guard let id = value.stringValue, device(id) != nil else { return appAttestError(404, "unknown device_id") }
            deviceID = id
        }
        let key = SimulatedAppAttestKey(appID: appID, environment: environment, validationCategory: category, bundleVersion: bundleVersion,
                                        deviceID: deviceID)
        let keyID = key.keyID.base64EncodedString()
        state.withLock { $0.appAttestKeys[keyID] = key }
        return .json(201, ["key_id": keyID])
    }

    /// `POST /sandbox/v1/app-attest/attestations {key_id, client_data_hash, fault?}` → `{attestation_object}`. As
    /// `attestKey` does, it takes a client data hash of any length (1-1024 bytes here), usually SHA-256 of a challenge.
    func controlAttest(_ request: ServerRequest) -> ServerResponse {
        switch appAttestInput(request, faults: AttestationFault.allCases.map(\.rawValue), hashLengths: 1...1024) {
        case .failure(let refusal): return refusal.response
        case .success(let (key, clientDataHash, fault)):
            let object = key.attestationObject(clientDataHash: clientDataHash, fault: fault.flatMap(AttestationFault.init(rawValue:)),
                                               authority: appAttestAuthority, now: now(), receiptNow: appAttestNow())
            // The receipt inside the object and the key, for tests and tools that do not read CBOR.
            let receipt = key.receiptState.withLock { $0.lastReceipt } ?? Data()
            return .json(200, ["attestation_object": object.base64EncodedString(), "receipt": receipt.base64EncodedString(),
                               "public_key": key.publicKey.base64EncodedString()])
        }
    }

    /// `POST /sandbox/v1/app-attest/assertions {key_id, client_data_hash, fault?}` → `{assertion, counter}`.
    func controlAssert(_ request: ServerRequest) -> ServerResponse {
        switch appAttestInput(request, faults: AssertionFault.allCases.map(\.rawValue)) {
        case .failure(let refusal): return refusal.response
        case .success(let (key, clientDataHash, fault)):
            let (assertion, counter) = key.assertion(clientDataHash: clientDataHash, fault: fault.flatMap(AssertionFault.init(rawValue:)))
            struct Answer: Encodable { let assertion: String; let counter: UInt32 }
            return .json(200, Answer(assertion: assertion.base64EncodedString(), counter: counter))
        }
    }

    /// The key, the client data hash (32 bytes unless `hashLengths` says otherwise) and the fault name (one of
    /// `faults`) a request names.
    private func appAttestInput(_ request: ServerRequest, faults: [String], hashLengths: ClosedRange<Int> = 32...32)
        -> Result<(SimulatedAppAttestKey, Data, String?), BadInputResponse> {
        guard let body = (try? JSONValue.parse(request.body))?.objectValue else { return .failure(BadInputResponse(appAttestError(400, "body must be a JSON object"))) }
        if let unknown = body.keys.sorted().first(where: { !["key_id", "client_data_hash", "fault"].contains($0) }) {
            return .failure(BadInputResponse(appAttestError(400, "unknown field \(unknown)")))
        }
        guard let keyID = body["key_id"]?.stringValue else { return .failure(BadInputResponse(appAttestError(400, "key_id must be a string"))) }
        guard let key = state.withLock({ $0.appAttestKeys[keyID] }) else { return .failure(BadInputResponse(appAttestError(404, "unknown key_id"))) }
        guard let hash = body["client_data_hash"]?.stringValue.flatMap({ Data(base64Encoded: $0) }), hashLengths.contains(hash.count) else {
            let size = hashLengths.count == 1 ? "\(hashLengths.lowerBound) bytes (SHA-256 of the client data)"
                : "\(hashLengths.lowerBound)-\(hashLengths.upperBound) bytes (usually SHA-256 of the challenge)"
            return .failure(BadInputResponse(appAttestError(400, "client_data_hash must be the base64 of " + size)))
        }
        var fault: String?
        if let value = body["fault"], value != .null {
            guard let name = value.stringValue, faults.contains(name) else {
                return .failure(BadInputResponse(appAttestError(400, "fault must be one of \(faults.joined(separator: ", "))")))
            }
            fault = name
        }
        return .success((key, hash, fault))
    }
}

extension AppleSandbox {
    /// `GET /sandbox/v1/app-attest/clock` → `{offset_seconds, now}`: the fraud service's clock.
    func controlReadAppAttestClock() -> ServerResponse {
        struct Answer: Encodable { let offset_seconds: Int; let now: String }
        return .json(200, Answer(offset_seconds: Int(appAttestClockOffset), now: ReceiptTime.format(appAttestNow())))
    }

    /// `PUT /sandbox/v1/app-attest/clock {offset_seconds}`: moves the fraud service's clock (0 puts it back).
    func controlSetAppAttestClock(_ request: ServerRequest) -> ServerResponse {
        guard let body = (try? JSONValue.parse(request.body))?.objectValue, body.keys.sorted() == ["offset_seconds"],
              let seconds = body["offset_seconds"]?.intValue, abs(seconds) <= 3650 * 86_400 else {
            return appAttestClockError()
        }
        appAttestClockOffset = TimeInterval(seconds)
        return controlReadAppAttestClock()
    }

    private func appAttestClockError() -> ServerResponse { .json(400, ["error": #"expected {"offset_seconds": whole seconds, at most 10 years either way}"#]) }

    /// The receipt intervals a test may set: a second to 30 days.
    static let receiptRefreshIntervals: ClosedRange<Int> = 1...(30 * 86_400)

    /// `GET /sandbox/v1/app-attest/receipt-interval` → `{seconds}`: a refreshed receipt's Not Before, after its creation.
    func controlReadReceiptRefreshInterval() -> ServerResponse {
        struct Answer: Encodable { let seconds: Int }
        return .json(200, Answer(seconds: Int(receiptRefreshInterval)))
    }

    /// `PUT /sandbox/v1/app-attest/receipt-interval {seconds}`: how long after a refresh the next one is allowed
    /// (86400, Apple's, puts it back). Receipts already issued keep their Not Before.
    func controlSetReceiptRefreshInterval(_ request: ServerRequest) -> ServerResponse {
        guard let body = (try? JSONValue.parse(request.body))?.objectValue, body.keys.sorted() == ["seconds"],
              let seconds = body["seconds"]?.intValue, Self.receiptRefreshIntervals.contains(Int(seconds)) else {
            return .json(400, ["error": #"expected {"seconds": whole seconds from 1 to 2592000 (30 days)}"#])
        }
        receiptRefreshInterval = TimeInterval(seconds)
        return controlReadReceiptRefreshInterval()
    }
}

/// A control request refused before anything was simulated.
struct BadInputResponse: Error {
    let response: ServerResponse
    init(_ response: ServerResponse) { self.response = response }
}

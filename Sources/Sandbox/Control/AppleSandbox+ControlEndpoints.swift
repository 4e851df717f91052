import DeviceCheckModel
import FoundationEssentials
import HTTPServer
import TwoBitsCrypto
import WireFormats

/// The control API over HTTP (`/sandbox/v1/...`), documented in docs/sandbox.md.
extension AppleSandbox {
    struct DeviceView: Encodable {
        let deviceID: String
        let bit0: Bool
        let bit1: Bool
        let lastUpdateTime: String?
        let updates: Int

        init(_ d: SimulatedDevice) {
            deviceID = d.id
            bit0 = d.bits.bit0
            bit1 = d.bits.bit1
            lastUpdateTime = d.lastUpdated?.description
            updates = d.updates
        }

        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id", bit0, bit1, lastUpdateTime = "last_update_time", updates
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(deviceID, forKey: .deviceID)
            try c.encode(bit0, forKey: .bit0)
            try c.encode(bit1, forKey: .bit1)
            try c.encode(lastUpdateTime, forKey: .lastUpdateTime) // null when never set
            try c.encode(updates, forKey: .updates)
        }
    }

    private func controlError(_ status: Int, _ message: String) -> ServerResponse {
        .json(status, ["error": message])
    }

    func controlCreateDevice(_ request: ServerRequest) -> ServerResponse {
        let id = createDevice()
        return .json(201, DeviceView(device(id)!))
    }

    func controlReadDevice(_ request: ServerRequest) -> ServerResponse {
        guard let d = device(request.parameters["id"] ?? "") else { return controlError(404, "unknown device") }
        return .json(200, DeviceView(d))
    }

    func controlSeedDevice(_ request: ServerRequest) -> ServerResponse {
        let id = request.parameters["id"] ?? ""
        guard var current = device(id) else { return controlError(404, "unknown device") }
        guard let body = (try? JSONValue.parse(request.body))?.objectValue else { return controlError(400, "body must be a JSON object") }
        if let v = body["bit0"] { guard let b = v.boolValue else { return controlError(400, "bit0 must be a boolean") }; current.bits.bit0 = b }
        if let v = body["bit1"] { guard let b = v.boolValue else { return controlError(400, "bit1 must be a boolean") }; current.bits.bit1 = b }
        if let v = body["last_update_time"] {
            if v == .null { current.lastUpdated = nil } else {
                guard let month = v.stringValue.flatMap(YearMonth.init) else { return controlError(400, "last_update_time must be YYYY-MM or null") }
                current.lastUpdated = month
            }
        }
        seed(id, bits: current.bits, lastUpdated: current.lastUpdated)
        return .json(200, DeviceView(device(id)!))
    }

    func controlMintTokens(_ request: ServerRequest) -> ServerResponse {
        let id = request.parameters["id"] ?? ""
        let body: [String: JSONValue]
        if request.body.isEmpty { body = [:] } else {
            guard let object = (try? JSONValue.parse(request.body))?.objectValue else { return controlError(400, "body must be a JSON object") }
            body = object
        }
        let count = Int(body["count"]?.intValue ?? 1)
        guard (1...10_000).contains(count) else { return controlError(400, "count must be 1-10000") }
        guard let environment = requestedEnvironment(body) else { return controlError(400, "environment must be production or development") }
        var tokens: [String] = []
        for _ in 0..<count {
            guard let t = mintToken(for: id, environment: environment) else { return controlError(404, "unknown device") }
            tokens.append(t)
        }
        if body["count"] == nil { return .json(201, ["device_token": tokens[0]]) }
        return .json(201, ["device_tokens": tokens])
    }

    /// `count` tokens, each minted for a new device of its own: what a client needs to act as many first
    /// installs at once (a promotion is claimed once per device), in one call instead of two per token.
    func controlMintFreshDeviceTokens(_ request: ServerRequest) -> ServerResponse {
        guard let body = (try? JSONValue.parse(request.body))?.objectValue else { return controlError(400, #"expected {"count": 1-10000}"#) }
        guard let count = body["count"]?.intValue, (1...10_000).contains(count) else { return controlError(400, "count must be 1-10000") }
        guard let environment = requestedEnvironment(body) else { return controlError(400, "environment must be production or development") }
        var tokens: [String] = []
        tokens.reserveCapacity(Int(count))
        for _ in 0..<count { tokens.append(mintTokenForNewDevice(environment: environment)) }
        return .json(201, ["device_tokens": tokens])
    }

    /// A mint's optional `environment`: `.some(nil)` when left out (the sandbox's own), nil when it names neither.
    private func requestedEnvironment(_ body: [String: JSONValue]) -> AppleEnvironment?? {
        guard let name = body["environment"] else { return .some(nil) }
        guard let environment = name.stringValue.flatMap(AppleEnvironment.init(rawValue:)) else { return nil }
        return environment
    }

    func controlInjectFault(_ request: ServerRequest) -> ServerResponse {
        guard let fault = (try? JSONValue.parse(request.body)).flatMap(Fault.init(json:)) else {
            return controlError(400, #"expected {"kind":"status|timeout|drop","count":N,"status"?,"endpoint"?,"delay_ms"?,"apply"?}"#)
        }
        if let e = fault.endpoint, AppleEndpoint(rawValue: e) == nil, e != Self.attestationDataEndpoint {
            return controlError(400, "unknown endpoint \(e)")
        }
        inject(fault)
        return .json(201, fault)
    }

    /// `GET /sandbox/v1/writes?after=&limit=`: a page of the write log.
    func controlReadWrites(_ request: ServerRequest) -> ServerResponse {
        guard let after = Int(request.query["after"] ?? "0"), after >= 0 else { return controlError(400, "after must be a sequence, 0 or more") }
        guard let limit = Int(request.query["limit"] ?? "1000"), (1...1_000).contains(limit) else {
            return controlError(400, "limit must be 1-1000")
        }
        let page = writes(after: after, limit: limit)
        struct Page: Encodable {
            let writes: [SandboxWrite]; let oldest: Int; let total: Int; let nextAfter: Int?
            enum CodingKeys: String, CodingKey { case writes, oldest, total, nextAfter = "next_after" }
        }
        let last = page.writes.last?.sequence
        return .json(200, Page(writes: page.writes, oldest: page.oldest, total: page.total,
                               nextAfter: last.flatMap { $0 < page.total ? $0 : nil }))
    }

    func controlSetLatency(_ request: ServerRequest) -> ServerResponse {
        guard let ms = (try? JSONValue.parse(request.body))?["milliseconds"]?.intValue, ms >= 0, ms <= 600_000 else {
            return controlError(400, #"expected {"milliseconds": 0-600000}"#)
        }
        setLatency(milliseconds: Int(ms))
        return .json(200, ["milliseconds": ms])
    }
}

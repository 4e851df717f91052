import DeviceCheckModel
import Foundation
import HTTPServer
import OutboundHTTP
import Sandbox
import TokenSigning
import TwoBitsCrypto
import TwoBitsService
import UseCases
import WireFormats

/// A real TwoBits service and a real Apple sandbox on loopback ports, with API keys for each role.
/// Tests take one through `withService`, which always closes it.
///
/// In `.inProcess` mode the service opens no socket: `request` hands the request to the service's pipeline
/// (`TwoBitsService.respond(to:)`) on its event loops, and the sandbox stays on loopback (docs/testing.md).
public final class ServiceHarness: Sendable {
    public static let teamID = sandboxTeamID
    public static let keyID = sandboxKeyID

    /// How requests reach the service.
    public enum Mode: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Real HTTP over loopback (libcurl to libmicrohttpd): the live layer, edge included.
        case loopback
        /// Straight into the request pipeline, without sockets or the HTTP edge.
        case inProcess
        public var description: String { rawValue }
    }

    /// What a test asks of its service; `withService` builds the typed `ServiceConfiguration` from it (through
    /// the service's own parser, so every test configuration is one the binary would accept too).
    public struct Configuration {
        /// Top-level configuration fields (JSON text by name) merged over the defaults (e.g. "bits",
        /// "promotions", "server"); a nil value leaves the default out.
        public var extra: [String: String?]
        /// Members of the `apple` section merged over the defaults (e.g. "timeout_ms").
        public var apple: [String: String]
        /// The key the sandbox trusts (default: the service's own; pass another to provoke 401s).
        public var sandboxKey: P256PrivateKey?
        public var sandboxLatencyMilliseconds: Int
        /// Extra fields of a client's entry, by client name (e.g. rate limits).
        public var clientFields: [String: String]
        /// Changes the parsed configuration before the service is built (for values the configuration
        /// refuses, such as a request deadline shorter than Apple's timeout).
        public var adjust: (inout ServiceConfiguration) -> Void
        /// Renews App Attest receipts for the service's refresher (none: no receipt is refreshed).
        public var receiptRenewer: (any ReceiptRenewing)?

        public init(extra: [String: String?] = [:], apple: [String: String] = [:], sandboxKey: P256PrivateKey? = nil,
                    sandboxLatencyMilliseconds: Int = 0, clientFields: [String: String] = [:],
                    adjust: @escaping (inout ServiceConfiguration) -> Void = { _ in }, receiptRenewer: (any ReceiptRenewing)? = nil) {
            self.receiptRenewer = receiptRenewer
            self.extra = extra
            self.apple = apple
            self.sandboxKey = sandboxKey
            self.sandboxLatencyMilliseconds = sandboxLatencyMilliseconds
            self.clientFields = clientFields
            self.adjust = adjust
        }
    }

    public let directory: String
    public let sandbox: AppleSandbox
    /// The sandbox's base URL as it answered `start()`.
    public let sandboxURL: String
    public let service: TwoBitsService
    public let client = CurlClient(maxConnectionsPerHost: 2_048, maxTotalConnections: 4_096)
    public let log = LogCollector()
    public var logLines: LogCollector { log }
    /// API keys by client name: "marketing" (promotions), "mainapi" (tokens), "admin" (admin), "all" (every role).
    public let keys: [String: String]

    public let mode: Mode

    public var base: String { "http://127.0.0.1:\(service.port)" }

    /// A started service; prefer `withService`, which closes it whatever the test does.
    public convenience init(extra: [String: String?] = [:], apple: [String: String] = [:], sandboxKey: P256PrivateKey? = nil,
                            sandboxLatencyMilliseconds: Int = 0, clientFields: [String: String] = [:],
                            adjust: @escaping (inout ServiceConfiguration) -> Void = { _ in }) async throws {
        try await self.init(Configuration(extra: extra, apple: apple, sandboxKey: sandboxKey,
                                          sandboxLatencyMilliseconds: sandboxLatencyMilliseconds, clientFields: clientFields,
                                          adjust: adjust))
    }

    public init(_ configuration: Configuration, mode: Mode = .loopback) async throws {
        self.mode = mode
        directory = try makeTemporaryDirectory(prefix: "twobits-service-")
        let appleKey = P256PrivateKey.generate()
        try appleKey.pkcs8PEM.write(toFile: directory + "/AuthKey.p8", atomically: true, encoding: .utf8)
        try SigningKeyStore(directory: directory + "/keys").generate()

        sandbox = AppleSandbox(configuration: SandboxConfiguration(
            teamID: Self.teamID, keyID: Self.keyID, publicKey: (configuration.sandboxKey ?? appleKey).publicKey,
            latencyMilliseconds: configuration.sandboxLatencyMilliseconds))
        sandboxURL = try sandbox.start()
        // The root the sandbox's simulated iPhones chain to, for an `app_attest` section's root_ca_file.
        try sandbox.appAttestAuthority.rootPEM.write(toFile: directory + "/appattest-root.pem", atomically: true, encoding: .utf8)
        // And the root its receipts chain to, for app_attest.receipts.root_ca_file (required with the root above).
        try sandbox.appAttestAuthority.receiptAuthority.rootPEM.write(toFile: directory + "/receipt-root.pem", atomically: true, encoding: .utf8)

        var keys: [String: String] = [:]
        var clients: [String] = []
        for (name, roles) in [("marketing", #"["promotions"]"#), ("mainapi", #"["tokens"]"#), ("admin", #"["admin"]"#),
                              ("all", #"["promotions","tokens","admin"]"#)] {
            let (key, digest) = APIKey.generate()
            keys[name] = key
            let more = configuration.clientFields[name].map { "," + $0 } ?? ""
            clients.append(#"{"name":"\#(name)","key_sha256":"\#(digest)","roles":\#(roles)\#(more)}"#)
        }
        self.keys = keys

        var appleFields = [
            "environment": #""development""#, "base_url": "\"\(sandboxURL)\"", "team_id": "\"\(Self.teamID)\"",
            "key_id": "\"\(Self.keyID)\"", "private_key_file": #""AuthKey.p8""#, "timeout_ms": "2000",
            "max_in_flight": "4096", "max_connections": "2048",
        ]
        for (k, v) in configuration.apple { appleFields[k] = v }
        var fields = [
            "listen": #""127.0.0.1:0""#, "database": #""ledger.sqlite""#,
            "apple": "{" + appleFields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}",
            "clients": "[" + clients.joined(separator: ",") + "]",
            "bits": #"{"bit0":"promotion","bit1":"ban"}"#,
            "promotions": #"[{"id":"spring","starts":"2020-01"}]"#,
            "tokens": #"{"audience":"main-api","keys_dir":"keys"}"#,
        ]
        for (k, v) in configuration.extra { fields[k] = v }
        let json = "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        var parsed = try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: directory)
        configuration.adjust(&parsed)
        let collector = log
        service = try TwoBitsService(configuration: parsed, logger: LogWriter(sink: { data in collector.append(data) }),
                                     receiptRenewer: configuration.receiptRenewer)
        switch mode {
        case .loopback: try await service.start()
        case .inProcess: try await service.startInProcess()
        }
    }

    /// Shuts the service, the sandbox and the test client down and removes the directory. `withService` calls
    /// it; a test calls it by hand only when shutting down is what it tests.
    public func close() async {
        await service.shutdown()
        await sandbox.shutdown()
        client.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A fresh token for a new simulated device.
    public func freshDevice() -> (id: String, token: String) {
        let id = sandbox.createDevice()
        return (id, sandbox.mintToken(for: id)!)
    }

    public struct Answer: Sendable {
        public let status: Int
        public let json: JSONValue?
        public let text: String
        public let response: OutboundResponse
        /// The answer's headers in `.inProcess` mode; nil over loopback (the libcurl client keeps none).
        public let headers: [(String, String)]?
        public var code: String? { json?["error"]?["code"]?.stringValue }

        /// The first value of a header by case-insensitive name (in `.inProcess` mode).
        public func header(_ name: String) -> String? {
            headers?.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    /// `path` may carry a query (`/v1/x?a=1`); `key` is a client name of `keys` or a raw key.
    public func request(_ method: String, _ path: String, key: String? = "all", body: String? = nil,
                        headers: [(String, String)] = [], contentType: String? = "application/json") async throws -> Answer {
        var h = headers
        if let key { h.append(("Authorization", "Bearer " + (keys[key] ?? key))) }
        if body != nil, let contentType { h.append(("Content-Type", contentType)) }
        let bodyData = body.map { Data($0.utf8) }
        switch mode {
        case .loopback:
            let response = try await client.send(OutboundRequest(method: method, url: base + path, headers: h,
                                                                   body: bodyData, timeoutMilliseconds: 20_000))
            return Answer(status: response.status, json: try? JSONValue.parse(response.body), text: response.text, response: response,
                          headers: nil)
        case .inProcess:
            return try await respond(method, path, headers: h, body: bodyData)
        }
    }

    /// One request through `TwoBitsService.respond(to:)`, with the headers libcurl adds that the pipeline reads.
    private func respond(_ method: String, _ target: String, headers: [(String, String)], body: Data?) async throws -> Answer {
        var fields = [("Host", "127.0.0.1"), ("Accept", "*/*")]
        if let body { fields.append(("Content-Length", String(body.count))) }
        fields += headers
        let answer: ServerResponse
        do throws(HTTPRefusal) {
            answer = await service.respond(to: try ServerRequest(method: method, target: target, headers: fields, body: body ?? Data()))
        } catch {
            answer = error.response // the edge's refusal of the query, as loopback would get it
        }
        if answer.dropConnection { throw HarnessError("\(method) \(target): the service dropped the request without an answer") }
        let response = OutboundResponse(status: answer.status, body: answer.body)
        return Answer(status: answer.status, json: try? JSONValue.parse(answer.body), text: response.text, response: response,
                      headers: answer.headers)
    }

    public func post(_ path: String, _ body: String, key: String? = "all", headers: [(String, String)] = []) async throws -> Answer {
        try await request("POST", path, key: key, body: body, headers: headers)
    }
}

/// Runs `body` against a started service and sandbox (`ServiceHarness`), and always closes both afterwards,
/// also when `body` throws.
public func withService<T>(_ configuration: ServiceHarness.Configuration = .init(), mode: ServiceHarness.Mode = .loopback,
                           _ body: (ServiceHarness) async throws -> T) async throws -> T {
    try await withStartedService(configuration, mode: mode, body)
}

private func withStartedService<T>(_ configuration: ServiceHarness.Configuration, mode: ServiceHarness.Mode,
                                   _ body: (ServiceHarness) async throws -> T) async throws -> T {
    let harness = try await ServiceHarness(configuration, mode: mode)
    let result: T
    do {
        result = try await body(harness)
    } catch {
        await harness.close()
        throw error
    }
    await harness.close()
    return result
}

/// `withService` for a body that returns nothing, so that the closure's type is known before its body is checked.
/// A body whose only `try` sits inside `#expect(…)` may still be inferred non-throwing (the macro is expanded
/// later): such a body says `{ h async throws in`.
public func withService(_ configuration: ServiceHarness.Configuration = .init(), mode: ServiceHarness.Mode = .loopback,
                        _ body: (ServiceHarness) async throws -> Void) async throws {
    try await withStartedService(configuration, mode: mode, body)
}

/// Threads of this process right now (Linux).
public func currentThreadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }) else { return -1 }
    return Int(line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? -1
}

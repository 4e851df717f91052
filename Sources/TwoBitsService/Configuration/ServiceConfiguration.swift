public import DeviceCheckModel
public import FoundationEssentials
import TwoBitsCrypto
public import UseCases
import Glibc
import WireFormats

/// Everything `twobits serve` reads from its JSON file (documented field by field in docs/configuration.md).
public struct ServiceConfiguration: Sendable {
    public struct Apple: Sendable {
        public var environment: AppleEnvironment
        /// Overrides the environment's host (the sandbox, tests).
        public var baseURL: String?
        public var teamID: String
        public var keyID: String
        public var privateKeyFile: String
        public var timeoutMilliseconds: Int
        public var maxInFlight: Int
        public var maxConnections: Int
        /// Ceiling on Apple calls per second across all clients (this replica); nil: none.
        public var maxCallsPerSecond: Int?
        /// `apple.ca_file`: the PEM bundle TLS to Apple trusts in place of the operating system's store; nil: the system's.
        public var caFile: String? = nil

        /// Where calls go: the override, or Apple's host for the environment.
        public var effectiveBaseURL: String { baseURL ?? environment.baseURL }
    }

    public struct Client: Sendable {
        public var name: String
        /// SHA-256 of the API key, never the key itself.
        public var keySHA256: Data
        public var roles: Set<ClientRole>
        /// Requests per second to Apple-calling routes (per replica); nil: not limited.
        public var ratePerSecond: Double?
        /// How many such requests may come at once after a quiet spell (default: one second's worth).
        public var burst: Int
    }

    public struct Server: Sendable {
        public var threads: Int
        public var requestDeadlineMilliseconds: Int
        public var shutdownGraceMilliseconds: Int
        /// A request's line, headers and body must arrive within this long (slow clients are closed).
        public var receiveTimeoutMilliseconds = ServiceDefaults.Server.receiveTimeoutMilliseconds
        /// Open connections, all clients together (lowered to fit under the open-file limit).
        public var maxConnections = ServiceDefaults.Server.maxConnections
        /// Open connections from one IP address; 0 for no cap.
        public var maxConnectionsPerIP = ServiceDefaults.Server.maxConnectionsPerIP
        /// A loop woken for a few events waits this long for more before serving them; 0: at once.
        public var wakeCoalescingMicroseconds = ServiceDefaults.Server.wakeCoalescingMicroseconds
    }

    /// PostgreSQL only: connections per process, and how long a request waits for one before 503.
    public struct DatabasePool: Sendable, Equatable {
        public var size: Int
        public var pipelines: Int
        public var waitMilliseconds: Int

        public init(size: Int = ServiceDefaults.DatabasePool.size, pipelines: Int = ServiceDefaults.DatabasePool.pipelines,
                    waitMilliseconds: Int = ServiceDefaults.DatabasePool.waitMilliseconds) {
            self.size = size
            self.pipelines = pipelines
            self.waitMilliseconds = waitMilliseconds
        }
    }

    public var listenHost: String
    public var listenPort: UInt16
    /// The ledger: a SQLite file or a PostgreSQL URI (`DatabaseLocation`).
    public var database: DatabaseLocation
    public var databasePool: DatabasePool
    public var apple: Apple
    public var clients: [Client]
    public var server: Server
    public var policy: PolicySettings
    public var tokens: TokenSettings
    /// The strong tier (`app_attest`); nil when the section is absent (its routes answer 409 not_enabled).
    public var appAttest: AppAttestSettings? = nil
    /// The file this configuration was read from (nil when parsed from memory), for the start-up checks.
    public var file: String?

    /// Environment variables that override the file (secrets and addresses).
    public static let environmentOverrides: [(variable: String, path: [String])] = [
        ("TWOBITS_APPLE_TEAM_ID", ["apple", "team_id"]),
        ("TWOBITS_APPLE_KEY_ID", ["apple", "key_id"]),
        ("TWOBITS_APPLE_PRIVATE_KEY_FILE", ["apple", "private_key_file"]),
        ("TWOBITS_APPLE_ENVIRONMENT", ["apple", "environment"]),
        ("TWOBITS_APPLE_BASE_URL", ["apple", "base_url"]),
        ("TWOBITS_LISTEN", ["listen"]),
        ("TWOBITS_DATABASE", ["database"]),
    ]

    /// Reads and validates a configuration file, applying environment overrides.
    public static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) -> ServiceConfiguration {
        try refuseIrregularFile(path, field: "--config")
        guard let data = FileManager.default.contents(atPath: path) else {
            // Installed from the package, the example sits beside the missing file: say where to start.
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            let example = directory.appendingPathComponent("config.example.json").path
            let hint = FileManager.default.fileExists(atPath: example)
                ? "; copy \(example) to \(path), fill it in (docs/configuration.md, or man twobits), then start again"
                : "; docs/configuration.md describes every field"
            throw ConfigurationError("--config", "cannot read \(path) (no such file or permission denied)" + hint)
        }
        var configuration = try parse(data, environment: environment, baseDirectory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        configuration.file = path
        return configuration
    }

    /// Parses configuration JSON. Relative file paths are resolved against `baseDirectory`.
    public static func parse(_ data: Data, environment: [String: String] = [:], baseDirectory: String = ".") throws(ConfigurationError) -> ServiceConfiguration {
        var root: JSONValue
        do { root = try JSONValue.parse(data, limits: .configuration) } catch {
            // Names the duplicate key, or the byte where the file stops being JSON.
            throw ConfigurationError("", "the configuration is not valid JSON: \(error)")
        }
        for (variable, path) in environmentOverrides {
            if let value = environment[variable], !value.isEmpty { root = root.setting(path, to: .string(value)) }
        }
        var reader = try ConfigReader(path: "", value: root)

        let (host, port) = try parseListen(reader.string("listen", default: ServiceDefaults.listen))
        let database = try DatabaseLocation(try reader.string("database", default: ServiceDefaults.database), baseDirectory: baseDirectory)
        let databasePool = DatabasePool(
            size: try reader.int("database_pool_size", default: ServiceDefaults.DatabasePool.size, range: 1...1_000),
            pipelines: try reader.int("database_pipelines", default: ServiceDefaults.DatabasePool.pipelines, range: 1...64),
            waitMilliseconds: try reader.int("database_pool_wait_ms", default: ServiceDefaults.DatabasePool.waitMilliseconds, range: 10...60_000))

        guard var a = try reader.object("apple") else { throw ConfigurationError("apple", "is required (team_id, key_id, private_key_file)") }
        let environmentName = try a.string("environment", default: ServiceDefaults.Apple.environment)
        guard let appleEnvironment = AppleEnvironment(rawValue: environmentName) else {
            throw ConfigurationError("apple.environment", "must be \"production\" or \"development\", not \"\(environmentName)\"")
        }
        let baseURL = try a.optionalString("base_url")
        if let baseURL, !(baseURL.hasPrefix("https://") || baseURL.hasPrefix("http://")) {
            throw ConfigurationError("apple.base_url", "must start with https:// or http://")
        }
        let privateKeyFile = resolve(try a.string("private_key_file"), against: baseDirectory)
        try refuseIrregularFile(privateKeyFile, field: "apple.private_key_file")
        let apple = Apple(
            environment: appleEnvironment, baseURL: baseURL,
            teamID: try a.string("team_id"), keyID: try a.string("key_id"),
            privateKeyFile: privateKeyFile,
            timeoutMilliseconds: try a.int("timeout_ms", default: ServiceDefaults.Apple.timeoutMilliseconds, range: 100...120_000),
            maxInFlight: try a.int("max_in_flight", default: ServiceDefaults.Apple.maxInFlight, range: 1...100_000),
            maxConnections: try a.int("max_connections", default: ServiceDefaults.Apple.maxConnections, range: 1...20_000),
            maxCallsPerSecond: try a.optionalInt("max_calls_per_second", range: 1...1_000_000),
            caFile: try checkedCAFile(a.optionalString("ca_file").map { resolve($0, against: baseDirectory) }))
        try a.rejectUnknownFields()

        var clients: [Client] = []
        for (index, value) in (try reader.array("clients") ?? []).enumerated() {
            var c = try ConfigReader(path: "clients[\(index)]", value: value)
            let name = try c.string("name")
            let hex = try c.string("key_sha256")
            guard hex.count == 64, let digest = Data(hexString: hex) else {
                throw ConfigurationError(c.field("key_sha256"), "must be 64 hex digits (run `twobits apikey` to make a key and its digest)")
            }
            guard let roleValues = try c.array("roles"), !roleValues.isEmpty else {
                throw ConfigurationError(c.field("roles"), "must list at least one of \(ClientRole.allCases.map(\.rawValue))")
            }
            var roles = Set<ClientRole>()
            for r in roleValues {
                guard let role = r.stringValue.flatMap(ClientRole.init(rawValue:)) else {
                    throw ConfigurationError(c.field("roles"), "each role must be one of \(ClientRole.allCases.map(\.rawValue))")
                }
                roles.insert(role)
            }
            let rate = try c.optionalDouble("rate_per_second", range: 0.001...1_000_000)
            let burst = try c.int("burst", default: ServiceDefaults.Client.burst(ratePerSecond: rate), range: 1...1_000_000)
            if rate == nil, c.object["burst"] != nil {
                throw ConfigurationError(c.field("burst"), "needs rate_per_second (the rate that refills the burst)")
            }
            try c.rejectUnknownFields()
            if clients.contains(where: { $0.name == name }) { throw ConfigurationError(c.field("name"), "\"\(name)\" is used twice") }
            if clients.contains(where: { $0.keySHA256 == digest }) { throw ConfigurationError(c.field("key_sha256"), "the same key is configured twice") }
            clients.append(Client(name: name, keySHA256: digest, roles: roles, ratePerSecond: rate, burst: burst))
        }

        var server = Server(threads: ServiceDefaults.Server.threads,
                            requestDeadlineMilliseconds: ServiceDefaults.Server.requestDeadlineMilliseconds(appleTimeoutMilliseconds: apple.timeoutMilliseconds),
                            shutdownGraceMilliseconds: ServiceDefaults.Server.shutdownGraceMilliseconds)
        if var s = try reader.object("server") {
            server.threads = try s.int("threads", default: server.threads, range: 1...64)
            server.requestDeadlineMilliseconds = try s.int("request_deadline_ms", default: server.requestDeadlineMilliseconds, range: 100...600_000)
            server.shutdownGraceMilliseconds = try s.int("shutdown_grace_ms", default: server.shutdownGraceMilliseconds, range: 0...300_000)
            server.receiveTimeoutMilliseconds = try s.int("receive_timeout_ms", default: server.receiveTimeoutMilliseconds, range: 100...600_000)
            server.maxConnections = try s.int("max_connections", default: server.maxConnections, range: 1...1_000_000)
            server.maxConnectionsPerIP = try s.int("max_connections_per_ip", default: server.maxConnectionsPerIP, range: 0...1_000_000)
            server.wakeCoalescingMicroseconds = try s.int("wake_coalescing_us", default: server.wakeCoalescingMicroseconds, range: 0...10_000)
            try s.rejectUnknownFields()
        }
        // An install makes up to three Apple calls (query, a pending ban, the update); a claim two.
        if server.requestDeadlineMilliseconds < 3 * apple.timeoutMilliseconds {
            throw ConfigurationError("server.request_deadline_ms", "must be at least 3 × apple.timeout_ms (\(3 * apple.timeoutMilliseconds)) so Apple's own errors reach the caller before the deadline")
        }

        let policy = try PolicySettings.parse(&reader)
        let tokens = try TokenSettings.parse(&reader, baseDirectory: baseDirectory)
        let appAttest = try AppAttestSettings.parse(&reader, apple: apple, tokens: tokens, baseDirectory: baseDirectory)
        try reader.rejectUnknownFields()

        return ServiceConfiguration(listenHost: host, listenPort: port, database: database, databasePool: databasePool, apple: apple, clients: clients,
                                    server: server, policy: policy, tokens: tokens, appAttest: appAttest, file: nil)
    }

    static func parseListen(_ text: String) throws(ConfigurationError) -> (String, UInt16) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else {
            throw ConfigurationError("listen", "must be HOST:PORT with an IPv4 host, e.g. 127.0.0.1:8080 or 0.0.0.0:8080")
        }
        var addr = in_addr()
        guard inet_pton(AF_INET, String(parts[0]), &addr) == 1 else {
            throw ConfigurationError("listen", "'\(parts[0])' is not an IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)")
        }
        return (String(parts[0]), port)
    }

    static func resolve(_ path: String, against base: String) -> String {
        path.hasPrefix("/") || base == "." ? path : base + "/" + path
    }
}

extension JSONValue {
    /// A copy with the value at `path` replaced (objects created as needed).
    func setting(_ path: [String], to value: JSONValue) -> JSONValue {
        guard let first = path.first else { return value }
        var object = objectValue ?? [:]
        object[first] = (object[first] ?? .object([:])).setting(Array(path.dropFirst()), to: value)
        return .object(object)
    }
}

import Foundation
import Testing
import TwoBitsService

/// The defaults the parser applies (`ServiceDefaults`) are the ones docs/configuration.md states, and an
/// empty configuration gets them.
@Suite struct ServiceDefaultsDocumentationTests {
    /// (section heading, field, the default column as documented).
    static let documented: [(section: String, field: String, value: String)] = [
        ("Top level", "listen", "`\"\(ServiceDefaults.listen)\"`"),
        ("Top level", "database", "`\"\(ServiceDefaults.database)\"`"),
        ("Top level", "database_pool_size", "`\(ServiceDefaults.DatabasePool.size)`"),
        ("Top level", "database_pipelines", "`\(ServiceDefaults.DatabasePool.pipelines)`"),
        ("Top level", "database_pool_wait_ms", "`\(ServiceDefaults.DatabasePool.waitMilliseconds)`"),
        ("`apple`", "environment", "`\"\(ServiceDefaults.Apple.environment)\"`"),
        ("`apple`", "timeout_ms", "`\(ServiceDefaults.Apple.timeoutMilliseconds)`"),
        ("`apple`", "max_in_flight", "`\(ServiceDefaults.Apple.maxInFlight)`"),
        ("`apple`", "max_connections", "`\(ServiceDefaults.Apple.maxConnections)`"),
        ("`server`", "threads", "`\(ServiceDefaults.Server.threads)`"),
        ("`server`", "request_deadline_ms", "`max(\(ServiceDefaults.Server.minimumRequestDeadlineMilliseconds), 3 × apple.timeout_ms)`"),
        ("`server`", "shutdown_grace_ms", "`\(ServiceDefaults.Server.shutdownGraceMilliseconds)`"),
        ("`server`", "receive_timeout_ms", "`\(ServiceDefaults.Server.receiveTimeoutMilliseconds)`"),
        ("`server`", "max_connections", "`\(ServiceDefaults.Server.maxConnections)`"),
        ("`server`", "max_connections_per_ip", "`\(ServiceDefaults.Server.maxConnectionsPerIP)`"),
        ("`server`", "wake_coalescing_us", "`\(ServiceDefaults.Server.wakeCoalescingMicroseconds)`"),
        ("`tokens`", "issuer", "`\"\(ServiceDefaults.Tokens.issuer)\"`"),
        ("`tokens`", "ttl_seconds", "`\(ServiceDefaults.Tokens.ttlSeconds)`"),
        ("`tokens`", "limited_use_ttl_seconds", "`\(ServiceDefaults.Tokens.limitedUseTTLSeconds)`"),
        ("`tokens`", "keys_dir", "`\"\(ServiceDefaults.Tokens.keysDirectory)\"`"),
        ("`tokens`", "reuse_window_seconds", "`\(ServiceDefaults.Tokens.reuseWindowSeconds)`"),
    ]

    @Test func theDocumentedDefaultsAreTheDeclaredOnes() throws {
        let text = try String(contentsOf: OpenAPISyncTests.repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        var section = ""
        var found: [String: String] = [:] // "section/field" → default column
        for line in text.split(separator: "\n") {
            if line.hasPrefix("### ") { section = String(line.dropFirst(4)) }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 4 else { continue }
            found["\(section)/\(cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")))"] = cells[3]
        }
        for (heading, field, value) in Self.documented {
            let key = found.keys.first { $0.hasPrefix(heading) && $0.hasSuffix("/" + field) }
            #expect(key.map { found[$0] } == value, "docs/configuration.md, \(heading) \(field)")
        }
        #expect(text.contains("default `\"\(ServiceDefaults.Bits.role)\"` for a bit left out"))
        #expect(text.contains("`ban_at`: integer 1-3, default \(ServiceDefaults.Bits.banAt)"))
    }

    @Test func anEmptyConfigurationGetsTheDeclaredDefaults() throws {
        let configuration = try ServiceConfiguration.parse(Data(#"{"apple":{"team_id":"T","key_id":"K","private_key_file":"k.p8"},"server":{}}"#.utf8))
        #expect("\(configuration.listenHost):\(configuration.listenPort)" == ServiceDefaults.listen)
        #expect(configuration.database == .sqlite(path: ServiceDefaults.database))
        #expect(configuration.databasePool == .init(size: ServiceDefaults.DatabasePool.size, waitMilliseconds: ServiceDefaults.DatabasePool.waitMilliseconds))
        #expect(configuration.apple.environment.rawValue == ServiceDefaults.Apple.environment)
        #expect(configuration.apple.timeoutMilliseconds == ServiceDefaults.Apple.timeoutMilliseconds)
        #expect(configuration.apple.maxInFlight == ServiceDefaults.Apple.maxInFlight)
        #expect(configuration.apple.maxConnections == ServiceDefaults.Apple.maxConnections)
        #expect(configuration.server.threads == ServiceDefaults.Server.threads)
        #expect(configuration.server.requestDeadlineMilliseconds == ServiceDefaults.Server.minimumRequestDeadlineMilliseconds)
        #expect(configuration.server.shutdownGraceMilliseconds == ServiceDefaults.Server.shutdownGraceMilliseconds)
        #expect(configuration.server.receiveTimeoutMilliseconds == ServiceDefaults.Server.receiveTimeoutMilliseconds)
        #expect(configuration.server.maxConnections == ServiceDefaults.Server.maxConnections)
        #expect(configuration.server.maxConnectionsPerIP == ServiceDefaults.Server.maxConnectionsPerIP)
        #expect(configuration.server.wakeCoalescingMicroseconds == ServiceDefaults.Server.wakeCoalescingMicroseconds)
        #expect(configuration.tokens.enabled == false)
    }
}

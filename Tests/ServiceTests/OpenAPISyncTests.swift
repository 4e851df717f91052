import Foundation
import TestSupport
import Testing
import TokenSigning
import TwoBitsCrypto
import TwoBitsService

/// Keeps docs/openapi.yaml and the router in step: every route a controller registers is documented,
/// and every documented operation exists (its error codes and reasons: WireVocabularyTests). The service is
/// built (not started: no port is needed).
@Suite("OpenAPI document matches the router")
struct OpenAPISyncTests {
    /// The repository root, from this file's path (Tests/ServiceTests/OpenAPISyncTests.swift).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func openAPIText() throws -> String {
        let url = repositoryRoot.appendingPathComponent("docs/openapi.yaml")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Builds a real service with every route enabled (the `tokens` section included) in a temporary directory.
    static func withService<T>(_ body: (TwoBitsService) throws -> T) throws -> T {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("twobits-openapi-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let keyFile = dir + "/AuthKey_TEST.p8"
        try P256PrivateKey.generate().pkcs8PEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try SigningKeyStore(directory: dir + "/keys").generate()

        let json = """
        {
          "listen": "127.0.0.1:0",
          "database": "\(dir)/twobits.sqlite",
          "apple": {
            "environment": "development",
            "base_url": "http://127.0.0.1:9",
            "team_id": "TEAM123456",
            "key_id": "KEY1234567",
            "private_key_file": "\(keyFile)"
          },
          "clients": [
            {"name": "all", "key_sha256": "\(String(repeating: "ab", count: 32))", "roles": ["promotions", "tokens", "admin"]}
          ],
          "bits": {"bit0": "promotion", "bit1": "ban"},
          "promotions": [{"id": "welcome", "starts": "2020-01"}],
          "tokens": {"issuer": "twobits-test", "audience": "main-api", "keys_dir": "\(dir)/keys"}
        }
        """
        let configuration = try ServiceConfiguration.parse(Data(json.utf8))
        let service = try TwoBitsService(configuration: configuration, logger: LogWriter(enabled: false))
        return try body(service)
    }

    /// "METHOD /path" for every operation in the document.
    ///
    /// A deliberately tiny line parser, not YAML: the document keeps `paths:` at column 0, each path at
    /// two spaces (`  /v1/...:`), and each operation at four spaces (`    post:`). Anything else at four
    /// spaces under a path (`parameters:`, `summary:`) is ignored.
    static func documentedOperations(_ text: String) -> Set<String> {
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        var operations = Set<String>()
        var inPaths = false
        var currentPath: String?
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine)
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.trimmingCharacters(in: .whitespaces).hasPrefix("#") { continue }
            let indent = line.prefix(while: { $0 == " " }).count
            let content = line.trimmingCharacters(in: .whitespaces)
            if indent == 0 {
                inPaths = content == "paths:"
                currentPath = nil
                continue
            }
            guard inPaths else { continue }
            if indent == 2, content.hasSuffix(":") {
                var path = String(content.dropLast())
                if path.count >= 2, (path.hasPrefix("'") && path.hasSuffix("'")) || (path.hasPrefix("\"") && path.hasSuffix("\"")) {
                    path = String(path.dropFirst().dropLast())
                }
                currentPath = path.hasPrefix("/") ? path : nil
            } else if indent == 4, let path = currentPath, content.hasSuffix(":") {
                let key = String(content.dropLast())
                if methods.contains(key) { operations.insert("\(key.uppercased()) \(path)") }
            }
        }
        return operations
    }

    @Test("the line parser reads the layout it expects")
    func parserReadsTheLayout() {
        let sample = """
        openapi: 3.1.0
        paths:
          /v1/things/{id}:
            parameters:
              - name: id
            post:
              summary: x
            get:
              summary: y
          '/quoted':
            delete:
              summary: z
        components:
          schemas:
            post:
              type: object
        """
        #expect(Self.documentedOperations(sample) == ["POST /v1/things/{id}", "GET /v1/things/{id}", "DELETE /quoted"])
    }

    @Test("every registered route is documented, and every documented route exists")
    func routesMatchDocument() throws {
        let registered = try Self.withService { service in
            Set(service.routes.routes.map { "\($0.method.uppercased()) \($0.pattern)" })
        }
        let documented = Self.documentedOperations(try Self.openAPIText())
        #expect(!registered.isEmpty)

        let undocumented = registered.subtracting(documented).sorted()
        let phantom = documented.subtracting(registered).sorted()
        #expect(undocumented.isEmpty, "routes registered by the controllers but missing from docs/openapi.yaml: \(undocumented.joined(separator: ", "))")
        #expect(phantom.isEmpty, "routes in docs/openapi.yaml that the router does not have: \(phantom.joined(separator: ", "))")
    }
}

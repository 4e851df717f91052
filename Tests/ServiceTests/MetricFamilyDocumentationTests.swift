import Foundation
import Testing
import TwoBitsService

/// Every metric family is declared once (`MetricFamily`) and documented in docs/operations.md's table
/// with the same type and label names; the table has no family the service does not declare.
@Suite struct MetricFamilyDocumentationTests {
    /// The rows of the metrics table: name → (type, labels column).
    static func documentedRows() throws -> [String: (type: String, labels: String)] {
        let text = try String(contentsOf: OpenAPISyncTests.repositoryRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        var rows: [String: (String, String)] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `twobits_") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 4 else { continue }
            rows[cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = (cells[2], cells[3])
        }
        return rows
    }

    @Test func everyDeclaredFamilyIsDocumentedWithItsTypeAndLabels() throws {
        let rows = try Self.documentedRows()
        for family in MetricFamily.all {
            guard let row = rows[family.name] else {
                Issue.record("\(family.name) is not in docs/operations.md's metrics table")
                continue
            }
            #expect(row.type == family.kind.rawValue, "\(family.name): documented as \(row.type)")
            for label in family.labels { #expect(row.labels.contains("`\(label)`"), "\(family.name): label \(label) undocumented") }
        }
        let declared = Set(MetricFamily.all.map(\.name))
        let phantom = Set(rows.keys).subtracting(declared).sorted()
        #expect(phantom.isEmpty, "documented but not declared: \(phantom)")
        #expect(declared.count == MetricFamily.all.count, "a family is listed twice in MetricFamily.all")
    }

    @Test func everyDeclarationIsInTheList() throws {
        let source = try String(contentsOf: OpenAPISyncTests.repositoryRoot
            .appendingPathComponent("Sources/TwoBitsService/Observability/MetricFamily.swift"), encoding: .utf8)
        let declarations = source.components(separatedBy: "MetricFamily(\"twobits_").count - 1
        #expect(declarations == MetricFamily.all.count, "MetricFamily.all misses a declared family")
    }

    @Test func noSourceSpellsAFamilyNameOutsideItsDeclaration() throws {
        let sources = OpenAPISyncTests.repositoryRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") && !file.hasSuffix("MetricFamily.swift") {
            let text = (try? String(contentsOfFile: sources.path + "/" + file, encoding: .utf8)) ?? ""
            for family in MetricFamily.all {
                #expect(!text.contains("\"\(family.name)\""), "\(file) spells \(family.name); use MetricFamily")
            }
        }
    }
}

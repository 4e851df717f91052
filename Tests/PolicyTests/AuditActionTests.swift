import Foundation
import Ledger
import Testing

/// The audit actions declared in `AuditAction` are exactly those docs/policy.md lists for operators.
@Suite struct AuditActionTests {
    @Test func theDocumentedActionsAreTheDeclaredOnes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let policy = try String(contentsOf: root.appendingPathComponent("docs/policy.md"), encoding: .utf8)
        let row = try #require(policy.split(separator: "\n").first { $0.hasPrefix("| `action` ") })
        let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        let documented = Set(cells[1].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) })
        #expect(documented == Set(AuditAction.allCases.map(\.rawValue)))
    }
}

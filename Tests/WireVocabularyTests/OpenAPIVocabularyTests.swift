import Foundation
import Testing
import WireVocabulary

/// docs/openapi.yaml and the wire's vocabulary list the same values: every error code the server can send
/// (`APIErrorCode.all`; the server builds answers from these values only, and test_source_rules.py refuses a
/// code's literal anywhere else in Sources/), and each enum of reasons, tiers and fallback reasons.
@Suite struct OpenAPIVocabularyTests {
    /// docs/openapi.yaml, from this file's path (Tests/WireVocabularyTests/OpenAPIVocabularyTests.swift).
    static func openAPIText() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
    }

    /// Every `enum` of strings in the document, under the name of the property it constrains, in document order.
    ///
    /// A line parser, not YAML: an enum is `enum: [a, b]` or `enum:` followed by `- a` lines one level deeper;
    /// its property is the nearest line above it, less indented, that is a `name:` key.
    static func enums(_ text: String) -> [(property: String, values: [String])] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func indent(_ line: String) -> Int { line.prefix(while: { $0 == " " }).count }
        func trimmed(_ line: String) -> String { line.trimmingCharacters(in: .whitespaces) }
        var found: [(String, [String])] = []
        for (index, line) in lines.enumerated() where trimmed(line).hasPrefix("enum:") {
            let depth = indent(line)
            let rest = trimmed(String(trimmed(line).dropFirst("enum:".count)))
            var values: [String] = []
            if rest.hasPrefix("[") {
                values = rest.dropFirst().dropLast().split(separator: ",").map { trimmed(String($0)) }
            } else {
                for next in lines[(index + 1)...] {
                    guard indent(next) > depth, trimmed(next).hasPrefix("- ") else { break }
                    values.append(trimmed(String(trimmed(next).dropFirst(2))))
                }
            }
            let property = lines[..<index].reversed().first { indent($0) < depth && trimmed($0).hasSuffix(":") && !trimmed($0).hasPrefix("-") }
            found.append((property.map { String(trimmed($0).dropLast()) } ?? "", values))
        }
        return found
    }

    @Test func theParserReadsBothSpellings() {
        let sample = """
        reason:
          type: string
          enum: [a, b]
        code:
          type: string
          enum:
            - c
            - d
        other: 1
        """
        let found = Self.enums(sample)
        #expect(found.map(\.property) == ["reason", "code"])
        #expect(found.map(\.values) == [["a", "b"], ["c", "d"]])
    }

    @Test func theErrorEnvelopesCodesAreTheVocabularys() throws {
        let codes = Self.enums(try Self.openAPIText()).filter { $0.property == WireField.code }
        #expect(codes.count == 1)
        #expect(codes.first?.values == APIErrorCode.all.map(\.rawValue))
        #expect(Set(APIErrorCode.all).count == APIErrorCode.all.count, "a code listed twice")
        #expect(!APIErrorCode.all.contains(.cancelled), "cancelled never reaches a client")
    }

    @Test func eachReasonEnumIsOneOfTheVocabularysLists() throws {
        let lists: [String: [String]] = [
            "App Attest refusals": AppAttestRefusalReason.all.map(\.rawValue),
            "token verification": TokenVerificationFailure.allCases.map(\.rawValue),
            "promotion eligibility": PromotionEligibilityReason.allCases.map(\.rawValue),
            "request proof refusals": RequestProofRefusalReason.all.map(\.rawValue),
        ]
        let reasons = Self.enums(try Self.openAPIText()).filter { $0.property == WireField.reason }
        var matched: Set<String> = []
        for found in reasons {
            let name = lists.first { Set($0.value) == Set(found.values) && $0.value.count == found.values.count }?.key
            #expect(name != nil, "a reason enum that is none of the vocabulary's lists: \(found.values)")
            if let name { matched.insert(name) }
        }
        #expect(matched == Set(lists.keys), "lists the document no longer enumerates: \(Set(lists.keys).subtracting(matched))")
        #expect(Set(AppAttestRefusalReason.all).count == AppAttestRefusalReason.all.count, "a reason listed twice")
        #expect(Set(RequestProofRefusalReason.all).count == RequestProofRefusalReason.all.count, "a reason listed twice")
    }

    @Test func tiersAndFallbackReasonsAreTheVocabularys() throws {
        let found = Self.enums(try Self.openAPIText())
        let tiers = found.filter { $0.property == "tier" }
        #expect(tiers.count >= 2)
        for tier in tiers { #expect(Set(tier.values) == Set(TokenTier.allCases.map(\.rawValue)) && tier.values.count == TokenTier.allCases.count) }
        let statuses = found.filter { $0.property == WireField.appAttestStatus }
        #expect(statuses.count >= 1)
        for status in statuses { #expect(status.values == AppAttestFallbackReason.allCases.map(\.rawValue)) }
    }

    @Test func eligibilitysRefusalsAreErrorCodes() {
        let refusals = PromotionEligibilityReason.allCases.filter { $0 != .eligible }.map { APIErrorCode(rawValue: $0.rawValue) }
        #expect(refusals == [.alreadyClaimed, .promotionNotActive])
    }
}

import Foundation
import Testing
import TwoBitsService

/// `/readyz`'s answer from the typed verdicts: the same text a service manager, the alerts and the Python suites read.
@Suite struct ReadinessTests {
    @Test func verdictsAnswerAsTheirText() throws {
        let readiness = Readiness(checks: [.configuration: .ok, .appleKey: .failed(), .storage: .failed("the database cannot be reached"),
                                           .signingKeys: .ok])
        #expect(!readiness.ready)
        #expect(readiness.failures == ["apple_key: failed", "storage: failed: the database cannot be reached"])
        // As `ServerResponse.json` encodes it.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: try encoder.encode(readiness), as: UTF8.self)
            == #"{"checks":{"apple_key":"failed","configuration":"ok","signing_keys":"ok","storage":"failed: the database cannot be reached"},"ready":false}"#)
    }

    @Test func readyWhenEveryCheckPassed() {
        let readiness = Readiness(checks: Dictionary(uniqueKeysWithValues: ReadinessCheckName.allCases.map { ($0, ReadinessVerdict.ok) }))
        #expect(readiness.ready && readiness.failures.isEmpty)
        #expect(ReadinessCheckName.allCases.map(\.rawValue) == ["configuration", "apple_key", "storage", "signing_keys"])
    }
}

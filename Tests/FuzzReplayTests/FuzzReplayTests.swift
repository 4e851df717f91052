import FuzzChecks
import Foundation
import Testing
import TwoBitsCrypto

/// Replays every file of Tests/Fuzz/Corpus/<target>/ through its fuzz check (deterministic, seconds):
/// the seeds, the minimized finds, and every crash turned into a regression file stay checked in `make test`.
@Suite struct FuzzReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    static func files(_ target: FuzzTarget) throws -> [URL] {
        let folder = corpus.appendingPathComponent(target.rawValue)
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCorpusFilePassesItsCheck(_ target: FuzzTarget) throws {
        let files = try Self.files(target)
        #expect(files.count >= 5, "\(target.rawValue): the seed corpus is missing")
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for file in files {
                let input = try FileBytes.read(file.path)
                if let failure = target.check(input) { Issue.record("\(target.rawValue)/\(file.lastPathComponent): \(failure)") }
            }
        }
        print("FuzzReplayTests: \(target.rawValue): \(files.count) files in \(elapsed)")
    }

    /// Guards the guard: each check must be able to fail, or a green replay proves nothing.
    @Test func theChecksCanFail() {
        // A request id that is not echoed: a header value with a byte outside the alphabet must be replaced.
        #expect(FuzzTarget.request.check([1] + Array("ok-id".utf8)) == nil)
        // The Apple check's oracle recognises a readable state, so a client that refused it would be caught.
        #expect(FuzzTarget.appleAnswer.check([1, 0, 0] + Array(#"{"bit0":true,"bit1":false,"last_update_time":"2026-01"}"#.utf8)) == nil)
        // The JWS check: no edits means the original token, which verifies.
        #expect(FuzzTarget.jws.check([]) == nil)
        // The App Attest check's fixture is read and verifies, so the "only the capture verifies" branch is live.
        #expect(FuzzTarget.appAttest.check([0]) == nil)
        // The receipt check's fixture verifies, so its "only the fixture's payloads verify" branch is live.
        #expect(FuzzTarget.receipt.check([2]) == nil)
    }
}

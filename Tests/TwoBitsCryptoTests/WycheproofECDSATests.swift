import Foundation
import TestVectors
import Testing
import TwoBitsCrypto
import WireFormats

/// Every Wycheproof ECDSA P-256 / SHA-256 vector (C2SP/wycheproof, in ../shared/vectors/wycheproof) through the
/// product's two verifiers: IEEE P1363 (r‖s) through `verifyES256`, which verifies every ES256 JWS (TwoBits'
/// tokens, the developer JWT in the sandbox); ASN.1 DER through `verifyDER`, which verifies App Attest assertions
/// and receipts' signatures. `valid` must verify, `invalid` must not, and an `acceptable` one must be decided in
/// `acceptableDecisions` (docs/testing.md gives each decision's reason) or the test fails.
@Suite("Wycheproof ECDSA P-256 / SHA-256")
struct WycheproofECDSATests {
    struct Vector {
        let id: Int
        let comment: String
        let flags: [String]
        let message: Data
        let signature: Data
        let result: String
        let key: P256PublicKey
    }

    /// How each file's `acceptable` vectors are answered, by tcId (true: verifies). Neither file of the pinned
    /// commit has one; a newer file that adds some fails `everyAcceptableVectorIsDecided` until it is decided here.
    static let acceptableDecisions: [String: [Int: Bool]] = [
        p1363File: [:],
        derFile: [:],
    ]

    static let p1363File = "wycheproof/ecdsa_secp256r1_sha256_p1363_test.json"
    static let derFile = "wycheproof/ecdsa_secp256r1_sha256_test.json"
    /// The counts of the pinned commit (its README): a file that lost vectors must not pass quietly.
    static let expectedCounts = [p1363File: 262, derFile: 484]

    /// The file's vectors, checked against its own `numberOfTests`; nil when the vectors are absent (skipped).
    static func load(_ path: String, test: String) throws -> [Vector]? {
        guard let data = try TestVectors.file(path, for: test) else { return nil }
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        func hex(_ value: Any?) throws -> Data { try #require((value as? String).flatMap { Data(hexString: $0) }, "\(path): not hex: \(String(describing: value))") }
        var vectors: [Vector] = []
        for group in try #require(json["testGroups"] as? [[String: Any]]) {
            let key = try P256PublicKey(uncompressedPoint: try hex((group["publicKey"] as? [String: Any])?["uncompressed"]))
            for test in try #require(group["tests"] as? [[String: Any]]) {
                let id = try #require(test["tcId"] as? Int)
                let result = try #require(test["result"] as? String)
                vectors.append(Vector(id: id, comment: test["comment"] as? String ?? "", flags: test["flags"] as? [String] ?? [],
                                      message: try hex(test["msg"]), signature: try hex(test["sig"]), result: result, key: key))
            }
        }
        #expect(vectors.count == json["numberOfTests"] as? Int, "\(path): numberOfTests disagrees with the tests listed")
        #expect(vectors.count == expectedCounts[path], "\(path): not the pinned commit's vectors")
        return vectors
    }

    /// Runs every vector of `path` through `verify`; prints what ran.
    static func run(_ path: String, test: String, verify: (P256PublicKey, Data, Data) -> Bool) throws {
        guard let vectors = try load(path, test: test) else { return }
        let decisions = acceptableDecisions[path] ?? [:]
        var counts: [String: Int] = [:]
        for vector in vectors {
            counts[vector.result, default: 0] += 1
            let verified = verify(vector.key, vector.signature, vector.message)
            let label = "\(path) tcId \(vector.id) (\(vector.comment); \(vector.flags.joined(separator: ", ")))"
            switch vector.result {
            case "valid": #expect(verified, "valid but refused: \(label)")
            case "invalid": #expect(!verified, "invalid but accepted: \(label)")
            case "acceptable":
                guard let decided = decisions[vector.id] else {
                    Issue.record("acceptable and undecided (add it to acceptableDecisions and docs/testing.md): \(label); verifies: \(verified)")
                    continue
                }
                #expect(verified == decided, "acceptable, decided \(decided ? "verifies" : "refused"), but \(verified ? "verified" : "refused"): \(label)")
            default: Issue.record("unknown result \(vector.result): \(label)")
            }
        }
        print("Wycheproof \(path): \(vectors.count) vectors run (\(counts["valid", default: 0]) valid, \(counts["invalid", default: 0]) invalid, \(counts["acceptable", default: 0]) acceptable)")
    }

    @Test func p1363VectorsThroughTheES256Verifier() throws {
        try Self.run(Self.p1363File, test: "WycheproofECDSATests/p1363VectorsThroughTheES256Verifier") { key, signature, message in
            key.verifyES256(signature: signature, message: message)
        }
    }

    @Test func derVectorsThroughTheDERVerifier() throws {
        try Self.run(Self.derFile, test: "WycheproofECDSATests/derVectorsThroughTheDERVerifier") { key, signature, message in
            key.verifyDER(signature: signature, message: message)
        }
    }

    /// Every decision names a vector that exists and is `acceptable` (a stale decision is an error too).
    @Test func everyAcceptableDecisionNamesAnAcceptableVector() throws {
        for (path, decisions) in Self.acceptableDecisions {
            guard let vectors = try Self.load(path, test: "WycheproofECDSATests/everyAcceptableDecisionNamesAnAcceptableVector") else { return }
            let acceptable = Set(vectors.filter { $0.result == "acceptable" }.map(\.id))
            #expect(Set(decisions.keys) == acceptable, "\(path): decisions \(decisions.keys.sorted()) for acceptable vectors \(acceptable.sorted())")
        }
    }

    /// The vectors are not vacuous for the wrong-length and wrong-encoding classes the product must refuse.
    @Test func theInvalidClassesTheVerifiersRefuseArePresent() throws {
        guard let p1363 = try Self.load(Self.p1363File, test: "WycheproofECDSATests/theInvalidClassesTheVerifiersRefuseArePresent"),
              let der = try Self.load(Self.derFile, test: "WycheproofECDSATests/theInvalidClassesTheVerifiersRefuseArePresent") else { return }
        #expect(p1363.contains { $0.result == "invalid" && $0.signature.count != 64 }, "a P1363 signature of the wrong length")
        #expect(der.contains { $0.result == "invalid" && $0.flags.contains("BerEncodedSignature") }, "a BER (not DER) signature")
        #expect(p1363.contains { $0.result == "valid" && $0.flags.contains("ValidSignature") && $0.comment.contains("malleability") },
                "a high-S signature that is valid (ECDSA verification does not require low S)")
    }
}

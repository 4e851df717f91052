import Foundation
import Testing
import TwoBitsCrypto
import WireFormats

/// Checks TwoBits' ES256 JWTs with a verifier that shares no code with it: PyJWT on `cryptography`.
@Suite struct IndependentVerifierTests {
    static let header = #"{"alg":"ES256","kid":"ABCDEFGHIJ"}"#
    static let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/python/verify_es256.py").path

    /// True when the raw r||s signature of `jwt` has a zero first byte in r or in s.
    static func hasLeadingZero(_ jwt: String) -> Bool {
        let parts = jwt.split(separator: ".")
        guard parts.count == 3, let signature = Data(base64URLEncoded: String(parts[2])), signature.count == 64 else { return false }
        return signature[signature.startIndex] == 0 || signature[signature.startIndex + 32] == 0
    }

    static func sign(_ signer: ES256Signer, iat: Int) -> String {
        JWS.sign(headerJSON: Data(header.utf8), claimsJSON: Data(#"{"iss":"TEAMID1234","iat":\#(iat)}"#.utf8), signer: signer)
    }

    static func write(tokens: [String], publicKey: P256PublicKey, to dir: URL) throws {
        try Data(publicKey.pem.utf8).write(to: dir.appendingPathComponent("public.pem"))
        try Data((tokens.joined(separator: "\n") + "\n").utf8).write(to: dir.appendingPathComponent("tokens.txt"))
    }

    static func verify(_ dir: URL, environment: [String: String] = [:]) async throws -> CommandResult {
        try await TestSupport.run(["python3", script, dir.path], in: TestSupport.repositoryRoot, environment: environment)
    }

    @Test func pyJWTVerifiesEveryTokenIncludingLeadingZeroSignatures() async throws {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let iat = Int(Date().timeIntervalSince1970)

        // ~300 tokens, and keep signing until at least 3 have a zero-led r or s (about 1 in 128 do).
        let (tokens, leadingZero) = try await TestSupport.offPool { () -> ([String], Int) in
            var tokens: [String] = []
            var leadingZero = 0
            var attempts = 0
            while (tokens.count < 300 || leadingZero < 3) && attempts < 100_000 {
                attempts += 1
                let jwt = Self.sign(signer, iat: iat)
                if Self.hasLeadingZero(jwt) {
                    leadingZero += 1
                    tokens.append(jwt)
                } else if tokens.count < 300 {
                    tokens.append(jwt)
                }
            }
            return (tokens, leadingZero)
        }
        try #require(leadingZero >= 3)

        try await TestSupport.withTemporaryDirectory { dir in
            try Self.write(tokens: tokens, publicKey: key.publicKey, to: dir)
            let result = try await Self.verify(dir)
            #expect(result.status == 0, "verify_es256.py exited \(result.status):\n\(result.output)")
            #expect(result.output.contains("verified \(tokens.count) of \(tokens.count) tokens (\(leadingZero) with a leading zero"),
                    "\(result.output)")
        }
    }

    /// Guards the guard: a tampered token must make the script fail, or a passing run proves nothing.
    @Test func pyJWTRejectsATamperedSignature() async throws {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let good = Self.sign(signer, iat: Int(Date().timeIntervalSince1970))
        let parts = good.split(separator: ".").map(String.init)
        var signature = try #require(Data(base64URLEncoded: parts[2]))
        signature[10] ^= 0x01
        let bad = parts[0] + "." + parts[1] + "." + signature.base64URLEncodedString()
        let otherKey = Self.sign(ES256Signer(key: P256PrivateKey.generate()), iat: Int(Date().timeIntervalSince1970))

        try await TestSupport.withTemporaryDirectory { dir in
            try Self.write(tokens: [good, bad, otherKey], publicKey: key.publicKey, to: dir)
            let result = try await Self.verify(dir)
            #expect(result.status == 1, "\(result.output)")
            #expect(result.output.contains("verified 1 of 3 tokens"), "\(result.output)")
        }
    }

    /// Without PyJWT the script must say how to install it and exit 2 (the Makefile relies on that).
    @Test func scriptExplainsAMissingPyJWT() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let shadow = dir.appendingPathComponent("shadow")
            try FileManager.default.createDirectory(at: shadow, withIntermediateDirectories: true)
            try Data("raise ImportError('simulated: no PyJWT here')\n".utf8).write(to: shadow.appendingPathComponent("jwt.py"))
            try Self.write(tokens: ["x.y.z"], publicKey: P256PrivateKey.generate().publicKey, to: dir)
            let result = try await Self.verify(dir, environment: ["PYTHONPATH": shadow.path])
            #expect(result.status == 2, "\(result.output)")
            #expect(result.output.contains("pip install pyjwt"), "\(result.output)")
        }
    }
}

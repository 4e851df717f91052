import Foundation
import Locking
import Testing
import TwoBitsCrypto

@Suite struct ES256SignerTests {
    struct SignStats: Sendable {
        var signatures = 0
        var wrongLength = 0
        var failures = 0
        var leadingZeroR = 0
        var leadingZeroS = 0
    }

    /// Signs `count` distinct messages and verifies each (off the cooperative pool: ~0.5 s of CPU).
    static func signAndVerify(count: Int) async throws -> SignStats {
        try await TestSupport.offPool {
            let key = P256PrivateKey.generate()
            let signer = ES256Signer(key: key)
            let pub = key.publicKey
            var stats = SignStats()
            for i in 0..<count {
                let message = Data("message \(i) \(SecureRandom.uuid())".utf8)
                let signature = signer.sign(message)
                stats.signatures += 1
                if signature.count != 64 { stats.wrongLength += 1; continue }
                if signature[signature.startIndex] == 0 { stats.leadingZeroR += 1 }
                if signature[signature.startIndex + 32] == 0 { stats.leadingZeroS += 1 }
                if !pub.verifyES256(signature: signature, message: message) { stats.failures += 1 }
            }
            return stats
        }
    }

    @Test func signsAndVerifies3000MessagesIncludingLeadingZeroHalves() async throws {
        let stats = try await Self.signAndVerify(count: 3_000)
        #expect(stats.signatures == 3_000)
        #expect(stats.wrongLength == 0)
        #expect(stats.failures == 0)
        // About 1 signature in 128 has r or s starting with a zero byte; with 3,000 the chance of none is ~e^-23.
        #expect(stats.leadingZeroR + stats.leadingZeroS >= 1, "no signature exercised the left-padding path")
    }

    @Test func everyLeadingZeroSignatureVerifies() async throws {
        // Keep signing until several padded halves have been seen, and verify each one specifically.
        let (padded, verified) = try await TestSupport.offPool { () -> (Int, Int) in
            let key = P256PrivateKey.generate()
            let signer = ES256Signer(key: key)
            let pub = key.publicKey
            var padded = 0
            var verified = 0
            var attempts = 0
            while padded < 5 && attempts < 50_000 {
                attempts += 1
                let message = Data("padded \(attempts)".utf8)
                let signature = signer.sign(message)
                guard signature.count == 64, signature[0] == 0 || signature[32] == 0 else { continue }
                padded += 1
                if pub.verifyES256(signature: signature, message: message) { verified += 1 }
            }
            return (padded, verified)
        }
        #expect(padded == 5)
        #expect(verified == padded)
    }

    @Test func aFlippedBitFailsVerification() {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let pub = key.publicKey
        let message = Data("the two bits".utf8)
        let signature = signer.sign(message)
        #expect(pub.verifyES256(signature: signature, message: message))

        for bit in [0, 7, 100, 255, 256, 300, 511] {
            var tampered = signature
            tampered[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(!pub.verifyES256(signature: tampered, message: message), "signature bit \(bit)")
        }
        var tamperedMessage = message
        tamperedMessage[0] ^= 0x01
        #expect(!pub.verifyES256(signature: signature, message: tamperedMessage))
    }

    @Test func wrongKeyAndWrongLengthFail() {
        let key = P256PrivateKey.generate()
        let message = Data("hello".utf8)
        let signature = ES256Signer(key: key).sign(message)
        #expect(!P256PrivateKey.generate().publicKey.verifyES256(signature: signature, message: message))
        #expect(!key.publicKey.verifyES256(signature: signature.prefix(63), message: message))
        #expect(!key.publicKey.verifyES256(signature: signature + Data([0]), message: message))
        #expect(!key.publicKey.verifyES256(signature: Data(count: 64), message: message))
        #expect(!key.publicKey.verifyES256(signature: Data(), message: message))
    }

    @Test func signaturesAreRandomised() {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let message = Data("same".utf8)
        #expect(signer.sign(message) != signer.sign(message))
    }

    @Test func oneSignerIsSafeToShareAcrossThreads() async throws {
        let failures = try await TestSupport.offPool { () -> Int in
            let key = P256PrivateKey.generate()
            let signer = ES256Signer(key: key)
            let pub = key.publicKey
            let bad = Lock(0)
            DispatchQueue.concurrentPerform(iterations: 8) { t in
                for i in 0..<150 {
                    let message = Data("thread \(t) message \(i)".utf8)
                    if !pub.verifyES256(signature: signer.sign(message), message: message) { bad.withLock { $0 += 1 } }
                }
            }
            return bad.withLock { $0 }
        }
        #expect(failures == 0)
    }
}

@Suite struct JWSTests {
    @Test func signThenDecode() throws {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let jwt = JWS.sign(headerJSON: Data(#"{"alg":"ES256","kid":"ABCDEFGHIJ"}"#.utf8),
                           claimsJSON: Data(#"{"iss":"TEAMID1234","iat":1700000000}"#.utf8), signer: signer)
        let pieces = jwt.split(separator: ".", omittingEmptySubsequences: false)
        #expect(pieces.count == 3)
        #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"))
        let parts = try #require(JWS.decode(jwt))
        #expect(parts.header["alg"] == .string("ES256"))
        #expect(parts.header["kid"] == .string("ABCDEFGHIJ"))
        #expect(parts.claims["iss"] == .string("TEAMID1234"))
        #expect(parts.claims["iat"] == .int(1_700_000_000))
        #expect(parts.signature.count == 64)
        #expect(parts.signingInput == Data((pieces[0] + "." + pieces[1]).utf8))
        #expect(key.publicKey.verifyES256(signature: parts.signature, message: parts.signingInput))
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "e30.e30", "e30.e30.!!", "bm90IGpzb24.e30.AA", "e30.WzFd.AA"])
    func decodeRefusesMalformedTokens(_ token: String) {
        #expect(JWS.decode(token) == nil)
    }
}

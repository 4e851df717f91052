import Foundation
import Testing
import TwoBitsCrypto

@Suite struct ES256SignerTests {
    @Test func signsAndVerifies3000MessagesIncludingLeadingZeroHalves() {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let pub = key.publicKey
        var leadingZeroR = 0
        var leadingZeroS = 0
        var failures = 0
        var wrongLength = 0
        for i in 0..<3_000 {
            let message = Data("message \(i) \(SecureRandom.uuid())".utf8)
            let signature = signer.sign(message)
            if signature.count != 64 { wrongLength += 1; continue }
            if signature[signature.startIndex] == 0 { leadingZeroR += 1 }
            if signature[signature.startIndex + 32] == 0 { leadingZeroS += 1 }
            if !pub.verifyES256(signature: signature, message: message) { failures += 1 }
        }
        #expect(wrongLength == 0)
        #expect(failures == 0)
        // About 1 signature in 128 has r or s starting with a zero byte; with 3,000 the chance of none is ~e^-23.
        #expect(leadingZeroR + leadingZeroS >= 1, "no signature exercised the left-padding path")
    }

    @Test func everyLeadingZeroSignatureVerifies() {
        // Keep signing until several padded halves have been seen, and verify each one specifically.
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let pub = key.publicKey
        var padded = 0
        var attempts = 0
        while padded < 5 && attempts < 50_000 {
            attempts += 1
            let message = Data("padded \(attempts)".utf8)
            let signature = signer.sign(message)
            guard signature[0] == 0 || signature[32] == 0 else { continue }
            padded += 1
            #expect(signature.count == 64)
            #expect(pub.verifyES256(signature: signature, message: message))
        }
        #expect(padded == 5)
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

    @Test func oneSignerIsSafeToShareAcrossTasks() async {
        let key = P256PrivateKey.generate()
        let signer = ES256Signer(key: key)
        let pub = key.publicKey
        let failures = await withTaskGroup(of: Int.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var bad = 0
                    for i in 0..<150 {
                        let message = Data("task \(t) message \(i)".utf8)
                        if !pub.verifyES256(signature: signer.sign(message), message: message) { bad += 1 }
                    }
                    return bad
                }
            }
            return await group.reduce(0, +)
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

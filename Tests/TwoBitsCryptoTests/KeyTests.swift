import Foundation
import Testing
import TwoBitsCrypto

@Suite struct P256KeyTests {
    @Test func generatedKeyRoundTripsThroughPKCS8PEM() throws {
        let key = P256PrivateKey.generate()
        let pem = key.pkcs8PEM
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(pem.hasSuffix("-----END PRIVATE KEY-----\n"))
        let again = try P256PrivateKey(pem: pem)
        #expect(again.pkcs8PEM == pem)
        #expect(again.publicKey.pem == key.publicKey.pem)

        // A signature by the parsed key verifies with the original public key.
        let message = Data("round trip".utf8)
        #expect(key.publicKey.verifyES256(signature: ES256Signer(key: again).sign(message), message: message))
    }

    @Test func publicKeyCoordinatesAre32Plus32Bytes() throws {
        for _ in 0..<20 {
            let key = P256PrivateKey.generate()
            let (x, y) = key.publicKey.coordinates
            #expect(x.count == 32)
            #expect(y.count == 32)
            #expect(x != y)
        }
    }

    @Test func publicKeyPEMRoundTripsAndCanBeDerivedFromThePrivatePEM() throws {
        let key = P256PrivateKey.generate()
        let pub = key.publicKey
        #expect(pub.pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let parsed = try P256PublicKey(pem: pub.pem)
        #expect(parsed.coordinates.x == pub.coordinates.x)
        #expect(parsed.coordinates.y == pub.coordinates.y)
        let derived = try P256PublicKey(pem: key.pkcs8PEM)
        #expect(derived.pem == pub.pem)
    }

    @Test func twoGeneratedKeysDiffer() {
        #expect(P256PrivateKey.generate().publicKey.pem != P256PrivateKey.generate().publicKey.pem)
    }
}

/// Key files made by the `openssl` command line, each refused with the case that names its problem.
@Suite struct KeyLoadingErrorTests {
    /// Runs an openssl pipeline in `dir` that writes `file`, and returns the file's path.
    private func openssl(_ script: String, writing file: String, in dir: URL) async throws -> String {
        let result = try await TestSupport.shell(script, in: dir)
        try #require(result.status == 0, "openssl failed: \(result.output)")
        let path = dir.appendingPathComponent(file).path
        try #require(FileManager.default.fileExists(atPath: path))
        return path
    }

    @Test func missingFileIsUnreadable() throws {
        let path = "/nonexistent-\(UUID().uuidString)/AuthKey_ABCDEFGHIJ.p8"
        let error = #expect(throws: KeyError.self) { try P256PrivateKey(contentsOfFile: path) }
        guard case .unreadable(let reportedPath, _) = error else {
            Issue.record("expected .unreadable, got \(String(describing: error))")
            return
        }
        #expect(reportedPath == path)
    }

    @Test func directoryIsUnreadable() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let error = #expect(throws: KeyError.self) { try P256PrivateKey(contentsOfFile: dir.path) }
            guard case .unreadable = error else {
                Issue.record("expected .unreadable, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func nonPEMTextIsNotPEM() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("key.p8").path
            try Data("this is not a key\n".utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: KeyError.notPEM) { try P256PrivateKey(contentsOfFile: path) }

            let binary = dir.appendingPathComponent("key.der").path
            try Data([0x30, 0x82, 0xFF, 0xFE, 0x00, 0xC3]).write(to: URL(fileURLWithPath: binary))
            #expect(throws: KeyError.notPEM) { try P256PrivateKey(contentsOfFile: binary) }

            let empty = dir.appendingPathComponent("empty.p8").path
            try Data().write(to: URL(fileURLWithPath: empty))
            #expect(throws: KeyError.notPEM) { try P256PrivateKey(contentsOfFile: empty) }
        }
    }

    @Test func encryptedPKCS8IsEncrypted() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = try await openssl(
                "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 | openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:x -out enc.p8",
                writing: "enc.p8", in: dir)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
            #expect(throws: KeyError.encrypted) { try P256PrivateKey(contentsOfFile: path) }
        }
    }

    @Test func encryptedSEC1IsEncrypted() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = try await openssl(
                "openssl ecparam -name prime256v1 -genkey -noout | openssl ec -aes256 -passout pass:x -out enc.pem",
                writing: "enc.pem", in: dir)
            #expect(throws: KeyError.encrypted) { try P256PrivateKey(contentsOfFile: path) }
        }
    }

    @Test func rsaKeyIsNotEC() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = try await openssl("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.p8", writing: "rsa.p8", in: dir)
            #expect(throws: KeyError.notEC("RSA")) { try P256PrivateKey(contentsOfFile: path) }
        }
    }

    @Test func ed25519KeyIsNotEC() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = try await openssl("openssl genpkey -algorithm ED25519 -out ed.p8", writing: "ed.p8", in: dir)
            let error = #expect(throws: KeyError.self) { try P256PrivateKey(contentsOfFile: path) }
            guard case .notEC = error else {
                Issue.record("expected .notEC, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func p384KeyIsWrongCurve() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = try await openssl("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out p384.p8", writing: "p384.p8", in: dir)
            #expect(throws: KeyError.wrongCurve("secp384r1")) { try P256PrivateKey(contentsOfFile: path) }

            // Its public half is refused the same way.
            let pub = try await openssl("openssl pkey -in p384.p8 -pubout -out p384.pub", writing: "p384.pub", in: dir)
            let pubPEM = try String(contentsOfFile: pub, encoding: .utf8)
            #expect(throws: KeyError.wrongCurve("secp384r1")) { try P256PublicKey(pem: pubPEM) }
        }
    }

    @Test func secp256k1KeyIsWrongCurveDespiteTheSameSize() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let path = try await openssl("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp256k1 -out k1.p8", writing: "k1.p8", in: dir)
            #expect(throws: KeyError.wrongCurve("secp256k1")) { try P256PrivateKey(contentsOfFile: path) }
        }
    }

    @Test func opensslP256KeysLoadInPKCS8AndSEC1Form() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let pkcs8 = try await openssl("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey.p8", writing: "AuthKey.p8", in: dir)
            let key = try P256PrivateKey(contentsOfFile: pkcs8)
            #expect(key.pkcs8PEM == (try String(contentsOfFile: pkcs8, encoding: .utf8)))

            let sec1 = try await openssl("openssl ecparam -name prime256v1 -genkey -noout -out sec1.pem", writing: "sec1.pem", in: dir)
            let sec1Key = try P256PrivateKey(contentsOfFile: sec1)
            #expect(sec1Key.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        }
    }

    @Test func truncatedPEMIsMalformed() throws {
        let pem = P256PrivateKey.generate().pkcs8PEM
        let lines = pem.split(separator: "\n")
        let broken = ([lines[0], lines[1].prefix(20)] + [lines.last!]).joined(separator: "\n") + "\n"
        let error = #expect(throws: KeyError.self) { try P256PrivateKey(pem: broken) }
        guard case .malformed = error else {
            Issue.record("expected .malformed, got \(String(describing: error))")
            return
        }
    }
}

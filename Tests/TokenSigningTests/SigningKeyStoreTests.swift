import Foundation
import Testing
import TokenSigning
import TwoBitsCrypto

@Suite struct SigningKeyStoreGenerateTests {
    @Test func generateWritesAnOwnerOnlyPKCS8FileNamedByCreationMillisAndKid() throws {
        try TemporaryKeyDirectory.with { dir in
            let key = try dir.store.generate(now: referenceDate)

            // `<created-unix-ms>-<kid>.pem` in the directory.
            let name = (key.path as NSString).lastPathComponent
            #expect(name == "1750000000000-\(key.kid).pem")
            #expect((key.path as NSString).deletingLastPathComponent == dir.path)
            #expect(key.createdAt == referenceDate)

            // Mode 0600 for the file, 0700 for the directory the store created.
            #expect(TemporaryKeyDirectory.mode(of: key.path) == 0o600)
            #expect(TemporaryKeyDirectory.mode(of: dir.path) == 0o700)

            // The file holds the key, as unencrypted PKCS#8 PEM.
            let pem = try String(contentsOfFile: key.path, encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            let reread = try P256PrivateKey(pem: pem)
            #expect(JWK(publicKey: reread.publicKey).kid == key.kid)

            // The kid is the key's RFC 7638 thumbprint.
            #expect(key.kid == JWK.thumbprint(x: key.jwk.x, y: key.jwk.y))
            #expect(key.jwk.kid == key.kid)
        }
    }

    @Test func loadReturnsWhatGenerateWrote() throws {
        try TemporaryKeyDirectory.with { dir in
            let key = try dir.store.generate(now: referenceDate)
            let loaded = try dir.store.load()
            #expect(loaded.count == 1)
            #expect(loaded[0].kid == key.kid)
            #expect(loaded[0].path == key.path)
            #expect(loaded[0].createdAt == referenceDate)
            #expect(loaded[0].jwk == key.jwk)
        }
    }

    @Test func generatingTwiceInTheSameMillisecondStillOrdersTheKeys() throws {
        try TemporaryKeyDirectory.with { dir in
            let first = try dir.store.generate(now: referenceDate)
            let second = try dir.store.generate(now: referenceDate)
            #expect(second.createdAt > first.createdAt)
            #expect((second.path as NSString).lastPathComponent.hasPrefix("1750000000001-"))
            #expect(try dir.store.load().map(\.kid) == [first.kid, second.kid])
        }
    }
}

@Suite struct SigningKeyStoreLoadRefusalTests {
    @Test func missingDirectoryIsRefusedWithTheFixingCommand() throws {
        try TemporaryKeyDirectory.with { dir in
            #expect(throws: SigningKeyError.directoryMissing(dir.path)) { try dir.store.load() }
            #expect(SigningKeyError.directoryMissing(dir.path).description.contains("twobits keys generate --dir \(dir.path)"))
        }
    }

    @Test func aRegularFileInPlaceOfTheDirectoryCountsAsMissing() throws {
        try TemporaryKeyDirectory.with { dir in
            try FileManager.default.createDirectory(atPath: dir.root, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: dir.path, contents: Data("x".utf8)))
            #expect(throws: SigningKeyError.directoryMissing(dir.path)) { try dir.store.load() }
        }
    }

    @Test func emptyDirectoryIsRefused() throws {
        try TemporaryKeyDirectory.with { dir in
            try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
            #expect(throws: SigningKeyError.empty(dir.path)) { try dir.store.load() }
            #expect(SigningKeyError.empty(dir.path).description.contains("twobits keys generate --dir \(dir.path)"))
        }
    }

    @Test func aDirectoryWithoutKeyFilesCountsAsEmpty() throws {
        try TemporaryKeyDirectory.with { dir in
            try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: dir.path + "/README.txt", contents: Data("notes".utf8)))
            #expect(FileManager.default.createFile(atPath: dir.path + "/backup.pem", contents: Data("no creation time".utf8)))
            #expect(throws: SigningKeyError.empty(dir.path)) { try dir.store.load() }
        }
    }

    @Test(arguments: [0o640, 0o604, 0o644, 0o660, 0o606, 0o620])
    func keyFilesReadableOrWritableByGroupOrOthersAreRefused(mode: Int) throws {
        try TemporaryKeyDirectory.with { dir in
            let key = try dir.store.generate(now: referenceDate)
            #expect(chmod(key.path, mode_t(mode)) == 0)
            #expect(throws: SigningKeyError.permissive(path: key.path, mode: String(mode, radix: 8))) { try dir.store.load() }
            #expect(SigningKeyError.permissive(path: key.path, mode: "640").description.contains("chmod 600 \(key.path)"))
        }
    }

    @Test func onePermissiveKeyAmongGoodOnesRefusesTheWholeDirectory() throws {
        try TemporaryKeyDirectory.with { dir in
            _ = try dir.store.generate(now: referenceDate)
            let second = try dir.store.generate(now: referenceDate.addingTimeInterval(60))
            #expect(chmod(second.path, 0o644) == 0)
            #expect(throws: SigningKeyError.permissive(path: second.path, mode: "644")) { try dir.store.load() }
        }
    }

    @Test func ownerReadOnlyIsAccepted() throws {
        try TemporaryKeyDirectory.with { dir in
            let key = try dir.store.generate(now: referenceDate)
            #expect(chmod(key.path, 0o400) == 0)
            #expect(try dir.store.load().map(\.kid) == [key.kid])
        }
    }

    /// Whoever can write the directory can plant a key that then signs and verifies tokens.
    @Test(arguments: [0o770, 0o707, 0o720, 0o702, 0o777, 0o1777])
    func aDirectoryWritableByGroupOrOthersIsRefused(mode: Int) throws {
        try TemporaryKeyDirectory.with { dir in
            try dir.store.generate(now: referenceDate)
            #expect(chmod(dir.path, mode_t(mode)) == 0)
            #expect(throws: SigningKeyError.directoryWritable(path: dir.path, mode: String(mode & 0o777, radix: 8))) { try dir.store.load() }
            #expect(SigningKeyError.directoryWritable(path: dir.path, mode: "777").description.contains("chmod 700 \(dir.path)"))
        }
    }

    @Test(arguments: [0o700, 0o750, 0o755, 0o500])
    func aDirectoryOnlyTheOwnerWritesIsAccepted(mode: Int) throws {
        try TemporaryKeyDirectory.with { dir in
            let key = try dir.store.generate(now: referenceDate)
            #expect(chmod(dir.path, mode_t(mode)) == 0)
            defer { chmod(dir.path, 0o700) }
            #expect(try dir.store.load().map(\.kid) == [key.kid])
        }
    }

    /// A key file of another user (root can hand it to `nobody`) is refused even at mode 0600.
    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func aKeyOwnedByAnotherUserIsRefused() throws {
        try TemporaryKeyDirectory.with { dir in
            let first = try dir.store.generate(now: referenceDate)
            let planted = try dir.store.generate(now: referenceDate.addingTimeInterval(60))
            #expect(chown(planted.path, 65_534, 65_534) == 0)
            #expect(throws: SigningKeyError.foreignOwner(path: planted.path, owner: 65_534, service: geteuid())) { try dir.store.load() }
            #expect(SigningKeyError.foreignOwner(path: planted.path, owner: 65_534, service: 0).description.contains("chown 0 \(planted.path)"))
            #expect(chown(planted.path, geteuid(), getegid()) == 0)
            #expect(try dir.store.load().map(\.kid) == [first.kid, planted.kid])
        }
    }

    @Test func aCorruptKeyFileIsNamed() throws {
        try TemporaryKeyDirectory.with { dir in
            try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
            let path = dir.path + "/1750000000000-bogus.pem"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8),
                                                   attributes: [.posixPermissions: 0o600]))
            #expect {
                try dir.store.load()
            } throws: { error in
                guard case .badKey(let p, _)? = error as? SigningKeyError else { return false }
                return p == path
            }
        }
    }
}

@Suite struct SigningKeyRotationTests {
    /// Seconds after `referenceDate`.
    static func at(_ seconds: TimeInterval) -> Date { referenceDate.addingTimeInterval(seconds) }

    @Test func theNewestKeySignsAfterRotation() throws {
        try TemporaryKeyDirectory.with { dir in
            let old = try dir.store.generate(now: Self.at(0))
            try dir.store.recordActivation(of: old, at: Self.at(10))
            let new = try dir.store.generate(now: Self.at(3600))
            let keys = try dir.store.load()
            #expect(keys.map(\.kid) == [old.kid, new.kid])

            // The service signs with the last (newest) key.
            let issuer = TokenIssuer(key: keys.last!, issuer: "twobits", audience: "main-api")
            let token = issuer.issue(subject: "install-1", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).token
            #expect(JWS.decode(token)?.header["kid"]?.stringValue == new.kid)

            // Until a server activates the new key, the old one is still signing somewhere: not retired.
            #expect(SigningKeyStore.retirements(keys, activations: dir.store.activations()).isEmpty)

            // Retirement is the activation of the successor, not its creation.
            try dir.store.recordActivation(of: new, at: Self.at(7200))
            let retired = SigningKeyStore.retirements(keys, activations: dir.store.activations())
            #expect(retired == [old.kid: Self.at(7200)])
        }
    }

    @Test func activationsKeepTheLatestTimePerKey() throws {
        try TemporaryKeyDirectory.with { dir in
            let key = try dir.store.generate(now: Self.at(0))
            #expect(dir.store.activations().isEmpty)
            try dir.store.recordActivation(of: key, at: Self.at(100))
            #expect(dir.store.activations() == [key.kid: Self.at(100)])
            // An earlier activation (a second server whose clock or start was earlier) does not move it back.
            try dir.store.recordActivation(of: key, at: Self.at(50))
            #expect(dir.store.activations() == [key.kid: Self.at(100)])
            try dir.store.recordActivation(of: key, at: Self.at(200))
            #expect(dir.store.activations() == [key.kid: Self.at(200)])
            // Stored beside the key as `<kid>.activated`, which `load` does not mistake for a key.
            #expect(FileManager.default.fileExists(atPath: "\(dir.path)/\(key.kid).activated"))
            #expect(try dir.store.load().map(\.kid) == [key.kid])
        }
    }

    @Test func theLatestActivationOfAnyNewerKeyRetires() throws {
        try TemporaryKeyDirectory.with { dir in
            let k1 = try dir.store.generate(now: Self.at(0))
            let k2 = try dir.store.generate(now: Self.at(100))
            let k3 = try dir.store.generate(now: Self.at(200))
            try dir.store.recordActivation(of: k1, at: Self.at(1))
            try dir.store.recordActivation(of: k2, at: Self.at(120))
            try dir.store.recordActivation(of: k3, at: Self.at(300))
            // A server may have gone straight from k1 to k3, so k1 may have signed until k3's activation.
            let retired = SigningKeyStore.retirements(try dir.store.load(), activations: dir.store.activations())
            #expect(retired == [k1.kid: Self.at(300), k2.kid: Self.at(300)])
        }
    }

    @Test func aTokenOfTheRetiredKeyStillVerifiesWhileItCanBeLive() throws {
        try TemporaryKeyDirectory.with { dir in
            let old = try dir.store.generate(now: Self.at(0))
            try dir.store.recordActivation(of: old, at: Self.at(0))
            let oldToken = TokenIssuer(key: old, issuer: "twobits", audience: "main-api")
                .issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900, now: Self.at(10)).token
            let new = try dir.store.generate(now: Self.at(20))
            try dir.store.recordActivation(of: new, at: Self.at(20))
            let now = Self.at(600)
            let verifying = SigningKeyStore.verifying(try dir.store.load(), activations: dir.store.activations(), maxTokenLifetime: 900, now: now)
            #expect(verifying.count == 2)
            let verifier = TokenVerifier(keys: verifying, issuer: "twobits", audience: "main-api")
            #expect((try? verifier.verify(oldToken, now: now).get())?.sub == "s")
        }
    }

    @Test func verifyingKeepsUnretiredKeysAndRetiredOnesUntilRetirementPlusLifetime() throws {
        try TemporaryKeyDirectory.with { dir in
            let k1 = try dir.store.generate(now: Self.at(0))
            let k2 = try dir.store.generate(now: Self.at(100))
            let k3 = try dir.store.generate(now: Self.at(200))
            try dir.store.recordActivation(of: k1, at: Self.at(0))
            try dir.store.recordActivation(of: k2, at: Self.at(120))
            // k3 exists but no server has activated it yet.
            let keys = try dir.store.load()
            func live(at offset: TimeInterval) -> [String] {
                SigningKeyStore.verifying(keys, activations: dir.store.activations(), maxTokenLifetime: 900, now: Self.at(offset)).map(\.kid)
            }
            // k1 retired at +120 (k2's activation) → verifies until +1020 (exclusive).
            #expect(live(at: 300) == [k1.kid, k2.kid, k3.kid])
            #expect(live(at: 1019) == [k1.kid, k2.kid, k3.kid])
            #expect(live(at: 1020) == [k2.kid, k3.kid])
            // k2 is still signing (its successor was never activated): it never leaves, however late.
            #expect(live(at: 10 * 365 * 86_400) == [k2.kid, k3.kid])

            // Once k3 is activated at +5000, k2 verifies until +5900. So does k1 (unless pruned meanwhile):
            // a server that never activated k2 may have signed with k1 until it moved to k3.
            try dir.store.recordActivation(of: k3, at: Self.at(5000))
            #expect(live(at: 5899) == [k1.kid, k2.kid, k3.kid])
            #expect(live(at: 5900) == [k3.kid])
        }
    }

    @Test func pruneDeletesOnlyKeysWhoseTokensHaveAllExpired() throws {
        try TemporaryKeyDirectory.with { dir in
            let k1 = try dir.store.generate(now: Self.at(0))
            try dir.store.recordActivation(of: k1, at: Self.at(0))
            let k2 = try dir.store.generate(now: Self.at(100))
            try dir.store.recordActivation(of: k2, at: Self.at(150))
            let k3 = try dir.store.generate(now: Self.at(200))
            try dir.store.recordActivation(of: k3, at: Self.at(250))

            // Within every retired key's window (k1 and k2 retired at +250): nothing goes.
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(500)).isEmpty)
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(1149)).isEmpty)
            #expect(try dir.store.load().count == 3)

            // Past +250 + 900 both retired keys are dead; their files and activation records go.
            let removed = try dir.store.prune(maxTokenLifetime: 900, now: Self.at(1150))
            #expect(removed.map(\.kid) == [k1.kid, k2.kid])
            for key in [k1, k2] {
                #expect(!FileManager.default.fileExists(atPath: key.path))
                #expect(!FileManager.default.fileExists(atPath: "\(dir.path)/\(key.kid).activated"))
            }
            #expect(FileManager.default.fileExists(atPath: k3.path))
            #expect(try dir.store.load().map(\.kid) == [k3.kid])
            #expect(dir.store.activations().keys.sorted() == [k3.kid])

            // Pruning again is a no-op; the signing key is never pruned.
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(1150)).isEmpty)
            #expect(try dir.store.prune(maxTokenLifetime: 0, now: Self.at(10 * 86_400)).isEmpty)
        }
    }

    @Test func pruneKeepsAKeyWhoseSuccessorWasNeverActivated() throws {
        // `keys rotate` without a restart or SIGHUP: the old key keeps signing, however long ago the
        // new key was created, so none of its tokens can be assumed dead.
        try TemporaryKeyDirectory.with { dir in
            let old = try dir.store.generate(now: Self.at(0))
            try dir.store.recordActivation(of: old, at: Self.at(0))
            _ = try dir.store.generate(now: Self.at(60))
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(7 * 86_400)).isEmpty)
            #expect(FileManager.default.fileExists(atPath: old.path))
        }
    }

    @Test func pruneKeepsOnlyTheWindowOfOneRetiredKey() throws {
        try TemporaryKeyDirectory.with { dir in
            let k1 = try dir.store.generate(now: Self.at(0))
            try dir.store.recordActivation(of: k1, at: Self.at(0))
            let k2 = try dir.store.generate(now: Self.at(100))
            try dir.store.recordActivation(of: k2, at: Self.at(100))
            let k3 = try dir.store.generate(now: Self.at(5000))
            try dir.store.recordActivation(of: k3, at: Self.at(5000))
            // k1 and k2 both retire at k3's activation (+5000); a key activated in between does not
            // make k1 retire earlier, since a server may have gone straight from k1 to k3.
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(5899)).isEmpty)
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(5900)).map(\.kid) == [k1.kid, k2.kid])
        }
    }

    @Test func pruneWithALongerMaxLifetimeKeepsMore() throws {
        try TemporaryKeyDirectory.with { dir in
            let k1 = try dir.store.generate(now: Self.at(0))
            try dir.store.recordActivation(of: k1, at: Self.at(0))
            let k2 = try dir.store.generate(now: Self.at(100))
            try dir.store.recordActivation(of: k2, at: Self.at(100))
            // 2,000 s after retirement: dead for a 900 s TTL, alive for a day-long TTL.
            #expect(try dir.store.prune(maxTokenLifetime: 86_400, now: Self.at(2_100)).isEmpty)
            #expect(try dir.store.prune(maxTokenLifetime: 900, now: Self.at(2_100)).map(\.kid) == [k1.kid])
        }
    }

    @Test func pruneOfAMissingDirectoryFails() throws {
        try TemporaryKeyDirectory.with { dir in
            #expect(throws: SigningKeyError.directoryMissing(dir.path)) { try dir.store.prune(maxTokenLifetime: 900) }
        }
    }
}

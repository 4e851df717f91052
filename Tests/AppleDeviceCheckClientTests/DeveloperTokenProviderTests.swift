import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

@Suite struct DeveloperTokenProviderTests {
    func credentials() throws -> DeveloperCredentials {
        try DeveloperCredentials(teamID: sandboxTeamID, keyID: sandboxKeyID, key: P256PrivateKey.generate())
    }

    @Test func manyConcurrentCallsShareOneToken() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 10_000)
            let device = h.device()
            let tokens = try (0..<200).map { _ in try h.token(device) }
            let failures = await withTaskGroup(of: Int.self) { group in
                for token in tokens {
                    group.addTask { (try? await client.validate(token)) == nil ? 1 : 0 }
                }
                return await group.reduce(0, +)
            }
            #expect(failures == 0)
            #expect(h.calls(.validate) == 200)
            #expect(h.sandbox.counters.distinctDeveloperTokens == 1)
            #expect(client.tokens.tokensSigned == 1)
        }
    }

    @Test func currentIsTheSameForConcurrentCallers() async throws {
        let provider = DeveloperTokenProvider(credentials: try credentials())
        let jwts = await withTaskGroup(of: String.self) { group in
            for _ in 0..<500 { group.addTask { provider.current().jwt } }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(jwts.count == 1)
        #expect(provider.tokensSigned == 1)
    }

    @Test func tokenCarriesAppleHeaderAndClaims() throws {
        let creds = try credentials()
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000.75))
        let provider = DeveloperTokenProvider(credentials: creds, now: clock.closure)
        let token = provider.current()
        #expect(token.issuedAt == Date(timeIntervalSince1970: 1_800_000_000))
        let parts = try #require(JWS.decode(token.jwt))
        #expect(parts.header == ["alg": .string("ES256"), "kid": .string(sandboxKeyID)])
        #expect(parts.claims == ["iss": .string(sandboxTeamID), "iat": .int(1_800_000_000)])
        #expect(creds.key.publicKey.verifyES256(signature: parts.signature, message: parts.signingInput))
        // A credential: its description names only the iat.
        #expect(!token.description.contains(token.jwt))
    }

    @Test func resignsAfter51MinutesButNotBefore30() throws {
        let clock = TestClock()
        let provider = DeveloperTokenProvider(credentials: try credentials(), now: clock.closure)
        let first = provider.current()
        clock.advance(by: 29 * 60)
        #expect(provider.current() == first)
        #expect(provider.tokensSigned == 1)
        clock.advance(by: 22 * 60) // 51 minutes after signing
        let second = provider.current()
        #expect(second != first)
        #expect(second.issuedAt.timeIntervalSince(first.issuedAt) >= 51 * 60 - 1)
        #expect(provider.tokensSigned == 2)
        #expect(provider.current() == second)
    }

    @Test func resignsExactlyAtAFixedRefreshAge() throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let provider = DeveloperTokenProvider(credentials: try credentials(), refreshAge: 1_800...1_800, now: clock.closure)
        let first = provider.current()
        clock.advance(by: 1_799)
        #expect(provider.current() == first)
        clock.advance(by: 1)
        #expect(provider.current() != first)
        #expect(provider.tokensSigned == 2)
    }

    @Test func sandboxAcceptsTheResignedTokenAfter51Minutes() async throws {
        let clock = TestClock()
        try await withSandbox(now: clock.closure) { h in
            let tokens = try h.provider(now: clock.closure)
            let client = try h.client(tokens: tokens)
            let device = h.device()
            try await client.validate(try h.token(device))
            try await client.validate(try h.token(device))
            #expect(h.sandbox.counters.distinctDeveloperTokens == 1)
            clock.advance(by: 51 * 60)
            try await client.validate(try h.token(device))
            #expect(h.sandbox.counters.distinctDeveloperTokens == 2)
            #expect(h.statusCount(401) == 0)
            #expect(tokens.tokensSigned == 2)
        }
    }

    @Test func invalidateForcesAResign() throws {
        let provider = DeveloperTokenProvider(credentials: try credentials())
        let first = provider.current()
        provider.invalidate(first)
        let second = provider.current()
        #expect(second.jwt != first.jwt)
        #expect(provider.tokensSigned == 2)

        // Invalidating a token that is no longer the shared one changes nothing.
        provider.invalidate(first)
        #expect(provider.current() == second)
        #expect(provider.tokensSigned == 2)
    }

    @Test func tokensOlderThanTheRefreshAgeAreNeverReturned() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = TestClock(start)
        let provider = DeveloperTokenProvider(credentials: try credentials(), now: clock.closure)
        var issued = Set<Date>()
        // Six hours in uneven steps of 1 to 7 minutes.
        var step = 0
        while clock.now.timeIntervalSince(start) < 6 * 3_600 {
            let token = provider.current()
            let age = clock.now.timeIntervalSince(token.issuedAt)
            #expect(age >= 0 && age < 50 * 60, "age \(age) s at +\(clock.now.timeIntervalSince(start)) s")
            issued.insert(token.issuedAt)
            step += 1
            clock.advance(by: Double(60 * (1 + step % 7)))
        }
        // One token per 30-50 minutes: between 6 h / 50 min and 6 h / 30 min (+ the first).
        #expect(provider.tokensSigned == issued.count)
        #expect((7...13).contains(provider.tokensSigned), "signed \(provider.tokensSigned)")
    }

    @Test func aClockThatJumpsBackwardsGetsAFreshToken() throws {
        let clock = TestClock()
        let provider = DeveloperTokenProvider(credentials: try credentials(), now: clock.closure)
        let first = provider.current()
        clock.advance(by: -30) // within a minute: still fine
        #expect(provider.current() == first)
        clock.advance(by: -10 * 60) // now the cached iat is 10 minutes in the future
        let second = provider.current()
        #expect(second != first)
        #expect(second.issuedAt <= clock.now)
    }

    @Test func signAtUsesWholeSeconds() throws {
        let provider = DeveloperTokenProvider(credentials: try credentials())
        let token = provider.sign(at: Date(timeIntervalSince1970: 1_700_000_123.999))
        #expect(token.issuedAt == Date(timeIntervalSince1970: 1_700_000_123))
        #expect(JWS.decode(token.jwt)?.claims["iat"] == .int(1_700_000_123))
        #expect(provider.tokensSigned == 0) // sign(at:) does not replace the shared token
    }
}

@Suite struct DeveloperCredentialsTests {
    static let badIdentifiers = ["", "TEAMID123", "TEAMID12345", "teamid1234", "TeamID1234", "TEAMID-234", "TEAMID 234",
                                 "TEAMID_234", "TÉAMID123", "ＴEAMID1234", "TEAMID123\n"]

    @Test(arguments: badIdentifiers)
    func rejectsBadTeamIDs(_ teamID: String) {
        #expect(throws: DeveloperCredentials.Problem.teamID(teamID)) {
            try DeveloperCredentials(teamID: teamID, keyID: sandboxKeyID, key: P256PrivateKey.generate())
        }
    }

    @Test(arguments: badIdentifiers)
    func rejectsBadKeyIDs(_ keyID: String) {
        #expect(throws: DeveloperCredentials.Problem.keyID(keyID)) {
            try DeveloperCredentials(teamID: sandboxTeamID, keyID: keyID, key: P256PrivateKey.generate())
        }
    }

    @Test func teamIDIsCheckedFirst() {
        #expect(throws: DeveloperCredentials.Problem.teamID("bad")) {
            try DeveloperCredentials(teamID: "bad", keyID: "also bad", key: P256PrivateKey.generate())
        }
    }

    @Test func acceptsTenUppercaseLettersAndDigits() throws {
        let creds = try DeveloperCredentials(teamID: "A1B2C3D4E5", keyID: "0123456789", key: P256PrivateKey.generate())
        #expect(creds.teamID == "A1B2C3D4E5")
        #expect(creds.keyID == "0123456789")
    }

    @Test func keyFileProblemsAreReportedAsKeyProblems() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/AuthKey.p8"
        let error = #expect(throws: DeveloperCredentials.Problem.self) {
            try DeveloperCredentials(teamID: sandboxTeamID, keyID: sandboxKeyID, privateKeyFile: missing)
        }
        guard case .key(.unreadable(let path, _)) = error else {
            Issue.record("expected .key(.unreadable), got \(String(describing: error))")
            return
        }
        #expect(path == missing)
        // Identifiers are checked before the file is read.
        #expect(throws: DeveloperCredentials.Problem.keyID("x")) {
            try DeveloperCredentials(teamID: sandboxTeamID, keyID: "x", privateKeyFile: missing)
        }
    }

    @Test func loadsAKeyFile() throws {
        let key = P256PrivateKey.generate()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("twobits-\(UUID().uuidString).p8")
        try Data(key.pkcs8PEM.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let creds = try DeveloperCredentials(teamID: sandboxTeamID, keyID: sandboxKeyID, privateKeyFile: url.path)
        #expect(creds.key.publicKey.pem == key.publicKey.pem)
    }
}

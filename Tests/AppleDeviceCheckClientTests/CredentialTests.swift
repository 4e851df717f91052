import DeviceCheckModel
import Foundation
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

/// Developer-token failures: Apple's 401s, and the one re-sign the client allows itself.
@Suite struct CredentialTests {
    @Test func wrongSigningKeyIsRejectedWith401AfterExactlyOneResign() async throws {
        try await withSandbox { h in
            let tokens = try h.provider(key: P256PrivateKey.generate())
            let client = try h.client(tokens: tokens)
            let device = h.device()
            let first = tokens.current() // the token the call will start with

            await #expect(throws: DeviceCheckError.rejected(status: 401, body: AppleResponseBody.unverifiedAuthorizationToken)) {
                try await client.validate(try h.token(device))
            }
            // Two requests reached the sandbox: the original JWT and one re-signed JWT, both refused.
            #expect(h.calls(.validate) == 2)
            #expect(h.statusCount(401) == 2)
            #expect(tokens.tokensSigned == 2)
            let second = tokens.current()
            #expect(second.jwt != first.jwt)
            #expect(tokens.tokensSigned == 2)
            // Neither verified, so the sandbox counted no developer token as good.
            #expect(h.sandbox.counters.distinctDeveloperTokens == 0)
        }
    }

    @Test func wrongKeyIDIsRejectedWith401() async throws {
        try await withSandbox { h in
            let client = try h.client(tokens: try h.provider(keyID: "WRONGKEY99"))
            await #expect(throws: DeviceCheckError.rejected(status: 401, body: AppleResponseBody.unverifiedAuthorizationToken)) {
                try await client.validate(try h.token(h.device()))
            }
            #expect(h.calls(.validate) == 2)
            #expect(client.tokens.tokensSigned == 2)
        }
    }

    @Test func wrongTeamIDIsRejectedWith401() async throws {
        try await withSandbox { h in
            let client = try h.client(tokens: try h.provider(teamID: "OTHERTEAM1"))
            await #expect(throws: DeviceCheckError.rejected(status: 401, body: AppleResponseBody.unverifiedAuthorizationToken)) {
                try await client.query(try h.token(h.device()))
            }
        }
    }

    @Test func clockTwoHoursBehindIsRejectedAndResigningDoesNotHelp() async throws {
        try await withSandbox { h in
            let tokens = try h.provider(now: { Date().addingTimeInterval(-2 * 3_600) })
            let client = try h.client(tokens: tokens)
            await #expect(throws: DeviceCheckError.rejected(status: 401, body: AppleResponseBody.expiredAuthorizationToken)) {
                try await client.validate(try h.token(h.device()))
            }
            // One re-sign, with the same wrong clock, and then the client gives up.
            #expect(h.calls(.validate) == 2)
            #expect(h.statusCount(401) == 2)
            #expect(tokens.tokensSigned == 2)

            // A second call starts from the cached re-signed token, re-signs once more, and still fails.
            await #expect(throws: DeviceCheckError.rejected(status: 401, body: AppleResponseBody.expiredAuthorizationToken)) {
                try await client.validate(try h.token(h.device()))
            }
            #expect(h.calls(.validate) == 4)
            #expect(tokens.tokensSigned == 3)
        }
    }

    @Test func aStaleCachedTokenIsResignedOnceAndTheCallSucceeds() async throws {
        // Apple's (here: the sandbox's) limit is 10 minutes; the provider would keep a token for 3 hours.
        let clock = TestClock()
        try await withSandbox(maxTokenAgeSeconds: 600, now: clock.closure) { h in
            let tokens = try h.provider(refreshAge: 3 * 3_600...3 * 3_600, now: clock.closure)
            let client = try h.client(tokens: tokens)
            let device = h.device()
            try await client.validate(try h.token(device))
            clock.advance(by: 11 * 60)
            try await client.validate(try h.token(device))
            #expect(h.statusCount(401) == 1)
            #expect(h.statusCount(200) == 2)
            #expect(tokens.tokensSigned == 2)
            #expect(h.sandbox.counters.distinctDeveloperTokens == 2)
        }
    }

    @Test func a401FromAppleIsFollowedByOneResignAndARetry() async throws {
        try await withSandbox { h in
            let client = try h.client()
            h.sandbox.inject(Fault(kind: .status, status: 401, body: AppleResponseBody.unverifiedAuthorizationToken, count: 1))
            try await client.validate(try h.token(h.device()))
            #expect(h.calls(.validate) == 2)
            #expect(client.tokens.tokensSigned == 2)
            #expect(h.sandbox.counters.distinctDeveloperTokens == 1)
        }
    }

    @Test func badJWTIsReportedBeforeABadDeviceToken() async throws {
        // Apple checks the JWT first: a wrong key plus a junk device token is a 401, not "invalid device token".
        try await withSandbox { h in
            let client = try h.client(tokens: try h.provider(key: P256PrivateKey.generate()))
            let junk = try #require(DeviceToken("AAAA"))
            await #expect(throws: DeviceCheckError.rejected(status: 401, body: AppleResponseBody.unverifiedAuthorizationToken)) {
                try await client.validate(junk)
            }
        }
    }
}

import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

/// `AppleDeviceCheckClient` against a real in-process sandbox over loopback HTTP: the happy paths.
@Suite struct ClientTests {
    @Test func validateAcceptsAMintedToken() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let device = h.device()
            try await client.validate(try h.token(device))
            #expect(h.calls(.validate) == 1)
            #expect(h.statusCount(200) == 1)
            #expect(h.sandbox.counters.distinctDeveloperTokens == 1)
        }
    }

    @Test func unknownDeviceTokenIsInvalid() async throws {
        try await withSandbox { h in
            let client = try h.client()
            // Well-formed base64 the sandbox never minted.
            let unknown = try #require(DeviceToken(SecureRandom.bytes(2_000).base64EncodedString()))
            await #expect(throws: DeviceCheckError.invalidDeviceToken) { try await client.validate(unknown) }
            await #expect(throws: DeviceCheckError.invalidDeviceToken) { try await client.query(unknown) }
            await #expect(throws: DeviceCheckError.invalidDeviceToken) { try await client.update(unknown, bits: Bits(bit0: true, bit1: true)) }
            // Not retried: one call each.
            #expect(h.calls(.validate) == 1)
            #expect(h.calls(.query) == 1)
            #expect(h.calls(.update) == 1)
        }
    }

    @Test func nonBase64DeviceTokenNeverReachesAppleAndTheSandboxRefusesIt() async throws {
        // The client cannot even build such a token…
        for text in ["not base64!", "abc def", "ab\ncd", "", "ab-_cd=="] {
            #expect(DeviceToken(text) == nil, "\(text)")
        }
        try await withSandbox { h in
            let client = try h.client()
            // …and a token that is base64 but not one Apple (the sandbox) issued is refused as invalid.
            let short = try #require(DeviceToken("AAAA"))
            await #expect(throws: DeviceCheckError.invalidDeviceToken) { try await client.validate(short) }
        }
    }

    @Test func deviceTokenDescriptionHidesTheToken() throws {
        let text = SecureRandom.bytes(2_000).base64EncodedString()
        let token = try #require(DeviceToken(text))
        #expect(!token.description.contains(text.prefix(16)))
        #expect(token.description.contains(token.shortDigest))
        #expect(token.digest == SHA256Digest.hex(text))
    }

    @Test func queryOfANewDeviceIsNeverSet() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let device = h.device()
            let result = try await client.query(try h.token(device))
            #expect(result == .neverSet)
            #expect(result.state == nil)
        }
    }

    @Test func updateThenQueryReadsBothBitsAndTheCurrentMonth() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let device = h.device()
            let month = YearMonth(containing: Date())

            let transaction = try await client.update(try h.token(device), bits: Bits(bit0: true, bit1: false))
            #expect(UUID(uuidString: transaction) != nil, "transaction id \(transaction)")
            #expect(try await client.query(try h.token(device)) == .state(BitState(bits: Bits(bit0: true, bit1: false), lastUpdated: month)))

            try await client.update(try h.token(device), bits: Bits(bit0: false, bit1: true))
            #expect(try await client.query(try h.token(device)) == .state(BitState(bits: Bits(bit0: false, bit1: true), lastUpdated: month)))

            // An all-false state that was written is a state, not "never set".
            try await client.update(try h.token(device), bits: .clear)
            #expect(try await client.query(try h.token(device)) == .state(BitState(bits: .clear, lastUpdated: month)))

            #expect(h.sandbox.device(device)?.updates == 3)
            // Every update carried both bits, false ones included.
            #expect(h.sandbox.counters.updatesMissingBit == 0)
        }
    }

    @Test func updatesOfOneDeviceDoNotTouchAnother() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let a = h.device()
            let b = h.device()
            try await client.update(try h.token(a), bits: Bits(bit0: true, bit1: true))
            #expect(try await client.query(try h.token(b)) == .neverSet)
            #expect(try await client.query(try h.token(a)).state?.bits == Bits(bit0: true, bit1: true))
        }
    }

    @Test func seededStateIsReadBack() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let device = h.device()
            let month = try #require(YearMonth(year: 2024, month: 2))
            #expect(h.sandbox.seed(device, bits: Bits(bit0: false, bit1: true), lastUpdated: month))
            #expect(try await client.query(try h.token(device)) == .state(BitState(bits: Bits(bit0: false, bit1: true), lastUpdated: month)))

            // Seeding "never set" again makes the query say so, whatever the bits.
            h.sandbox.seed(device, bits: Bits(bit0: true, bit1: true), lastUpdated: nil)
            #expect(try await client.query(try h.token(device)) == .neverSet)
        }
    }

    @Test func tokenMintedForTheOtherEnvironmentIsRejectedWith400() async throws {
        try await withSandbox(environment: .development) { h in
            let client = try h.client()
            let device = h.device()
            let production = try h.token(device, environment: .production)
            let expected = DeviceCheckError.rejected(status: 400, body: AppleResponseBody.badAuthorizationToken)
            await #expect(throws: expected) { try await client.validate(production) }
            await #expect(throws: expected) { try await client.query(production) }
            await #expect(throws: expected) { try await client.update(production, bits: Bits(bit0: true, bit1: true)) }
            // Refused, so nothing was written.
            #expect(h.sandbox.device(device)?.updates == 0)
            // Not retried, and no re-sign for a 400.
            #expect(h.calls(.validate) == 1)
            #expect(client.tokens.tokensSigned == 1)
        }
    }

    /// Once Apple has accepted a developer JWT, Apple's authorization-body 400 for that same JWT can only
    /// mean the device token: one from a build of the other environment. That is the caller's bad input
    /// (400 invalid_device_token), not an operator alarm (502).
    @Test func otherEnvironmentTokenAfterAnAcceptedJWTIsAnInvalidDeviceToken() async throws {
        try await withSandbox(environment: .production) { h in
            let client = try h.client()
            let device = h.device()
            try await client.validate(try h.token(device))
            await #expect(throws: DeviceCheckError.invalidDeviceToken) {
                try await client.validate(try h.token(device, environment: .development))
            }
            // A good token still works: nothing was invalidated.
            try await client.validate(try h.token(device))
            #expect(client.tokens.tokensSigned == 1)
        }
    }

    @Test func documentedNotFoundWordingIsAlsoNeverSet() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let device = h.device()
            h.sandbox.inject(Fault(kind: .status, status: 200, body: AppleResponseBody.bitStateNotFoundDocumented, count: 1, endpoint: "query_two_bits"))
            #expect(try await client.query(try h.token(device)) == .neverSet)
        }
    }

    @Test func clientErrorsOtherThan401AreRejectedWithoutRetry() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let device = h.device()
            h.sandbox.inject(Fault(kind: .status, status: 403, body: "Forbidden", count: 1000))
            await #expect(throws: DeviceCheckError.rejected(status: 403, body: "Forbidden")) { try await client.validate(try h.token(device)) }
            #expect(h.calls(.validate) == 1)
        }
    }
}

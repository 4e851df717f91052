import Foundation
import Testing
import TestSupport
import TwoBitsClient
import TwoBitsCrypto

/// The whole client flow against a real TwoBits service and the sandbox's simulated iPhones, through a relay
/// over HTTP with the main API's key.
@Suite(.serialized) struct ClientFlowTests {
    /// Runs `body` against a fresh service and sandbox, stopped afterwards whatever happened.
    func withHarness(appAttest: Bool = true, appAttestFields: String = "", _ body: (ClientHarness) async throws -> Void) async throws {
        try await withClientHarness(appAttest: appAttest, appAttestFields: appAttestFields, body)
    }

    @Test func attestsOnceThenAsserts() async throws {
        try await withHarness { h in
            let device = try await Device(h)

            let first = try await device.client.token(for: .strong, limitedUse: true)
            #expect(first.tier == .appattest && first.appAttestStatus == nil)
            #expect(claims(first)["tier"] as? String == "appattest" && claims(first)["sub"] as? String == "ios-test-install")
            let key = try #require(await device.keyStore.load())
            #expect(key.artifact?.hasPrefix("aa1.") == true)
            #expect(device.relay.calls("attest") == 1 && device.relay.calls("assert") == 0)

            let second = try await device.client.token(for: .strong, limitedUse: true)
            #expect(second.tier == .appattest && second.value != first.value)
            #expect(device.relay.calls("attest") == 1 && device.relay.calls("assert") == 1)
            #expect(device.appAttest.calls(.generateKey) == 1)
            let shown = try await h.admin("GET", "v1/admin/app-attest/keys/\(key.artifact!)")
            #expect(shown.status == 200 && shown.json["counter"] as? Int == 1, "\(shown.json)")
        }
    }

    @Test func aPayloadIsBoundByItsHashInTheSignedClientData() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong)
            let payload = Data(#"{"amount":100}"#.utf8)
            let bound = try await device.client.token(for: .strong, payload: payload)
            #expect(bound.tier == .appattest)
            let sent = try #require(device.relay.sentAssertions.last)
            let clientData = try JSONSerialization.jsonObject(with: Data(base64Encoded: sent.clientData)!) as! [String: String]
            #expect(clientData["challenge"] == sent.challenge)
            // SHA-256 of {"amount":100}, base64url.
            #expect(clientData["payload_sha256"] == "TUu-Wcaq0iRCzeGZpqil8DRAX814-1qBwk7ySd4cRfE")
            // Bound to one request: never served from the cache.
            let again = try await device.client.token(for: .strong, payload: payload)
            #expect(again.value != bound.value && device.relay.calls("assert") == 2)
        }
    }

    @Test func twentyConcurrentTokensOnOneKeyAllSucceedOneAtATime() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong, limitedUse: true)

            // Each call's tier or error: one failing call must not cancel the others.
            let tiers = await withTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        do { return try await device.client.token(for: .strong, limitedUse: true).tier.rawValue } catch { return "\(error)" }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(tiers == Array(repeating: "appattest", count: 20))
            #expect(device.relay.mostInFlight == 1)
            let artifact = try #require(await device.keyStore.load()?.artifact)
            let shown = try await h.admin("GET", "v1/admin/app-attest/keys/\(artifact)")
            #expect(shown.json["counter"] as? Int == 20, "\(shown.json)")
        }
    }

    @Test func aRestoredDeviceDiscardsItsKeyAndAttestsANewOne() async throws {
        try await withHarness { h in
            let keyStore = InMemoryKeyStore()
            let before = try await Device(h, keyStore: keyStore)
            _ = try await before.client.token(for: .strong)
            let oldKey = try #require(await keyStore.load())

            // The backup restored onto another iPhone: the key store came along, the Secure Enclave's key did not.
            let after = try await Device(h, keyStore: keyStore)
            let token = try await after.client.token(for: .strong, limitedUse: true)
            #expect(token.tier == .appattest)
            #expect(after.appAttest.calls(.generateAssertion) == 1 && after.appAttest.calls(.generateKey) == 1)
            let newKey = try #require(await keyStore.load())
            #expect(newKey.keyID != oldKey.keyID && newKey.artifact != nil && newKey.artifact != oldKey.artifact)
        }
    }

    @Test func aKeyThatStaysInvalidIsReattestedOnceThenFallsBack() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong)
            device.appAttest.fail(.generateAssertion, with: .invalidKey)
            device.appAttest.fail(.attestKey, with: .invalidKey)
            let token = try await device.client.token(for: .any, limitedUse: true)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .attestFailed)
            #expect(device.appAttest.calls(.generateKey) == 2)
        }
    }

    @Test func anUnsupportedDeviceFallsBackToTheDeviceCheckTier() async throws {
        try await withHarness { h in
            let device = try await Device(h, appAttestSupported: false)
            let token = try await device.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .unsupported)
            #expect(claims(token)["tier"] as? String == "devicecheck")
            #expect(device.appAttest.calls(.generateKey) == 0 && device.relay.calls("challenge") == 0)
            #expect(device.relay.sentExchanges.first?.appAttestStatus == .unsupported)

            await #expect(throws: TwoBitsClientError.strongTierUnavailable(.unsupported)) {
                try await device.client.token(for: .strong)
            }
        }
    }

    @Test func aSimulatorUsesItsDebugSecretOrSaysItHasNoTier() async throws {
        try await withHarness { h in
            let bare = try await Device(h, appAttestSupported: false, deviceCheckSupported: false)
            await #expect(throws: TwoBitsClientError.noTierAvailable(.unsupported, deviceCheck: "unsupported")) {
                try await bare.client.token(for: .any)
            }
            let created = try await h.admin("POST", "v1/admin/debug-secrets", ["name": "simulator"])
            let secret = try #require(created.json["debug_secret"] as? String, "\(created.json)")
            let simulator = try await Device(h, appAttestSupported: false, deviceCheckSupported: false) { $0.debugSecret = secret }
            let token = try await simulator.client.token(for: .any)
            #expect(token.tier == .debug && token.appAttestStatus == .unsupported)
        }
    }

    @Test func aBannedDeviceGetsAClearErrorAndNoToken() async throws {
        try await withHarness { h in
            let fallback = try await Device(h, appAttestSupported: false)
            let ban = try await h.admin("POST", "v1/admin/bans",
                                        ["device_token": try await fallback.deviceCheck.generateToken().base64EncodedString(), "reason": "fraud"])
            #expect(ban.status == 200, "\(ban.json)")
            await #expect(throws: TwoBitsClientError.deviceBanned) { try await fallback.client.token(for: .any) }

            // In the strong tier too, when the client attaches its DeviceCheck token.
            let strong = try await Device(h) { $0.attachesDeviceToken = true }
            let banStrong = try await h.admin("POST", "v1/admin/bans",
                                              ["device_token": try await strong.deviceCheck.generateToken().base64EncodedString(), "reason": "fraud"])
            #expect(banStrong.status == 200, "\(banStrong.json)")
            await #expect(throws: TwoBitsClientError.deviceBanned) { try await strong.client.token(for: .any) }
            #expect(strong.relay.calls("exchange") == 0)
            #expect(TwoBitsClientError.deviceBanned.whatToDo.contains("Do not retry"))
        }
    }

    @Test func aRevokedKeyGetsAClearErrorAndNoFallbackToken() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong)
            let artifact = try #require(await device.keyStore.load()?.artifact)
            let revoked = try await h.admin("POST", "v1/admin/app-attest/keys/\(artifact)/revoke", ["reason": "stolen"])
            #expect(revoked.status == 200, "\(revoked.json)")
            await #expect(throws: TwoBitsClientError.keyRevoked) { try await device.client.token(for: .any, limitedUse: true) }
            #expect(device.relay.calls("exchange") == 0 && device.appAttest.calls(.generateKey) == 1)
        }
    }

    @Test func appleThrottlingBacksOffOnTheFallbackTierThenAttests() async throws {
        try await withHarness { h in
            let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
            // base 10 s, random 0.5: the first back-off is 10/2 + 10/2 · 0.5 = 7.5 s, the second (20 s) 15 s.
            let device = try await Device(h, clock: clock) { $0.backoffBase = 10 }
            device.appAttest.fail(.attestKey, with: .serverUnavailable, count: 2)

            let throttled = try await device.client.token(for: .any, limitedUse: true)
            #expect(throttled.tier == .devicecheck && throttled.appAttestStatus == .throttled)
            #expect(device.appAttest.calls(.attestKey) == 1)
            // During the back-off App Attest is not asked again.
            clock.advance(by: 7)
            let waiting = try await device.client.token(for: .any, limitedUse: true)
            #expect(waiting.appAttestStatus == .throttled && device.appAttest.calls(.attestKey) == 1)
            await #expect(throws: TwoBitsClientError.strongTierUnavailable(.throttled)) { try await device.client.token(for: .strong) }

            clock.advance(by: 1)
            let again = try await device.client.token(for: .any, limitedUse: true)
            #expect(again.appAttestStatus == .throttled && device.appAttest.calls(.attestKey) == 2)
            // The second back-off is twice the first.
            clock.advance(by: 14)
            _ = try await device.client.token(for: .any, limitedUse: true)
            #expect(device.appAttest.calls(.attestKey) == 2)
            clock.advance(by: 2)
            let attested = try await device.client.token(for: .strong, limitedUse: true)
            #expect(attested.tier == .appattest && device.appAttest.calls(.attestKey) == 3)
            // The key generated before the throttling was kept and attested: no second key.
            #expect(device.appAttest.calls(.generateKey) == 1)
        }
    }

    @Test func cachedTokensAreReusedUntilTheirExpiryLessTheMarginThenRefreshed() async throws {
        try await withHarness { h in
            let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
            let device = try await Device(h, clock: clock) { $0.expiryMargin = 60 }
            let first = try await device.client.token(for: .strong)
            #expect(first.expiresAt == clock.now.addingTimeInterval(900))
            clock.advance(by: 900 - 61)
            let cached = try await device.client.token(for: .any)
            #expect(cached == first && device.relay.calls("challenge") == 1)
            clock.advance(by: 2)
            let refreshed = try await device.client.token(for: .strong)
            #expect(refreshed.value != first.value && refreshed.tier == .appattest && device.relay.calls("assert") == 1)
        }
    }

    @Test func limitedUseTokensAreNeverCached() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            let reusable = try await device.client.token(for: .strong)
            let limited = try await device.client.token(for: .strong, limitedUse: true)
            let limitedAgain = try await device.client.token(for: .strong, limitedUse: true)
            #expect(limited.limitedUse && limited.value != reusable.value && limitedAgain.value != limited.value)
            #expect(claims(limited)["lim"] as? Bool == true)
            // And a limited-use token never answers a later request for a reusable one.
            #expect(try await device.client.token(for: .strong) == reusable)
        }
    }

    @Test func aServerWithoutAppAttestIsNotEnrolled() async throws {
        try await withHarness(appAttest: false) { h in
            let device = try await Device(h)
            let token = try await device.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .notEnrolled)
        }
    }

    /// `app_attest.rollout`: the challenge carries the install id; outside the rollout, `enroll: false` sends the app
    /// to the DeviceCheck tier as not_enrolled without an attestation; inside, it attests.
    @Test func anInstallOutsideTheRolloutIsNotEnrolledAndOneInsideAttests() async throws {
        // Buckets (AppAttestRolloutTests): "ios-test-install" 3,018, "abc" 8,904; 40 % holds the first only.
        try await withHarness(appAttestFields: #""rollout":40"#) { h in
            let outside = try await Device(h) { $0.installID = "abc" }
            let token = try await outside.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .notEnrolled)
            #expect(outside.relay.sentChallenges == [ChallengeRequest(installID: "abc", purpose: .attestation)])
            #expect(outside.relay.calls("attest") == 0 && outside.appAttest.calls(.attestKey) == 0)
            #expect(outside.relay.sentExchanges.last?.appAttestStatus == .notEnrolled)
            #expect(try await h.fallbackReasonCount("not_enrolled") == 1)
            await #expect(throws: TwoBitsClientError.strongTierUnavailable(.notEnrolled)) { _ = try await outside.client.token(for: .strong, limitedUse: true) }

            let inside = try await Device(h)
            let strong = try await inside.client.token(for: .strong, limitedUse: true)
            #expect(strong.tier == .appattest && inside.relay.calls("attest") == 1)
            #expect(inside.relay.sentChallenges == [ChallengeRequest(installID: "ios-test-install", purpose: .attestation)])
        }
    }

    /// An attested key asserts whatever the rollout answers for it (`enroll` is read for attestations only).
    @Test func anAttestedKeyKeepsAssertingOutsideTheRollout() async throws {
        try await withHarness(appAttestFields: #""rollout":40"#) { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong, limitedUse: true)
            device.relay.challengeInstallID = "abc"
            let asserted = try await device.client.token(for: .any, limitedUse: true)
            #expect(asserted.tier == .appattest && asserted.appAttestStatus == nil)
            #expect(device.relay.answeredChallenges.last?.enroll == false)
            #expect(device.relay.sentChallenges.last?.purpose == .assertion && device.relay.calls("assert") == 1)
        }
    }

    @Test func aRefusedAttestationIsAttestFailed() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            device.appAttest.attestationFault = "wrong_nonce"
            let token = try await device.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .attestFailed)
        }
    }

    @Test func aRefusedAssertionIsAssertFailed() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong, limitedUse: true)
            device.appAttest.assertionFault = "bad_signature"
            let token = try await device.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .assertFailed)
        }
    }

    @Test func anUnreachableAppAttestIsNetwork() async throws {
        try await withHarness { h in
            let device = try await Device(h)
            device.relay.appAttestUnreachable = true
            let token = try await device.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .network)
        }
    }

    @Test func theFallbackReasonReachesTheServerAndIsCounted() async throws {
        try await withHarness { h in
            #expect(try await h.fallbackReasonCount("unsupported") == 0)
            let unsupported = try await Device(h, appAttestSupported: false)
            let token = try await unsupported.client.token(for: .any)
            #expect(token.tier == .devicecheck && unsupported.relay.sentExchanges.first?.appAttestStatus == .unsupported)
            #expect(try await h.fallbackReasonCount("unsupported") == 1)

            let offline = try await Device(h)
            offline.relay.appAttestUnreachable = true
            _ = try await offline.client.token(for: .any)
            #expect(try await h.fallbackReasonCount("network") == 1)
            #expect(try await h.fallbackReasonCount("unsupported") == 1)
        }
    }

    @Test func tokensAreBoundToTheRelaysSessionAndCachedPerSession() async throws {
        try await withHarness { h in
            let relay = h.relay()
            relay.session = "session-of-alice"
            let device = try await Device(h, relay: relay)
            let alice = try await device.client.token(for: .any)
            #expect(alice.tier == .appattest)
            #expect(claims(alice)["bnd"] as? String == SHA256Digest.hash(Data("session-of-alice".utf8)).base64URLEncodedString())
            #expect(try await h.verify(alice, binding: "session-of-alice")["valid"] as? Bool == true)
            let replayed = try await h.verify(alice, binding: "session-of-bob")
            #expect(replayed["valid"] as? Bool == false && replayed["reason"] as? String == "binding_mismatch", "\(replayed)")

            // Another account on the same app: alice's cached token is not handed out; bob gets his own.
            relay.session = "session-of-bob"
            let bob = try await device.client.token(for: .any)
            #expect(bob.value != alice.value && device.relay.calls("assert") == 1)
            #expect(try await h.verify(bob, binding: "session-of-bob")["valid"] as? Bool == true)
            #expect(try await h.verify(bob, binding: "session-of-alice")["reason"] as? String == "binding_mismatch")
            #expect(try await device.client.token(for: .strong) == bob)

            // Back to alice: her token, still cached under her session.
            relay.session = "session-of-alice"
            #expect(try await device.client.token(for: .any) == alice)
            // Signed out: neither session's token, an unbound one.
            relay.session = nil
            let unbound = try await device.client.token(for: .any)
            #expect(unbound.value != alice.value && unbound.value != bob.value && claims(unbound)["bnd"] == nil)

            // The fallback exchange is bound the same way.
            let fallbackRelay = h.relay()
            fallbackRelay.session = "session-of-carol"
            let fallback = try await Device(h, appAttestSupported: false, relay: fallbackRelay)
            let carol = try await fallback.client.token(for: .any)
            #expect(carol.tier == .devicecheck)
            #expect(try await h.verify(carol, binding: "session-of-carol")["valid"] as? Bool == true)
            #expect(try await h.verify(carol, binding: "session-of-dave")["reason"] as? String == "binding_mismatch")
            fallbackRelay.session = "session-of-dave"
            let dave = try await fallback.client.token(for: .any)
            #expect(dave.value != carol.value && fallback.relay.calls("exchange") == 2)
        }
    }
}

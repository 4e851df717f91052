import Foundation
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// The fallback-token service's security decisions through real HTTP on loopback (the Python suite
/// checks the same with PyJWT; these make the mutants of `Tests/mutation/core.json` cost one debug build), and in
/// process: each test runs in both modes (`ServiceHarness.Mode`).
@Suite struct FallbackTokenGuardTests {
    static func exchange(_ h: ServiceHarness, _ fields: String) async throws -> ServiceHarness.Answer {
        try await h.post("/v1/fallback-tokens", "{" + fields + "}", key: "mainapi")
    }

    static func verify(_ h: ServiceHarness, _ token: String, consume: Bool = false) async throws -> ServiceHarness.Answer {
        try await h.post("/v1/fallback-tokens/verify", #"{"token":"\#(token)","consume":\#(consume)}"#, key: "mainapi")
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func aDeviceTokenIsExchangedOnceAndItsReuseIsRefusedWithoutCallingApple(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let device = h.freshDevice()
            let first = try await Self.exchange(h, #""device_token":"\#(device.token)""#)
            #expect(first.status == 201)
            #expect(first.json?["tier"]?.stringValue == "devicecheck")
            let queries = h.sandbox.counters.calls["query_two_bits"] ?? 0
            let again = try await Self.exchange(h, #""device_token":"\#(device.token)""#)
            #expect(again.status == 409)
            #expect(again.code == "device_token_reused")
            #expect((h.sandbox.counters.calls["query_two_bits"] ?? 0) == queries)
            // A fresh token of the same device is fine.
            #expect(try await Self.exchange(h, #""device_token":"\#(h.sandbox.mintToken(for: device.id)!)""#).status == 201)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func aLimitedUseTokenIsConsumedExactlyOnce(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let issued = try await Self.exchange(h, #""device_token":"\#(h.freshDevice().token)","limited_use":true"#)
            let token = try #require(issued.json?["token"]?.stringValue)
            let first = try await Self.verify(h, token, consume: true)
            #expect(first.json?["valid"]?.boolValue == true)
            #expect(first.json?["already_consumed"]?.boolValue == false)
            for _ in 0..<2 {
                let again = try await Self.verify(h, token, consume: true)
                #expect(again.json?["valid"]?.boolValue == true)
                #expect(again.json?["already_consumed"]?.boolValue == true)
            }
            // Verifying without consuming does not consume.
            let other = try #require(try await Self.exchange(h, #""device_token":"\#(h.freshDevice().token)","limited_use":true"#).json?["token"]?.stringValue)
            #expect(try await Self.verify(h, other).json?["already_consumed"]?.boolValue == false)
            #expect(try await Self.verify(h, other, consume: true).json?["already_consumed"]?.boolValue == false)
            // An unlimited token cannot be consumed.
            let unlimited = try #require(try await Self.exchange(h, #""device_token":"\#(h.freshDevice().token)""#).json?["token"]?.stringValue)
            #expect(try await Self.verify(h, unlimited, consume: true).status == 400)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func aBannedDeviceGetsNoToken(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let device = h.freshDevice()
            #expect(try await h.post("/v1/admin/bans", #"{"device_token":"\#(device.token)","reason":"test"}"#, key: "admin").status == 200)
            let refused = try await Self.exchange(h, #""device_token":"\#(h.sandbox.mintToken(for: device.id)!)""#)
            #expect(refused.status == 403)
            #expect(refused.code == "device_banned")
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func debugSecretsIssueDebugTierInDevelopmentOnly(mode: ServiceHarness.Mode) async throws {
        let secret = try await withService(mode: mode) { dev in
            let created = try await dev.post("/v1/admin/debug-secrets", #"{"name":"ci"}"#, key: "admin")
            #expect(created.status == 201)
            let secret = try #require(created.json?["debug_secret"]?.stringValue)
            let issued = try await Self.exchange(dev, #""debug_secret":"\#(secret)""#)
            #expect(issued.status == 201)
            #expect(issued.json?["tier"]?.stringValue == "debug")
            let wrong = try await Self.exchange(dev, #""debug_secret":"\#(secret)x""#)
            #expect(wrong.status == 401)
            #expect(wrong.code == "invalid_debug_secret")
            return secret
        }

        try await withService(.init(apple: ["environment": #""production""#]), mode: mode) { production in
            let refused = try await Self.exchange(production, #""debug_secret":"\#(secret)""#)
            #expect(refused.status == 403)
            #expect(refused.code == "debug_disabled")
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func theJWKSServesOnlyPublicMembers(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let answer = try await h.request("GET", "/.well-known/jwks.json", key: nil)
            #expect(answer.status == 200)
            guard case .array(let keys)? = answer.json?["keys"] else { Issue.record("no keys: \(answer.text)"); return }
            #expect(!keys.isEmpty)
            for key in keys {
                #expect(Set(key.objectValue?.keys.map { $0 } ?? []) == ["kty", "crv", "x", "y", "kid", "use", "alg"])
                #expect(key["d"] == nil, "the private scalar never leaves the server")
            }
            // An issued token names one of these keys.
            let token = try #require(try await Self.exchange(h, #""device_token":"\#(h.freshDevice().token)""#).json?["token"]?.stringValue)
            let header = try? JSONValue.parse(Data(base64URLEncoded: String(token.split(separator: ".")[0])) ?? Data())
            #expect(keys.contains { $0["kid"] == header?["kid"] })
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func onlyTheExactAPIKeyAuthenticates(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let good = try #require(h.keys["admin"])
            #expect(try await h.request("GET", "/v1/admin/audit", key: good).status == 200)
            // The same length and prefix, one character changed; and a key of another client for an admin route.
            var chars = Array(good)
            chars[chars.count - 1] = chars[chars.count - 1] == "A" ? "B" : "A"
            #expect(try await h.request("GET", "/v1/admin/audit", key: String(chars)).status == 401)
            #expect(try await h.request("GET", "/v1/admin/audit", key: "tb_" + SecureRandom.bytes(32).base64URLEncodedString()).status == 401)
            #expect(try await h.request("GET", "/v1/admin/audit", key: "marketing").status == 403)
        }
    }
}

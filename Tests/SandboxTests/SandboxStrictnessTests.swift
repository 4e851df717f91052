import DeviceCheckModel
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// The sandbox must be as strict as Apple, or tests against it prove nothing. Raw HTTP, no Apple client.
@Suite struct SandboxStrictnessTests {
    struct Raw {
        let h: SandboxHarness
        let http = CurlClient(maxConnectionsPerHost: 4, maxTotalConnections: 8)
        let jwt: String

        init(_ h: SandboxHarness) throws {
            self.h = h
            jwt = try h.provider().current().jwt
        }

        func post(_ endpoint: AppleEndpoint, body: String, authorization: String?) async throws -> OutboundResponse {
            var headers = [("Content-Type", "application/json")]
            if let authorization { headers.append(("Authorization", authorization)) }
            return try await http.send(OutboundRequest(method: "POST", url: h.sandbox.baseURL + endpoint.path, headers: headers,
                                                         body: Data(body.utf8), timeoutMilliseconds: 5_000))
        }

        func post(_ endpoint: AppleEndpoint, fields: [String: Any]) async throws -> OutboundResponse {
            let body = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            return try await post(endpoint, body: String(decoding: body, as: UTF8.self), authorization: "Bearer " + jwt)
        }

        func fields(_ token: String, timestamp: Int64 = Int64(Date().timeIntervalSince1970 * 1_000), extra: [String: Any] = [:]) -> [String: Any] {
            var f: [String: Any] = ["device_token": token, "transaction_id": UUID().uuidString, "timestamp": timestamp]
            f.merge(extra) { _, new in new }
            return f
        }
    }

    func withRaw(_ body: (Raw, SandboxHarness) async throws -> Void) async throws {
        try await withSandbox { h in
            let raw = try Raw(h)
            defer { raw.http.shutdown() }
            try await body(raw, h)
        }
    }

    @Test func wellFormedRequestsAreAccepted() async throws {
        try await withRaw { raw, h in
            let token = try #require(h.sandbox.mintToken(for: h.device()))
            let validate = try await raw.post(.validate, fields: raw.fields(token))
            #expect(validate.status == 200)
            #expect(validate.text == "")
            let query = try await raw.post(.query, fields: raw.fields(token))
            #expect(query.status == 200)
            #expect(query.text == AppleResponseBody.bitStateNotFound)
            let update = try await raw.post(.update, fields: raw.fields(token, extra: ["bit0": true, "bit1": false]))
            #expect(update.status == 200)
            let after = try await raw.post(.query, fields: raw.fields(token))
            #expect(after.text == #"{"bit0":true,"bit1":false,"last_update_time":"\#(YearMonth(containing: Date()))"}"#)
        }
    }

    /// The sandbox skips the signature check of a JWT it has already accepted (`VerifiedSignatures`): only
    /// the identical string may skip it, and the clock still applies to it.
    @Test func aJWTAlreadyAcceptedIsStillRefusedWhenTamperedWithOrTooOld() async throws {
        let clock = TestClock()
        try await withSandbox(now: clock.closure) { h in
            let raw = try Raw(h)
            defer { raw.http.shutdown() }
            let token = try #require(h.sandbox.mintToken(for: h.device()))
            func body() throws -> String {
                let fields = raw.fields(token, timestamp: Int64(clock.now.timeIntervalSince1970 * 1_000))
                return String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
            }
            for _ in 0..<2 {
                let accepted = try await raw.post(.validate, body: try body(), authorization: "Bearer " + raw.jwt)
                #expect(accepted.status == 200)
            }
            var pieces = raw.jwt.split(separator: ".").map(String.init)
            var signature = try #require(Data(base64URLEncoded: pieces[2]))
            signature[signature.startIndex + 10] ^= 1
            pieces[2] = signature.base64URLEncodedString()
            let tampered = try await raw.post(.validate, body: try body(), authorization: "Bearer " + pieces.joined(separator: "."))
            #expect(tampered.status == 401)
            #expect(tampered.text == AppleResponseBody.unverifiedAuthorizationToken)

            clock.advance(by: 3_700)
            let old = try await raw.post(.validate, body: try body(), authorization: "Bearer " + raw.jwt)
            #expect(old.status == 401)
            #expect(old.text == AppleResponseBody.expiredAuthorizationToken)
        }
    }

    /// A forgery of an accepted JWT: the very same header and claims, signed by another key. The sandbox has
    /// the good one remembered (`VerifiedSignatures`) and must still check this one's signature.
    @Test func theSameHeaderAndClaimsSignedByAnotherKeyAreRefusedAfterTheRightOne() async throws {
        try await withRaw { raw, h in
            let token = try #require(h.sandbox.mintToken(for: h.device()))
            let body = String(decoding: try JSONSerialization.data(withJSONObject: raw.fields(token)), as: UTF8.self)
            let accepted = try await raw.post(.validate, body: body, authorization: "Bearer " + raw.jwt)
            #expect(accepted.status == 200)
            let pieces = raw.jwt.split(separator: ".").map(String.init)
            let header = try #require(Data(base64URLEncoded: pieces[0]))
            let claims = try #require(Data(base64URLEncoded: pieces[1]))
            let forged = JWS.sign(headerJSON: header, claimsJSON: claims, signer: ES256Signer(key: P256PrivateKey.generate()))
            #expect(forged.split(separator: ".").prefix(2) == raw.jwt.split(separator: ".").prefix(2))
            let refused = try await raw.post(.validate, body: body, authorization: "Bearer " + forged)
            #expect(refused.status == 401)
            #expect(refused.text == AppleResponseBody.unverifiedAuthorizationToken)
        }
    }

    @Test func missingAuthorizationIs400WithApplesBody() async throws {
        try await withRaw { raw, h in
            let token = try #require(h.sandbox.mintToken(for: h.device()))
            let body = String(decoding: try JSONSerialization.data(withJSONObject: raw.fields(token)), as: UTF8.self)
            for endpoint in AppleEndpoint.allCases {
                let response = try await raw.post(endpoint, body: body, authorization: nil)
                #expect(response.status == 400)
                #expect(response.text == "Missing or badly formatted authorization token")
            }
            for bad in ["Bearer", "Bearer ", "Bearer not.a.jwt", "Basic dXNlcjpwYXNz", raw.jwt, "bearer " + raw.jwt] {
                let response = try await raw.post(.validate, body: body, authorization: bad)
                #expect(response.status == 400, "\(bad.prefix(20))")
                #expect(response.text == "Missing or badly formatted authorization token")
            }
        }
    }

    @Test func jwtWithAnotherAlgorithmIsMalformed() async throws {
        try await withRaw { raw, h in
            let token = try #require(h.sandbox.mintToken(for: h.device()))
            let signer = ES256Signer(key: h.key)
            let claims = #"{"iss":"\#(sandboxTeamID)","iat":\#(Int(Date().timeIntervalSince1970))}"#
            let hs256 = JWS.sign(headerJSON: Data(#"{"alg":"HS256","kid":"\#(sandboxKeyID)"}"#.utf8), claimsJSON: Data(claims.utf8), signer: signer)
            let body = String(decoding: try JSONSerialization.data(withJSONObject: raw.fields(token)), as: UTF8.self)
            let response = try await raw.post(.validate, body: body, authorization: "Bearer " + hs256)
            #expect(response.status == 400)
            #expect(response.text == AppleResponseBody.badAuthorizationToken)
        }
    }

    @Test func timestampInSecondsIs400() async throws {
        try await withRaw { raw, h in
            let token = try #require(h.sandbox.mintToken(for: h.device()))
            let seconds = Int64(Date().timeIntervalSince1970)
            for endpoint in AppleEndpoint.allCases {
                let response = try await raw.post(endpoint, fields: raw.fields(token, timestamp: seconds, extra: ["bit0": true, "bit1": true]))
                #expect(response.status == 400)
                #expect(response.text == "Missing or incorrectly formatted time stamp")
            }
            // A string, a missing field, or a time two hours off are refused the same way.
            var asString = raw.fields(token)
            asString["timestamp"] = String(Int64(Date().timeIntervalSince1970 * 1_000))
            var missing = raw.fields(token)
            missing.removeValue(forKey: "timestamp")
            let stale = raw.fields(token, timestamp: Int64(Date().addingTimeInterval(-7_200).timeIntervalSince1970 * 1_000))
            for fields in [asString, missing, stale] {
                let response = try await raw.post(.validate, fields: fields)
                #expect(response.status == 400)
                #expect(response.text == AppleResponseBody.badTimestamp)
            }
        }
    }

    @Test func bitsAsStringsAre400() async throws {
        try await withRaw { raw, h in
            let device = h.device()
            let token = try #require(h.sandbox.mintToken(for: device))
            for extra: [String: Any] in [["bit0": "true", "bit1": "false"], ["bit0": true, "bit1": "false"], ["bit0": 1, "bit1": 0]] {
                let response = try await raw.post(.update, fields: raw.fields(token, extra: extra))
                #expect(response.status == 400, "\(extra)")
                #expect(response.text == "Missing or incorrectly formatted bits")
            }
            #expect(h.sandbox.device(device)?.updates == 0)
            #expect(h.sandbox.device(device)?.lastUpdated == nil)
        }
    }

    @Test func anUpdateWithoutBit1IsCounted() async throws {
        try await withRaw { raw, h in
            let device = h.device()
            let token = try #require(h.sandbox.mintToken(for: device))
            h.sandbox.seed(device, bits: Bits(bit0: false, bit1: true), lastUpdated: nil)
            let response = try await raw.post(.update, fields: raw.fields(token, extra: ["bit0": true]))
            #expect(response.status == 200)
            #expect(h.sandbox.counters.updatesMissingBit == 1)
            // The bit left out keeps its old value.
            #expect(h.sandbox.device(device)?.bits == Bits(bit0: true, bit1: true))

            // Misspelled field names are not bits at all (the "bit_0" bug): counted as missing too.
            let misspelled = try await raw.post(.update, fields: raw.fields(token, extra: ["bit_0": false, "bit_1": false]))
            #expect(misspelled.status == 200)
            #expect(h.sandbox.counters.updatesMissingBit == 2)
            #expect(h.sandbox.device(device)?.bits == Bits(bit0: true, bit1: true))
        }
    }

    @Test func getOnAnAppleEndpointIs405() async throws {
        try await withRaw { raw, h in
            for endpoint in AppleEndpoint.allCases {
                let response = try await raw.http.send(OutboundRequest(method: "GET", url: h.sandbox.baseURL + endpoint.path,
                                                                         headers: [("Authorization", "Bearer " + raw.jwt)]))
                #expect(response.status == 405)
                #expect(response.text == AppleResponseBody.methodNotAllowed)
            }
            let unknown = try await raw.http.send(OutboundRequest(method: "POST", url: h.sandbox.baseURL + "/v1/query_three_bits"))
            #expect(unknown.status == 404)
        }
    }

    @Test func missingDeviceTokenIs400WithApplesBody() async throws {
        try await withRaw { raw, h in
            for fields: [String: Any] in [["transaction_id": "t", "timestamp": Int64(Date().timeIntervalSince1970 * 1_000)],
                                          raw.fields(""), raw.fields("bm90IG1pbnRlZA==")] {
                let response = try await raw.post(.validate, fields: fields)
                #expect(response.status == 400)
                #expect(response.text == AppleResponseBody.badDeviceToken)
            }
            let notJSON = try await raw.post(.validate, body: "device_token=abc", authorization: "Bearer " + raw.jwt)
            #expect(notJSON.status == 400)
            #expect(notJSON.text == AppleResponseBody.badDeviceToken)
        }
    }
}

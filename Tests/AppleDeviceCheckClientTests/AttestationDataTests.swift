import AppAttest
import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// `AppleDeviceCheckClient.attestationData` against the sandbox's `POST /v1/attestationData` over loopback:
/// every status Apple documents, the receipts it answers with, and the risk metric of a simulated device farm.
/// Keys are made and attested through the control API, as the Python suites and the refresher's tests do.
@Suite struct AttestationDataTests {
    static let appID = sandboxTeamID + ".com.example.receipts"

    struct AttestedKey {
        let keyID: String
        let receipt: Data
        let publicKey: Data
    }

    /// A key generated and attested on the sandbox (on `deviceID`'s simulated phone if given).
    static func attestedKey(_ h: SandboxHarness, environment: String = "development", deviceID: String? = nil) async throws -> AttestedKey {
        let device = deviceID.map { #","device_id":"\#($0)""# } ?? ""
        let created = try await h.control("POST", "/sandbox/v1/app-attest/keys",
                                                             #"{"app_id":"\#(appID)","environment":"\#(environment)"\#(device)}"#)
        let keyID = try #require(created.json?["key_id"]?.stringValue)
        let hash = SHA256Digest.hash(Data("challenge".utf8)).base64EncodedString()
        let attested = try await h.control("POST", "/sandbox/v1/app-attest/attestations",
                                                              #"{"key_id":"\#(keyID)","client_data_hash":"\#(hash)"}"#)
        #expect(attested.status == 200)
        let receipt = try #require(attested.json?["receipt"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        let publicKey = try #require(attested.json?["public_key"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        return AttestedKey(keyID: keyID, receipt: receipt, publicKey: publicKey)
    }

    static func verify(_ h: SandboxHarness, _ receipt: Data, _ key: AttestedKey, at time: Date = Date()) throws -> VerifiedReceipt {
        try h.sandbox.appAttestAuthority.receiptAuthority.verifier.verify(receipt, appID: appID, publicKey: key.publicKey, at: time, freshness: 300)
    }

    static func calls(_ h: SandboxHarness) -> Int { h.sandbox.counters.calls[AppleSandbox.attestationDataEndpoint] ?? 0 }

    @Test func anAttestReceiptIsExchangedForAReceiptWithTheMetric() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let key = try await Self.attestedKey(h)
            let attest = try Self.verify(h, key.receipt, key)
            #expect(attest.type == .attest)
            guard case .receipt(let fresh) = await client.attestationData(receipt: key.receipt) else { Issue.record("no receipt"); return }
            let refreshed = try Self.verify(h, fresh, key)
            #expect(refreshed.type == .receipt)
            #expect(refreshed.riskMetric == 1)
            #expect(refreshed.token == attest.token)
            #expect(refreshed.clientHash.count == 54)
            #expect(refreshed.notBefore == refreshed.creation + 86_400)
            #expect(refreshed.expiration == refreshed.creation + 90 * 86_400)
            #expect(Self.calls(h) == 1)
        }
    }

    @Test func beforeNotBeforeIs304AndADayLaterIsAReceipt() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let key = try await Self.attestedKey(h)
            guard case .receipt(let first) = await client.attestationData(receipt: key.receipt) else { Issue.record("no receipt"); return }
            #expect(await client.attestationData(receipt: first) == .notModified)
            // A day later (the fraud service's clock, moved through the control API).
            let moved = try await h.control("PUT", "/sandbox/v1/app-attest/clock", #"{"offset_seconds":86401}"#)
            #expect(moved.status == 200 && moved.json?["offset_seconds"]?.intValue == 86_401)
            guard case .receipt(let second) = await client.attestationData(receipt: first) else { Issue.record("no receipt a day later"); return }
            let verified = try Self.verify(h, second, key, at: Date() + 86_401)
            #expect(verified.type == .receipt)
            #expect(Self.calls(h) == 3)
        }
    }

    @Test func noDataAfterThirtyQuietDaysOrPastExpiry() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let key = try await Self.attestedKey(h)
            h.sandbox.appAttestClockOffset = 31 * 86_400
            #expect(await client.attestationData(receipt: key.receipt) == .noData)
            h.sandbox.appAttestClockOffset = 91 * 86_400
            #expect(await client.attestationData(receipt: key.receipt) == .noData)
            // Within 30 days it is still there.
            h.sandbox.appAttestClockOffset = 29 * 86_400
            if case .receipt = await client.attestationData(receipt: key.receipt) {} else { Issue.record("no receipt after 29 days") }
        }
    }

    @Test func aReceiptOfTheOtherEnvironmentIsIncorrectEnvironment() async throws {
        try await withSandbox { h in
            let key = try await Self.attestedKey(h, environment: "production")
            #expect(await (try h.client()).attestationData(receipt: key.receipt) == .incorrectEnvironment)
        }
    }

    @Test func anythingButAReceiptIsBadPayload() async throws {
        try await withSandbox { h in
            let client = try h.client()
            #expect(await client.attestationData(receipt: Data("not a receipt".utf8)) == .badPayload)
            // A receipt signed by another authority (not Apple's, here not the sandbox's).
            let stranger = ReceiptAuthority()
            let key = try await Self.attestedKey(h)
            let signed = try CMSSignedData(key.receipt)
            #expect(await client.attestationData(receipt: stranger.sign(payload: signed.content)) == .badPayload)
            // A raw DER body, not base64 (what the forums saw refused).
            let raw = try await Self.post(h, body: key.receipt, authorization: try h.provider().current().jwt)
            #expect(raw == 400)
        }
    }

    @Test func anUnverifiableTokenIsUnauthorizedAndTheBearerFormIsRefused() async throws {
        try await withSandbox { h in
            let key = try await Self.attestedKey(h)
            let stranger = try h.client(tokens: try h.provider(key: P256PrivateKey.generate()))
            #expect(await stranger.attestationData(receipt: key.receipt) == .unauthorized)
            let jwt = try h.provider().current().jwt
            #expect(try await Self.post(h, body: Data(key.receipt.base64EncodedString().utf8), authorization: "Bearer " + jwt) == 401)
            #expect(try await Self.post(h, body: Data(key.receipt.base64EncodedString().utf8), authorization: jwt) == 200)
        }
    }

    @Test func faultsPlay429And5xxAndANonBase64Answer() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let key = try await Self.attestedKey(h)
            h.sandbox.inject(Fault(kind: .status, status: 429, endpoint: AppleSandbox.attestationDataEndpoint))
            #expect(await client.attestationData(receipt: key.receipt) == .throttled)
            h.sandbox.inject(Fault(kind: .status, status: 503, endpoint: AppleSandbox.attestationDataEndpoint))
            #expect(await client.attestationData(receipt: key.receipt) == .unavailable("server error 503"))
            h.sandbox.inject(Fault(kind: .status, status: 200, body: "<html>not base64</html>", endpoint: AppleSandbox.attestationDataEndpoint))
            #expect(await client.attestationData(receipt: key.receipt) == .unavailable("200 with a body that is not base64"))
            // The same faults through the control API accept the endpoint's name.
            let injected = try await h.control("POST", "/sandbox/v1/faults",
                                                                  #"{"kind":"status","status":500,"count":1,"endpoint":"attestation_data"}"#)
            #expect(injected.status == 201)
            #expect(await client.attestationData(receipt: key.receipt) == .unavailable("server error 500"))
            #expect(Self.calls(h) == 4)
        }
    }

    /// Each attempt is reported as DeviceCheck's are (issue 35): endpoint `attestation_data`, its outcome, its time.
    @Test func eachAttemptIsObservedWithItsOutcome() async throws {
        try await withSandbox { h in
            let observer = RecordingObserver()
            let client = try h.client(observer: observer)
            let key = try await Self.attestedKey(h)
            guard case .receipt(let fresh) = await client.attestationData(receipt: key.receipt) else { Issue.record("no receipt"); return }
            _ = await client.attestationData(receipt: fresh)
            for (status, body) in [(429, nil), (503, nil), (200, "<html>not base64</html>")] as [(Int, String?)] {
                h.sandbox.inject(Fault(kind: .status, status: status, body: body, endpoint: AppleSandbox.attestationDataEndpoint))
                _ = await client.attestationData(receipt: key.receipt)
            }
            _ = await client.attestationData(receipt: Data("not a receipt".utf8))
            h.sandbox.appAttestClockOffset = 91 * 86_400
            _ = await client.attestationData(receipt: key.receipt)
            #expect(observer.outcomes == ["ok", "not_modified", "throttled", "server_error", "unparseable", "rejected", "no_data"], "\(observer.summary)")
            #expect(observer.endpoints == ["attestation_data"])
            let production = try await Self.attestedKey(h, environment: "production")
            _ = await client.attestationData(receipt: production.receipt)
            #expect(observer.outcomes.last == "incorrect_environment")
        }
    }

    @Test func aDeviceFarmsMetricCountsItsKeys() async throws {
        try await withSandbox { h in
            let client = try h.client()
            let farm = h.device()
            var keys: [AttestedKey] = []
            for _ in 0..<5 { keys.append(try await Self.attestedKey(h, deviceID: farm)) }
            let honest = try await Self.attestedKey(h, deviceID: h.device())
            guard case .receipt(let farmReceipt) = await client.attestationData(receipt: keys[0].receipt),
                  case .receipt(let honestReceipt) = await client.attestationData(receipt: honest.receipt) else { Issue.record("no receipt"); return }
            #expect(try Self.verify(h, farmReceipt, keys[0]).riskMetric == 5)
            #expect(try Self.verify(h, honestReceipt, honest).riskMetric == 1)
        }
    }

    @Test func applesDeviceCheckHostsMapToTheirDataHostsAndTheSandboxToItself() {
        #expect(AppleClientConfiguration(baseURL: AppleEnvironment.production.baseURL).appAttestDataBaseURL == "https://data.appattest.apple.com")
        #expect(AppleClientConfiguration(baseURL: AppleEnvironment.development.baseURL + "/").appAttestDataBaseURL
            == "https://data-development.appattest.apple.com")
        #expect(AppleClientConfiguration(baseURL: "http://127.0.0.1:9/").appAttestDataBaseURL == "http://127.0.0.1:9")
        #expect(AppleClientConfiguration(baseURL: "http://127.0.0.1:9", appAttestDataBaseURL: "http://127.0.0.1:10/").appAttestDataBaseURL
            == "http://127.0.0.1:10")
    }

    /// One raw call to the endpoint, for what the client never sends.
    static func post(_ h: SandboxHarness, body: Data, authorization: String) async throws -> Int {
        try await SandboxHarness.controlClient.send(OutboundRequest(method: "POST", url: h.sandbox.baseURL + "/v1/attestationData",
                                                                   headers: [("Authorization", authorization)], body: body, timeoutMilliseconds: 5_000)).status
    }
}

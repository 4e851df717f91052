import AppAttest
import FoundationEssentials
import HTTPServer
import Ledger
import TwoBitsCrypto
import UseCases
import WireFormats
import WireVocabulary

/// The strong tier (docs/app-attest.md): challenges, attestations and assertions (role `tokens`, as the
/// fallback exchange), and the admin's view and revocation of a key.
struct AppAttestController: Sendable {
    /// Nil when the configuration has no `app_attest` section.
    let exchange: AppAttestExchange?
    /// The challenge's `enroll` (rollout and attestation cap); nil with the strong tier off.
    let enrollment: AppAttestEnrollment?
    /// Each key's receipt and risk metric, for admins.
    let receipts: any AppAttestReceiptStore

    /// `replicas`: the live replica count, whose share of `app_attest.max_attestations_per_second` this replica allows.
    init(exchange: AppAttestExchange?, replicas: LiveReplicas, receipts: any AppAttestReceiptStore) {
        self.exchange = exchange
        self.receipts = receipts
        enrollment = exchange.map { AppAttestEnrollment(settings: $0.settings, replicas: replicas) }
    }

    private func enabled() throws(APIError) -> AppAttestExchange {
        guard let exchange else { throw .notEnabled("App Attest is off; add an \"app_attest\" section to the configuration (docs/app-attest.md)") }
        return exchange
    }

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/app-attest/challenges", .role(.tokens)) { request throws(APIError) in
            let exchange = try enabled()
            // Older apps post `{}` or nothing: every field is optional.
            let body = request.http.body.isEmpty ? RequestBody(fields: [:]) : try request.jsonBody()
            try body.allowOnly(["install_id", "purpose"])
            let installID = try body.installID()
            var purpose = AppAttestEnrollment.Purpose.attestation
            if let text = try body.optionalString("purpose") {
                guard let named = AppAttestEnrollment.Purpose(rawValue: text) else {
                    throw .badRequest("purpose must be one of " + AppAttestEnrollment.Purpose.allCases.map(\.rawValue).joined(separator: ", "))
                }
                purpose = named
            }
            // Decided first, because binding: a challenge answered `enroll: false` (or asked for an assertion) is
            // stored as good for assertions only, and never admits an attestation. A storage failure (503) after
            // this costs one attestation's room under the cap.
            let enroll = enrollment?.enroll(installID: installID, purpose: purpose) ?? true
            let challenge: IssuedChallenge
            if purpose == .requestProof {
                // Its own kind: serves one request proof, never an attestation or a token's assertion (RequestProofService).
                do throws(RequestProofError) { challenge = try await RequestProofService(exchange: exchange).challenge() } catch { throw APIError(error) }
            } else {
                do throws(AppAttestExchangeError) {
                    challenge = try await exchange.challenge(forAttestation: enroll && purpose == .attestation)
                } catch { throw APIError(error, step: .challenge) }
            }
            struct Answer: Encodable { let challenge: String; let expires_in: Int; let enroll: Bool }
            return .json(201, Answer(challenge: challenge.value, expires_in: max(0, Int(challenge.expiresAt.timeIntervalSinceNow.rounded())),
                                     enroll: enroll))
        }

        routes.add("POST", "/v1/app-attest/attestations", .role(.tokens)) { request throws(APIError) in
            let exchange = try enabled()
            let body = try request.jsonBody()
            try body.allowOnly(["key_id", "attestation_object", "challenge", "device_token", "install_id", "limited_use", "binding"])
            let attestation = try Self.bytes(body, "attestation_object")
            let input = try Self.request(body, keyID: try body.string("key_id"), client: request.clientName)
            let issue: AppAttestIssue
            do throws(AppAttestExchangeError) {
                issue = try await exchange.attest(input, attestationObject: attestation)
            } catch { throw APIError(error, step: .attestation) }
            return Self.answer(201, issue)
        }

        routes.add("POST", "/v1/app-attest/assertions", .role(.tokens)) { request throws(APIError) in
            let exchange = try enabled()
            let body = try request.jsonBody()
            try body.allowOnly(["key_id", "artifact", "assertion", "client_data", "challenge", "device_token", "install_id", "limited_use",
                                "binding"])
            let keyID: String
            switch (try body.optionalString("key_id"), try body.optionalString("artifact")) {
            case (let id?, nil): keyID = id
            case (nil, let artifact?):
                // Not one of ours: no key has it (401 key_unknown), as for a key id never attested.
                keyID = AppAttestArtifact(artifact)?.keyID ?? ""
            default: throw .badRequest("give exactly one of key_id or artifact")
            }
            let assertion = try Self.bytes(body, "assertion")
            let clientData = try Self.bytes(body, "client_data")
            let input = try Self.request(body, keyID: keyID, client: request.clientName)
            let issue: AppAttestIssue
            do throws(AppAttestExchangeError) {
                issue = try await exchange.assert(input, assertion: assertion, clientData: clientData)
            } catch { throw APIError(error, step: .assertion) }
            return Self.answer(200, issue)
        }

        routes.add("GET", "/v1/admin/app-attest/keys/{key}", .role(.admin)) { request throws(APIError) in
            let exchange = try enabled()
            guard let keyID = Self.keyID(inPath: request.parameter("key")) else { throw Self.noSuchKey }
            let found: AppAttestKeyRecord?
            do throws(AppAttestError) { found = try await exchange.service.key(id: keyID) } catch { throw APIError(.appAttest(error), step: .assertion) }
            guard let key = found else { throw Self.noSuchKey }
            return .json(200, KeyView(key, try await receiptState(key.keyID)))
        }

        routes.add("GET", "/v1/admin/app-attest/keys", .role(.admin)) { request throws(APIError) in
            _ = try enabled()
            let query = request.http.query
            try Self.allowOnly(query, ["min_risk_metric", "limit", "after"])
            var minimum = 0
            if let text = query["min_risk_metric"] {
                guard let value = Int(text), (0...1_000_000).contains(value) else { throw .badRequest("min_risk_metric must be 0-1000000") }
                minimum = value
            }
            var limit = 50
            if let text = query["limit"] {
                guard let value = Int(text), (1...500).contains(value) else { throw .badRequest("limit must be 1-500") }
                limit = value
            }
            var after: String?
            if let text = query["after"] {
                guard let keyID = Self.keyID(inPath: text) else { throw .badRequest("after must be a key id in base64url, as next_after gave it") }
                after = keyID
            }
            let page: [(key: AppAttestKeyRecord, receipt: AppAttestReceiptState)]
            do throws(StorageError) { page = try await receipts.appAttestKeyReceipts(minRiskMetric: minimum, after: after, limit: limit) } catch {
                throw APIError.storageUnavailable(error)
            }
            let views = page.map { KeyView($0.key, $0.receipt) }
            struct Page: Encodable { let keys: [KeyView]; let next_after: String? }
            let next = page.count == limit ? page.last.flatMap { Data(base64Encoded: $0.key.keyID)?.base64URLEncodedString() } : nil
            return .json(200, Page(keys: views, next_after: next))
        }

        routes.add("POST", "/v1/admin/app-attest/keys/{key}/revoke", .role(.admin)) { request throws(APIError) in
            let exchange = try enabled()
            guard let keyID = Self.keyID(inPath: request.parameter("key")) else { throw Self.noSuchKey }
            let body = try request.jsonBody()
            try body.allowOnly(["reason"])
            let reason = try body.reason(required: true) ?? ""
            let revoked: Bool
            do throws(AppAttestExchangeError) { revoked = try await exchange.revoke(keyID: keyID, reason: reason, client: request.clientName) } catch {
                throw APIError(error, step: .assertion)
            }
            guard revoked else { throw Self.noSuchKey }
            let found: AppAttestKeyRecord?
            do throws(AppAttestError) { found = try await exchange.service.key(id: keyID) } catch { throw APIError(.appAttest(error), step: .assertion) }
            guard let key = found else { throw Self.noSuchKey }
            return .json(200, KeyView(key, try await receiptState(key.keyID)))
        }
    }

    private func receiptState(_ keyID: String) async throws(APIError) -> AppAttestReceiptState? {
        do throws(StorageError) { return try await receipts.appAttestReceiptState(keyID: keyID) } catch { throw APIError.storageUnavailable(error) }
    }

    private static func allowOnly(_ query: [String: String], _ names: Set<String>) throws(APIError) {
        if let unknown = query.keys.sorted().first(where: { !names.contains($0) }) { throw .badRequest("unknown query parameter \(unknown)") }
    }

    static let noSuchKey = APIError(404, .notFound, "no attested key with this id (give its artifact, or its key id in base64url)")

    /// The fields both requests share besides the App Attest bytes.
    private static func request(_ body: RequestBody, keyID: String, client: String) throws(APIError) -> AppAttestRequest {
        let challenge = try body.string("challenge")
        let deviceToken = body.fields["device_token"] == nil ? nil : try body.deviceToken()
        return AppAttestRequest(keyID: keyID, challenge: challenge, deviceToken: deviceToken, installID: try body.installID(),
                                limitedUse: try body.optionalBool("limited_use") ?? false, binding: try body.binding(), client: client)
    }

    /// A base64 field (standard or URL alphabet, padded or not), as the app sends what iOS returned.
    private static func bytes(_ body: RequestBody, _ field: String) throws(APIError) -> Data {
        let text = try body.string(field)
        guard !text.isEmpty, let data = Data(base64Encoded: text) ?? Data(base64URLEncoded: text) else { throw .badRequest("\(field) must be base64") }
        return data
    }

    /// A key in a path: the artifact, or the key id in base64url (a standard base64 id holds `/`); a
    /// percent-encoded standard id works too. Nil for anything else: no key has such an id.
    static func keyID(inPath text: String) -> String? {
        if let artifact = AppAttestArtifact(text) { return artifact.keyID }
        let decoded = text.replacing("%2F", with: "/").replacing("%2f", with: "/").replacing("%2B", with: "+").replacing("%2b", with: "+")
            .replacing("%3D", with: "=").replacing("%3d", with: "=")
        guard let bytes = Data(base64URLEncoded: decoded) ?? Data(base64Encoded: decoded), bytes.count == 32 else { return nil }
        return bytes.base64EncodedString()
    }

    private static func answer(_ status: Int, _ issue: AppAttestIssue) -> ServerResponse {
        struct Answer: Encodable {
            let token: String; let token_type = "Bearer"; let tier: String; let expires_in: Int; let artifact: String; let counter: UInt32
        }
        return .json(status, Answer(token: issue.token.token, tier: issue.token.tier.rawValue, expires_in: issue.token.expiresIn,
                                    artifact: issue.artifact, counter: issue.counter))
    }

    /// An attested key as admins see it (the receipt's size, not its bytes).
    struct KeyView: Encodable {
        let key_id: String
        let artifact: String
        let app_id: String
        let environment: String
        let counter: UInt32
        let validation_category: String?
        let first_seen: String
        let receipt_bytes: Int
        let revoked: Bool
        let revoked_at: String?
        let revoked_reason: String?
        let risk_metric: Int?
        let risk_metric_at: String?
        let risk_history: [Sample]
        let receipt_not_before: String?
        let receipt_expires_at: String?
        let receipt_stopped_at: String?

        struct Sample: Encodable { let metric: Int; let at: String }

        init(_ key: AppAttestKeyRecord, _ receipt: AppAttestReceiptState?) {
            key_id = key.keyID
            artifact = AppAttestArtifact.value(forKeyID: key.keyID)
            app_id = key.appID
            environment = key.environment.rawValue
            counter = key.counter
            validation_category = key.validationCategory.map { ValidationCategory(rawValue: $0).name }
            first_seen = AdminController.iso(key.firstSeen)
            receipt_bytes = key.receipt.count
            revoked = key.isRevoked
            revoked_at = key.revokedAt.map(AdminController.iso)
            revoked_reason = key.revokedReason
            risk_metric = receipt?.riskMetric
            risk_metric_at = receipt?.riskMetricAt.map(AdminController.iso)
            risk_history = (receipt?.history ?? []).map { Sample(metric: $0.metric, at: AdminController.iso($0.at)) }
            receipt_not_before = receipt?.notBefore.map(AdminController.iso)
            receipt_expires_at = receipt?.expiresAt.map(AdminController.iso)
            receipt_stopped_at = receipt?.stoppedAt.map(AdminController.iso)
        }
    }
}

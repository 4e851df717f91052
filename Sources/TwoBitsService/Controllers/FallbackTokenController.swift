import DeviceCheckModel
import FoundationEssentials
import HTTPServer
import TokenSigning
import UseCases

/// Fallback-tier tokens: exchange and verify (role `tokens`), the JWKS (public), and debug secrets (role `admin`).
struct FallbackTokenController: Sendable {
    /// Both nil when the configuration has no `tokens` section.
    let exchange: TokenExchangeService?
    let debugSecrets: DebugSecretService?

    private func enabled<Service>(_ service: Service?) throws(APIError) -> Service {
        guard let service else { throw .notEnabled("fallback tokens are off; add a \"tokens\" section to the configuration (docs/configuration.md)") }
        return service
    }

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/fallback-tokens", .role(.tokens)) { request throws(APIError) in
            let service = try enabled(exchange)
            let body = try request.jsonBody()
            try body.allowOnly(["device_token", "debug_secret", "install_id", "limited_use", "binding", "app_attest_status"])
            let installID = try body.installID()
            let limitedUse = try body.optionalBool("limited_use") ?? false
            let binding = try body.binding()
            let fallbackReason = try body.appAttestStatus()
            let credential: ExchangeCredential
            switch (body.fields["device_token"] != nil, try body.optionalString("debug_secret")) {
            case (true, nil): credential = .deviceToken(try body.deviceToken())
            case (false, let secret?): credential = .debugSecret(secret)
            default: throw .badRequest("give exactly one of device_token or debug_secret")
            }
            let issued: IssuedToken
            do throws(ExchangeError) {
                issued = try await service.exchange(credential, installID: installID, limitedUse: limitedUse, binding: binding,
                                                    fallbackReason: fallbackReason, client: request.clientName)
            } catch { throw APIError(error) }
            // Written directly: this is the hot route. The token is base64url and dots; the tier a fixed word.
            let answer = #"{"expires_in":"# + String(issued.expiresIn) + #","tier":""# + issued.tier.rawValue
                + #"","token":""# + issued.token + #"","token_type":"Bearer"}"#
            return ServerResponse(status: 201, headers: [("Content-Type", "application/json")], body: Data(answer.utf8))
        }

        routes.add("POST", "/v1/fallback-tokens/verify", .role(.tokens)) { request throws(APIError) in
            let service = try enabled(exchange)
            let body = try request.jsonBody()
            try body.allowOnly(["token", "consume", "binding"])
            let token = try body.string("token")
            let consume = try body.optionalBool("consume") ?? false
            let binding = try body.binding()
            let outcome: VerifyOutcome
            do throws(VerifyError) { outcome = try await service.verify(token, binding: binding, consume: consume) } catch { throw APIError(error) }
            switch outcome {
            case .valid(let claims, let alreadyConsumed):
                struct Answer: Encodable { let valid: Bool; let claims: FallbackTokenClaims; let already_consumed: Bool }
                return .json(200, Answer(valid: true, claims: claims, already_consumed: alreadyConsumed))
            case .invalid(let failure):
                struct Answer: Encodable { let valid: Bool; let reason: String }
                return .json(200, Answer(valid: false, reason: failure.rawValue))
            }
        }

        routes.add("GET", "/.well-known/jwks.json", .public) { _ throws(APIError) in
            let service = try enabled(exchange)
            return ServerResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=300")],
                                body: service.keys.jwks())
        }

        routes.add("POST", "/v1/admin/debug-secrets", .role(.admin)) { request throws(APIError) in
            let service = try enabled(debugSecrets)
            let body = try request.jsonBody()
            try body.allowOnly(["name"])
            let name = try body.string("name")
            let secret: String
            do throws(DebugSecretError) { secret = try await service.create(name: name, client: request.clientName) } catch { throw APIError(error) }
            struct Answer: Encodable { let name: String; let debug_secret: String; let note: String }
            return .json(201, Answer(name: name, debug_secret: secret, note: "shown once; only its SHA-256 is stored"))
        }

        routes.add("GET", "/v1/admin/debug-secrets", .role(.admin)) { _ throws(APIError) in
            let service = try enabled(debugSecrets)
            struct Item: Encodable { let name: String; let created_at: String }
            let names: [(name: String, createdAt: Date)]
            do throws(DebugSecretError) { names = try await service.names() } catch { throw APIError(error) }
            let items = names.map { Item(name: $0.name, created_at: AdminController.iso($0.createdAt)) }
            return .json(200, ["debug_secrets": items])
        }

        routes.add("DELETE", "/v1/admin/debug-secrets/{name}", .role(.admin)) { request throws(APIError) in
            let service = try enabled(debugSecrets)
            do throws(DebugSecretError) { try await service.delete(name: request.parameter("name"), client: request.clientName) } catch { throw APIError(error) }
            return ServerResponse(status: 204)
        }
    }
}

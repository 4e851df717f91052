import Foundation
import HTTPServer
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// Request paths, routes, header values and body fields as the service handles them today. Byte 0
/// picks what the rest of the input is: a path (Router.match over the service's routes), an
/// `X-Request-Id`, an `Idempotency-Key`, or a JSON body read field by field.
enum RequestCheck {
    /// The service's routes (docs/openapi.yaml; OpenAPISyncTests keeps that file in step with the router).
    static let patterns: [(String, String)] = [
        ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"), ("GET", "/.well-known/jwks.json"),
        ("POST", "/v1/devices/validate"), ("POST", "/v1/promotions/{id}/claim"), ("POST", "/v1/promotions/{id}/eligibility"),
        ("POST", "/v1/installs"), ("POST", "/v1/fallback-tokens"), ("POST", "/v1/fallback-tokens/verify"),
        ("POST", "/v1/admin/bans"), ("POST", "/v1/admin/unbans"), ("POST", "/v1/admin/devices/state"),
        ("GET", "/v1/admin/bans/pending"), ("GET", "/v1/admin/audit"), ("POST", "/v1/admin/debug-secrets"),
        ("GET", "/v1/admin/debug-secrets"), ("DELETE", "/v1/admin/debug-secrets/{name}"),
    ]

    static let router: Router<Int> = {
        var r = Router<Int>()
        for (i, (method, pattern)) in patterns.enumerated() { r.add(method, pattern, i) }
        return r
    }()

    static let methods = ["GET", "POST", "DELETE", "PUT", "get", ""]

    static func check(_ input: [UInt8]) -> String? {
        guard let selector = input.first else { return nil }
        let rest = Array(input.dropFirst())
        let text = String(decoding: rest, as: UTF8.self)
        switch selector % 4 {
        case 0: return route(methods[Int(selector / 4) % methods.count], text)
        case 1: return requestID(text)
        case 2: return idempotencyKey(text)
        default: return body(rest)
        }
    }

    static func route(_ method: String, _ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch router.match(method: method, path: path) {
        case .found(let route, let parameters):
            guard route.method == method else { return "matched \(route.method) for \(method)" }
            let segments = route.pattern.split(separator: "/").map(String.init)
            guard segments.count == parts.count else { return "\(path) matched \(route.pattern) with another segment count" }
            for (segment, part) in zip(segments, parts) {
                if segment.hasPrefix("{") {
                    guard parameters[String(segment.dropFirst().dropLast())] == part, !part.isEmpty, !part.contains("/") else {
                        return "parameter \(segment) of \(path) is \(String(describing: parameters[String(segment.dropFirst().dropLast())]))"
                    }
                } else if segment != part { return "\(path) matched \(route.pattern)" }
            }
        case .methodNotAllowed(let allowed):
            guard !allowed.isEmpty, !allowed.contains(method) else { return "405 for \(method) \(path) allowing \(allowed)" }
        case .notFound:
            if patterns.contains(where: { $0.1 == path && $0.0 == method }) { return "\(method) \(path) not found" }
        }
        return nil
    }

    static func requestID(_ value: String) -> String? {
        let id = RequestInputChecks.requestID(ServerRequest(method: "GET", path: "/", headers: ["x-request-id": value]))
        let wellFormed = (1...128).contains(value.utf8.count) && value.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F
        }
        if wellFormed { return id == value ? nil : "a well-formed request id was replaced" }
        guard id.utf8.count == 24, id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            return "a malformed request id was echoed: \(id.debugDescription)"
        }
        return nil
    }

    static func idempotencyKey(_ value: String) -> String? {
        let valid = (1...255).contains(value.utf8.count) && value.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
        let http = ServerRequest(method: "POST", path: "/", headers: ["idempotency-key": value])
        do {
            let key = try RequestInputChecks.idempotencyKey(http)
            return valid && key == value ? nil : "Idempotency-Key \(value.debugDescription) accepted as \(String(describing: key))"
        } catch {
            return !valid && error.status == 400 ? nil : "Idempotency-Key \(value.debugDescription) refused with \(error.status)"
        }
    }

    static func body(_ bytes: [UInt8]) -> String? {
        let http = ServerRequest(method: "POST", path: "/", headers: ["content-type": "application/json"], body: Data(bytes))
        let isObject: Bool
        if case .object? = try? JSONValue.parse(bytes) { isObject = true } else { isObject = false }
        let body: RequestBody
        do { body = try RequestInputChecks.body(http) } catch {
            return !isObject && error.status == 400 && error.code.rawValue == "bad_request" ? nil : "body refused with \(error.status) \(error.code): \(error.message)"
        }
        guard isObject else { return "a body that is not a JSON object was accepted" }
        // Every field reader either answers or refuses with 400, never anything else.
        func fieldCheck<T>(_ name: String, _ read: () throws(APIError) -> T) -> String? {
            do { _ = try read() } catch { return error.status == 400 ? nil : "\(name) refused with \(error.status)" }
            return nil
        }
        if let f = fieldCheck("device_token", { () throws(APIError) in try RequestInputChecks.deviceToken(body) }) { return f }
        if let f = fieldCheck("install_id", { () throws(APIError) in try RequestInputChecks.installID(body) }) { return f }
        if let f = fieldCheck("reason", { () throws(APIError) in try RequestInputChecks.reason(body, required: true) }) { return f }
        if let id = try? RequestInputChecks.installID(body), !(1...128).contains(id.utf8.count) { return "install_id of \(id.utf8.count) bytes accepted" }
        if let reason = try? RequestInputChecks.reason(body, required: false), reason.count > 500 { return "a reason of \(reason.count) characters accepted" }
        return nil
    }
}

import FoundationEssentials
import OutboundHTTP
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// `twobits admin …`: bans, unbans, device state, pending orders and the audit trail of a running server.
enum AdminCommand {
    static let usage = """
    usage: twobits admin <action> [--server URL] [--key-file FILE] [--json]
      ban     (--install-id ID | --token-file FILE) --reason TEXT
      unban   (--install-id ID | --token-file FILE) [--reason TEXT]
      state   [--token-file FILE]
      pending
      audit   [--limit N] [--before ID]
      app-attest key ARTIFACT                     an attested key: risk metric, its history, the receipt's times
      app-attest keys [--min-risk-metric N] [--limit N] [--after ID]
                                                  keys whose risk metric is at least N, by key id
      app-attest revoke ARTIFACT --reason TEXT    revokes a key: its assertions and request proofs are refused from then on
    The server URL comes from --server or TWOBITS_SERVER; the admin API key from TWOBITS_ADMIN_KEY or
    --key-file FILE (its first line). --key KEY works too, but every user of the machine sees it in ps.
    Device tokens (about 3 KB) are read from --token-file, or from standard input when it is omitted or '-'.
    """

    static func run(_ raw: [String]) async throws -> Int32 {
        var args = try Arguments(raw, switches: ["json", "help"])
        if args.flag("help") || args.positional.isEmpty {
            print(usage)
            return args.positional.isEmpty && !args.flag("help") ? 2 : 0
        }
        let action = args.positional[0]
        let server = (args.value("server", env: "TWOBITS_SERVER") ?? "http://127.0.0.1:8080").trimmed(where: { $0 == "/" })
        let key = try adminKey(&args)
        let json = args.flag("json")

        let method: String
        var path: String
        var body: [String: String]?
        switch action {
        case "ban", "unban":
            method = "POST"
            path = action == "ban" ? "/v1/admin/bans" : "/v1/admin/unbans"
            var b: [String: String] = [:]
            if let install = args.value("install-id") { b["install_id"] = install } else { b["device_token"] = try readToken(args.value("token-file")) }
            if let reason = args.value("reason") { b["reason"] = reason } else if action == "ban" { throw UsageError("ban needs --reason") }
            body = b
        case "state":
            method = "POST"
            path = "/v1/admin/devices/state"
            body = ["device_token": try readToken(args.value("token-file"))]
        case "pending":
            method = "GET"
            path = "/v1/admin/bans/pending"
        case "audit":
            method = "GET"
            path = "/v1/admin/audit?limit=\(try args.int("limit", default: 20))"
            if let before = args.value("before") { path += "&before=\(before)" }
        case "app-attest":
            (method, path, body) = try appAttestRequest(&args)
        default:
            throw UsageError("unknown admin action \(action)\n\n" + usage)
        }
        try args.rejectUnknown()

        let client = CurlClient(maxConnectionsPerHost: 1, maxTotalConnections: 1)
        defer { client.shutdown() }
        var headers = [("Authorization", "Bearer " + key)]
        var data: Data?
        if let body {
            headers.append(("Content-Type", "application/json"))
            data = try JSONEncoder().encode(body)
        }
        let response: OutboundResponse
        do {
            response = try await client.send(OutboundRequest(method: method, url: server + path, headers: headers, body: data, timeoutMilliseconds: 30_000))
        } catch {
            printError("twobits admin: cannot reach \(CredentialRedaction.redacted(server)): \(error)")
            return 1
        }
        if json {
            print(response.text)
        } else {
            print(humanReadable(action == "app-attest" ? "app-attest " + args.positional[1] : action, response))
        }
        return (200..<300).contains(response.status) ? 0 : 1
    }

    /// `app-attest key ARTIFACT`, `app-attest keys [--min-risk-metric N] [--limit N] [--after ID]` or
    /// `app-attest revoke ARTIFACT --reason TEXT`: the method, path and body of the admin API call.
    static func appAttestRequest(_ args: inout Arguments) throws -> (String, String, [String: String]?) {
        let what = args.positional.count > 1 ? args.positional[1] : ""
        switch what {
        case "key":
            guard args.positional.count == 3 else { throw UsageError("app-attest key needs the key's artifact (or its key id in base64url)\n\n" + usage) }
            return ("GET", "/v1/admin/app-attest/keys/" + (try keyInPath(args.positional[2], what)), nil)
        case "revoke":
            guard args.positional.count == 3 else { throw UsageError("app-attest revoke needs the key's artifact (or its key id in base64url)\n\n" + usage) }
            guard let reason = args.value("reason"), !reason.isEmpty else { throw UsageError("app-attest revoke needs --reason") }
            return ("POST", "/v1/admin/app-attest/keys/" + (try keyInPath(args.positional[2], what)) + "/revoke", ["reason": reason])
        case "keys":
            guard args.positional.count == 2 else { throw UsageError("app-attest keys takes no argument besides its options\n\n" + usage) }
            var path = "/v1/admin/app-attest/keys?min_risk_metric=\(try args.int("min-risk-metric", default: 0))&limit=\(try args.int("limit", default: 50))"
            if let after = args.value("after") {
                guard after.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                    throw UsageError("--after must be the next_after the previous page printed")
                }
                path += "&after=" + after
            }
            return ("GET", path, nil)
        default:
            throw UsageError("app-attest needs key ARTIFACT, keys or revoke ARTIFACT\n\n" + usage)
        }
    }

    /// A key's artifact or id as a path segment. The path takes the base64url spelling; a standard base64 id is
    /// converted, anything else reaches no key (and nothing but base64 and artifact characters reaches the path).
    static func keyInPath(_ given: String, _ what: String) throws -> String {
        var key = given.replacing("+", with: "-").replacing("/", with: "_")
        while key.hasSuffix("=") { key.removeLast() }
        guard key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }) else {
            throw UsageError("app-attest \(what): \(TerminalText.escaped(given)) is not an artifact or a key id")
        }
        return key
    }

    /// The admin key: `--key-file`, then `TWOBITS_ADMIN_KEY`, then `--key` (with a warning: the
    /// command line of a process is readable by every user through ps and /proc).
    static func adminKey(_ args: inout Arguments) throws -> String {
        if let file = args.value("key-file") {
            guard let data = FileManager.default.contents(atPath: file) else { throw UsageError("cannot read --key-file \(file)") }
            let key = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)?
                .trimmed() ?? ""
            guard !key.isEmpty else { throw UsageError("--key-file \(file) is empty") }
            return key
        }
        if let key = args.value("key") {
            printError("twobits admin: warning: --key is visible to every user of this machine (ps, /proc); use TWOBITS_ADMIN_KEY or --key-file FILE")
            return key
        }
        guard let key = ProcessInfo.processInfo.environment["TWOBITS_ADMIN_KEY"], !key.isEmpty else {
            throw UsageError("no admin key: set TWOBITS_ADMIN_KEY or pass --key-file FILE")
        }
        return key
    }

    static func readToken(_ file: String?) throws -> String {
        let data: Data
        if let file, file != "-" {
            guard let d = FileManager.default.contents(atPath: file) else { throw UsageError("cannot read --token-file \(file)") }
            data = d
        } else {
            data = readStandardInput()
        }
        let token = String(decoding: data, as: UTF8.self).trimmed()
        guard !token.isEmpty else { throw UsageError("no device token given (use --token-file FILE or pipe it on standard input)") }
        return token
    }

    static func humanReadable(_ action: String, _ response: OutboundResponse) -> String {
        guard let value = try? JSONValue.parse(response.body) else { return "HTTP \(response.status): \(TerminalText.escaped(response.text))" }
        if let error = value["error"] {
            return "error \(response.status) \(TerminalText.escaped(error["code"]?.stringValue ?? "")): \(TerminalText.escaped(error["message"]?.stringValue ?? ""))"
        }
        // Every string from the server is escaped: reasons and names are free text that must not
        // drive the admin's terminal.
        func s(_ v: JSONValue?) -> String {
            switch v {
            case .string(let x)?: return TerminalText.escaped(x)
            case .bool(let b)?: return b ? "yes" : "no"
            case .int(let i)?: return String(i)
            case nil, .null?: return "-"
            default: return TerminalText.escaped("\(v!)")
            }
        }
        switch action {
        case "ban", "unban":
            let applied = value["applied"]?.boolValue == true
            return "\(action == "ban" ? "banned" : "unbanned"): \(applied ? "written to the device's bits now" : "pending until install \(s(value["install_id"])) shows a device token")"
        case "state":
            let raw = value["raw"], meaning = value["meaning"]
            var lines = ["layout:      \(s(value["layout"]))"]
            if raw?["never_set"]?.boolValue == true { lines.append("bits:        never set") } else {
                lines.append("bits:        bit0=\(s(raw?["bit0"])) bit1=\(s(raw?["bit1"])) last update \(s(raw?["last_update_time"]))\(raw?["stale"]?.boolValue == true ? " (stale: counts as never set)" : "")")
            }
            lines.append("banned:      \(s(meaning?["banned"]))")
            if let r = meaning?["reinstalls"] { lines.append("reinstalls:  \(s(r))") }
            if case .array(let claims)? = meaning?["promotions"] {
                for c in claims { lines.append("claimed:     \(s(c["promotion"])) in \(s(c["claimed_month"]))") }
            }
            return lines.joined(separator: "\n")
        case "pending":
            guard case .array(let items)? = value["pending"], !items.isEmpty else { return "no pending bans or unbans" }
            return items.map { "\(s($0["created_at"]))  \(s($0["action"]))  install \(s($0["install_id"]))  by \(s($0["client"]))  \(s($0["reason"]))" }.joined(separator: "\n")
        case "audit":
            guard case .array(let items)? = value["events"], !items.isEmpty else { return "no audit events" }
            var lines = items.map {
                "#\(s($0["id"])) \(s($0["at"])) \(s($0["client"])) \(s($0["action"])) \(s($0["subject"])) \(s($0["bits_before"])) -> \(s($0["bits_after"])) \(s($0["result"])) \(s($0["reason"]))"
            }
            if let next = value["next_before"], next != .null { lines.append("more: --before \(s(next))") }
            return lines.joined(separator: "\n")
        case "app-attest key", "app-attest revoke":
            return appAttestKeyLines(value, s).joined(separator: "\n")
        case "app-attest keys":
            guard case .array(let items)? = value["keys"], !items.isEmpty else { return "no keys with a risk metric that high" }
            var lines = items.map {
                "\(s($0["artifact"]))  risk \(s($0["risk_metric"])) at \(s($0["risk_metric_at"]))  \(s($0["app_id"])) \(s($0["environment"]))\($0["revoked"]?.boolValue == true ? "  revoked" : "")"
            }
            if let next = value["next_after"], next != .null { lines.append("more: --after \(s(next))") }
            return lines.joined(separator: "\n")
        default:
            return TerminalText.escaped(response.text)
        }
    }

    static func appAttestKeyLines(_ key: JSONValue, _ s: (JSONValue?) -> String) -> [String] {
        var lines = [
            "artifact:           \(s(key["artifact"]))",
            "key id:             \(s(key["key_id"]))",
            "app:                \(s(key["app_id"])) (\(s(key["environment"])))",
            "counter:            \(s(key["counter"]))",
            "first seen:         \(s(key["first_seen"]))",
            "risk metric:        \(key["risk_metric"].map { $0 == .null ? "unknown" : s($0) } ?? "unknown")",
            "risk metric at:     \(s(key["risk_metric_at"]))",
            "receipt not before: \(s(key["receipt_not_before"]))",
            "receipt expires:    \(s(key["receipt_expires_at"]))",
            "receipt stopped:    \(s(key["receipt_stopped_at"]))",
            "revoked:            \(s(key["revoked"]))",
        ]
        if key["revoked"]?.boolValue == true { lines.append("revoked at:         \(s(key["revoked_at"])): \(s(key["revoked_reason"]))") }
        if case .array(let history)? = key["risk_history"], !history.isEmpty {
            lines.append("risk history (newest first):")
            lines += history.map { "  \(s($0["at"]))  \(s($0["metric"]))" }
        }
        return lines
    }
}

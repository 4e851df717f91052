import FoundationEssentials
import Ledger
import TokenSigning
import TwoBitsService

/// `twobits keys generate|rotate|list|prune --dir DIR`: the fallback-token signing keys.
enum KeysCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        var args = try Arguments(raw)
        guard let action = args.positional.first else { throw UsageError("keys needs an action: generate, rotate, list or prune") }
        let store = SigningKeyStore(directory: try args.required("dir"))
        let maxTTL = try args.int("max-ttl", default: 86_400)
        let database = args.value("database", env: "TWOBITS_DATABASE")
        try args.rejectUnknown()
        let ledger = try database.map { text throws -> any Ledger in try DatabaseLocation(text).openLedger(pool: .init(size: 1)) }
        defer { ledger?.close() }
        if ledger == nil, ["generate", "rotate", "prune"].contains(action) {
            printError("note: not recorded in the audit trail; pass --database FILE|URL (or set TWOBITS_DATABASE) to record key changes")
        }

        func audit(_ action: AuditAction, _ subject: String, _ reason: String? = nil) async {
            _ = try? await ledger?.record(AuditEvent(client: "cli", action: action, subject: subject, result: .ok, reason: reason))
        }
        // Activations recorded by servers sharing the ledger (replicas with their own copy of the directory) count too.
        var activations = store.activations()
        if let ledger { activations.merge(try await ledger.keyActivations(), uniquingKeysWith: max) }

        switch action {
        case "generate", "rotate":
            let key = try store.generate()
            await audit(action == "rotate" ? .keysRotate : .keysGenerate, key.kid)
            print("created \(key.path)")
            print("kid \(key.kid)")
            if action == "rotate" { print("It signs from the next start or SIGHUP of the server; older keys stay in the JWKS until their tokens expire.") }
        case "list":
            let keys = try store.load()
            let retired = SigningKeyStore.retirements(keys, activations: activations)
            let live = Set(SigningKeyStore.verifying(keys, activations: activations, maxTokenLifetime: TimeInterval(maxTTL), now: Date()).map(\.kid))
            for key in keys {
                let state: String
                if let at = retired[key.kid] {
                    state = live.contains(key.kid) ? "retired \(at.formatted(.iso8601)), verifying" : "expired (prunable)"
                } else {
                    state = activations[key.kid] == nil ? "new: signs from the next server start or SIGHUP" : "signing"
                }
                print("\(key.kid)  created \(key.createdAt.formatted(.iso8601))  \(state)")
            }
        case "prune":
            let removed = try store.prune(maxTokenLifetime: TimeInterval(maxTTL), activations: activations)
            for key in removed {
                await audit(.keysPrune, key.kid)
                print("removed \(key.kid)")
            }
            if removed.isEmpty { print("nothing to prune (keys retired less than --max-ttl \(maxTTL) s ago may still have live tokens)") }
        default:
            throw UsageError("unknown keys action \(action); use generate, rotate, list or prune")
        }
        return 0
    }
}

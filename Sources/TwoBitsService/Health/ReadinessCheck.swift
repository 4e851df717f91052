import AppleDeviceCheckClient
import DeviceCheckModel
import Ledger
import UseCases

/// Whether this process can serve: configuration loaded, the Apple key signs, the ledger takes writes and
/// (with tokens) a signing key exists. One check behind `/readyz` and the service manager's `READY=1`.
struct ReadinessCheck: Sendable {
    let ledger: any LedgerHealth
    let developerTokens: DeveloperTokenProvider
    /// The fallback-token keys; nil when the configuration has no `tokens` section.
    let keys: KeyRing?
    /// Where the cause of a failed storage check goes (SQLite's text stays out of the public answer).
    let logger: LogWriter

    func run() async -> Readiness {
        var checks: [ReadinessCheckName: ReadinessVerdict] = [.configuration: .ok]
        // Signing proves the developer key is loaded and usable; the token is not sent anywhere.
        checks[.appleKey] = developerTokens.current().jwt.split(separator: ".").count == 3 ? .ok : .failed()
        // A write is proven (at most every few seconds); SQLite's text stays out of this public answer.
        do { try await ledger.checkHealth(); checks[.storage] = .ok } catch {
            switch error.kind {
            case .failed: checks[.storage] = .failed("the ledger cannot be written")
            case .unreachable: checks[.storage] = .failed("the database cannot be reached")
            case .busy: checks[.storage] = .failed("no database connection became free in time")
            }
            logger.log(.error, "readiness: the ledger cannot be written", ["detail": .string(error.message), "kind": .string(error.kind.rawValue)])
        }
        if let keys { checks[.signingKeys] = keys.hasSigningKey ? .ok : .failed("no signing key") }
        return Readiness(checks: checks)
    }
}

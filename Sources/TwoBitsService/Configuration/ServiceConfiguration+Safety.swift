import FoundationEssentials
import Glibc

/// Operator mistakes that do not stop the service but deserve a warning.
extension ServiceConfiguration {
    /// A warning for the start-up log.
    public struct Warning: Sendable, Equatable {
        public let message: String
        public let path: String
    }

    /// Files others could read or change: the Apple key readable by others, the configuration
    /// writable by others. Each is logged once at start; neither lets anyone mint this service's tokens.
    public func operatorWarnings() -> [Warning] {
        var warnings: [Warning] = []
        if let mode = Self.mode(of: apple.privateKeyFile), mode & 0o004 != 0 {
            warnings.append(Warning(
                message: "the Apple private key is readable by every user of this machine (mode \(String(mode, radix: 8))); fix with: chmod 600 \(apple.privateKeyFile)",
                path: apple.privateKeyFile))
        }
        if let file, let mode = Self.mode(of: file), mode & 0o002 != 0 {
            warnings.append(Warning(
                message: "the configuration file is writable by every user of this machine (mode \(String(mode, radix: 8))), who could add a client or redirect Apple calls; fix with: chmod o-w \(file)",
                path: file))
        }
        if let appAttest, let root = appAttest.rootOverride, appAttest.environment == .production {
            warnings.append(Warning(
                message: "App Attest trusts the root in app_attest.root_ca_file instead of Apple's App Attestation Root CA while app_attest.environment is production; remove root_ca_file unless this is a test",
                path: root))
        }
        return warnings
    }

    static func mode(of path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }
}

extension ServiceConfiguration.Apple {
    /// The base URL as it may be logged: without credentials.
    public var loggableBaseURL: String { CredentialRedaction.redacted(effectiveBaseURL) }
}

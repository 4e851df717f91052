import FoundationEssentials

/// Dispatches to the subcommands.
enum TwoBitsCommand {
    static let usage = """
    usage: twobits <command> [options]

      serve   --config FILE                 run the service
      sandbox --team-id ID --key-id ID --key-file FILE [--listen HOST:PORT]
              [--environment development|production] [--latency-ms N] [--app-attest-root FILE]
              [--receipt-root FILE]
                                            run the Apple DeviceCheck emulator
      apple-check --config FILE             one authenticated call to the configured Apple: TLS, HTTP
                                            version, latency, and whether Apple accepts the credentials
      apikey                                print a new API key and the key_sha256 for the configuration
      keys    generate|rotate|list|prune --dir DIR [--max-ttl SECONDS] [--database FILE|URL]
                                            manage fallback-token signing keys
      admin   ban|unban|state|pending|audit [--server URL] [--key-file FILE] [--json] ...
                                            operate a running server (twobits admin --help)
      migrate --database URL|FILE           apply the ledger's pending schema steps
      ledger  copy --from FILE --to URL [--replace]
                                            move a SQLite ledger into PostgreSQL (counts compared)
      app-attest verify|verify-assertion ... verify an App Attest attestation or assertion offline,
                                            step by step (twobits app-attest --help)

      --version                             print the version and the git commit it was built from

    Documentation: docs/ in the repository; man twobits where the Debian package is installed.
    """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "serve": return try await ServeCommand.run(rest)
            case "sandbox": return try await SandboxCommand.run(rest)
            case "apple-check": return try await AppleCheckCommand.run(rest)
            case "apikey": return APIKeyCommand.run()
            case "keys": return try await KeysCommand.run(rest)
            case "admin": return try await AdminCommand.run(rest)
            case "migrate": return try MigrateCommand.run(rest)
            case "ledger": return try LedgerCommand.run(rest)
            case "app-attest": return try AppAttestCommand.run(rest)
            case "version", "--version":
                print(BuildInfo.versionLine)
                return 0
            case "help", "--help", "-h":
                print(usage)
                return 0
            default:
                printError("unknown command \(command)\n\n" + usage)
                return 2
            }
        } catch {
            printError("twobits \(command): \(error)")
            return 2
        }
    }
}

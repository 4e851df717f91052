import TwoBitsService

/// `twobits apple-check --config FILE`: checks the link to Apple and the credentials with one call.
enum AppleCheckCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        var args = try Arguments(raw)
        let path = try args.required("config", env: "TWOBITS_CONFIG")
        try args.rejectUnknown()
        let check: AppleLinkCheck
        do throws(ConfigurationError) {
            check = try await AppleLinkCheck.run(try ServiceConfiguration.load(path: path))
        } catch {
            printError("twobits apple-check: configuration error: \(error)")
            return 2
        }
        for line in check.lines { print(line) }
        return check.accepted ? 0 : 1
    }
}

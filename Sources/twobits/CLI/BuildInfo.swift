import CBuildInfo

/// What `twobits --version` prints.
enum BuildInfo {
    /// The release version, set here and nowhere else: the Debian package takes its version from
    /// `twobits --version`.
    static let version = "0.20.0"
    /// The git commit of the build (`make build`, `release`, `test`, `package`); "unknown" when built otherwise.
    static let commit = String(cString: twobits_git_commit())

    static var versionLine: String { "twobits \(version) (commit \(commit))" }
}

import Foundation
import TwoBitsCrypto

/// Runs child processes for the tests (Python oracles, `openssl`, `chattr`) with `posix_spawn`.
///
/// Not Foundation's `Process`: on Linux (Swift 6.3.1) its `run()` over-reads a buffer while listing
/// /proc/self/fd and crashes intermittently when many descriptors are open, as they are while the
/// other suites' servers and clients run (swiftlang/swift-corelibs-foundation#5472); LeakSanitizer also
/// reports it. The child writes to a file, not a pipe: `FileHandle.readDataToEndOfFile` traps on EINTR.
public enum ChildProcess {
    /// The exit status (128 + signal when killed) and the interleaved stdout+stderr.
    public struct Result: Sendable {
        public let status: Int32
        public let output: String
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public let call: String
        public let code: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    /// Runs `arguments[0]` (looked up on PATH) in `directory`, with `environment` added to this
    /// process's, on a thread of its own at the lowest priority (the child inherits its nice value),
    /// so a waiting test holds no thread of the cooperative pool.
    public static func run(_ arguments: [String], in directory: String? = nil,
                           environment: [String: String] = [:]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                #if os(Linux)
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
                #endif
                continuation.resume(with: Swift.Result { try runBlocking(arguments, in: directory, environment: environment) })
            }
            thread.start()
        }
    }

    /// The same, blocking the calling thread.
    public static func runBlocking(_ arguments: [String], in directory: String? = nil,
                                   environment: [String: String] = [:]) throws -> Result {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("twobits-child-\(UUID().uuidString).out").path
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // (Other descriptors without FD_CLOEXEC are inherited; the children are short-lived and ignore them.)
        // `cd "$0" && exec "$@"`: the working directory without posix_spawn_file_actions_addchdir_np.
        let argv = directory.map { ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, $0] + arguments } ?? ["/usr/bin/env"] + arguments
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArgv.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArgv, cEnv)
        guard spawned == 0 else { throw SpawnError(call: "posix_spawn", code: spawned) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw SpawnError(call: "waitpid", code: errno) }
        }
        let signal = status & 0x7f
        return Result(status: signal == 0 ? (status >> 8) & 0xff : 128 + signal, output: String(decoding: (try? FileBytes.read(outputPath)) ?? [], as: UTF8.self))
    }
}

import Foundation
import TwoBitsCrypto

/// The exit status and the interleaved stdout+stderr of a finished child process.
struct CommandResult: Sendable {
    let status: Int32
    let output: String
}

enum TestSupport {
    /// The repository root, found from this file's path (Tests/TwoBitsCryptoTests/Support/TestSupport.swift).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Support
        .deletingLastPathComponent() // TwoBitsCryptoTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent() // root

    /// Runs blocking or CPU-heavy work on a thread of its own.
    ///
    /// Every test target runs in one process, and Swift's cooperative pool has only as many threads as
    /// the machine has cores. A test that blocks a pool thread (waiting for a child process, or signing
    /// for half a second) starves the async tests beside it — the sandbox and client tests then miss
    /// their deadlines. So such work happens here, and the test awaits it without holding a thread.
    /// The thread runs at the lowest priority (nice 19), so this CPU work yields to the deadline-bound
    /// tests of the same process (sandbox, clients) instead of making their timers fire late.
    /// `body` must not call `#expect`: return what to check and check it in the test.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                lowerThisThreadsPriority()
                continuation.resume(with: Result { try body() })
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// nice 19 for the calling thread only: on Linux the nice value is per thread, and `who == 0` means the caller.
    private static func lowerThisThreadsPriority() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #endif
    }

    /// A fresh empty directory under the system temporary directory.
    static func makeTemporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("twobits-crypto-tests-" + UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` with a temporary directory that is removed afterwards.
    static func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        return try await body(dir)
    }

    /// Runs `arguments[0]` (looked up on PATH through /usr/bin/env) in `directory`, off the cooperative
    /// pool and at the lowest priority (the child inherits the thread's nice value).
    static func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) async throws -> CommandResult {
        try await offPool { try runBlocking(arguments, in: directory, environment: environment) }
    }

    /// Runs a `/bin/sh -c` script (for pipelines) in `directory`.
    static func shell(_ script: String, in directory: URL) async throws -> CommandResult {
        try await run(["sh", "-c", script], in: directory)
    }

    private static func runBlocking(_ arguments: [String], in directory: URL, environment: [String: String]) throws -> CommandResult {
        // The child writes to a file, not a pipe: FileHandle.readDataToEndOfFile traps on EINTR (a `try!`
        // inside Foundation), and this process gets signals while other tests run.
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("twobits-cmd-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let env = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        // `cd "$0" && exec "$@"`: the working directory without posix_spawn_file_actions_addchdir_np.
        let argv = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory.path] + arguments
        let status = try spawnAndWait(argv: argv, environment: env, outputPath: outputURL.path)
        let bytes = (try? FileBytes.read(outputURL.path)) ?? []
        return CommandResult(status: status, output: String(decoding: bytes, as: UTF8.self))
    }

    struct SpawnError: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    #if os(Linux)
    /// posix_spawn + waitpid, because Foundation's `Process.run()` on Linux (Swift 6.3.1) over-reads a
    /// buffer while listing /proc/self/fd and crashes intermittently when the process has many file
    /// descriptors open — which it does while the other suites' servers and clients run
    /// (swiftlang/swift-corelibs-foundation#5472). Returns the exit status (128 + signal when killed).
    private static func spawnAndWait(argv: [String], environment: [String: String], outputPath: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // (Other descriptors without FD_CLOEXEC are inherited; the children are short-lived and ignore them.)

        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
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
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
    #else
    private static func spawnAndWait(argv: [String], environment: [String: String], outputPath: String) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        process.environment = environment
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
              let output = FileHandle(forWritingAtPath: outputPath) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
    #endif
}

import ChildProcess
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
        let result = try ChildProcess.runBlocking(arguments, in: directory.path, environment: environment)
        return CommandResult(status: result.status, output: result.output)
    }
}

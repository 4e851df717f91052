import Foundation

/// Runs a child process (Python oracles) with posix_spawn, as Tests/TwoBitsCryptoTests/Support/TestSupport.swift
/// does and for the same reason: Foundation's `Process` crashes here when many descriptors are open
/// (swiftlang/swift-corelibs-foundation#5472). Off the cooperative pool, at the lowest priority.
enum Subprocess {
    struct Result: Sendable {
        let status: Int32
        let output: String
    }

    struct SpawnError: Error, CustomStringConvertible {
        let call: String
        let code: Int32
        var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
    }

    static func run(_ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                #if os(Linux)
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
                #endif
                continuation.resume(with: Swift.Result { try runBlocking(arguments) })
            }
            thread.start()
        }
    }

    private static func runBlocking(_ arguments: [String]) throws -> Result {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("twobits-oracle-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ["/usr/bin/env"] + arguments
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
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
        let data = FileManager.default.contents(atPath: outputPath) ?? Data()
        return Result(status: signal == 0 ? (status >> 8) & 0xff : 128 + signal, output: String(decoding: data, as: UTF8.self))
    }
}

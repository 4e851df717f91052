import Foundation

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

    /// A fresh empty directory under the system temporary directory.
    static func makeTemporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("twobits-crypto-tests-" + UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` with a temporary directory that is removed afterwards.
    static func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        return try body(dir)
    }

    /// Runs `arguments[0]` (looked up on PATH through /usr/bin/env) in `directory`.
    static func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain before waiting so a chatty child cannot block on a full pipe.
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Runs a `/bin/sh -c` script (for pipelines) in `directory`.
    static func shell(_ script: String, in directory: URL) throws -> CommandResult {
        try run(["sh", "-c", script], in: directory)
    }
}

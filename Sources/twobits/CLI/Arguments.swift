import FoundationEssentials
import Glibc
import TwoBitsService

/// A minimal parser for `--flag value`, `--flag=value` and `--switch` arguments.
struct Arguments {
    private(set) var positional: [String] = []
    private var options: [String: String] = [:]
    private var switches: Set<String> = []
    private var used: Set<String> = []

    /// - Parameter switchNames: flags that take no value.
    init(_ arguments: [String], switches switchNames: Set<String> = []) throws(UsageError) {
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("--") {
                let body = String(a.dropFirst(2))
                if let eq = body.firstIndex(of: "=") {
                    options[String(body[..<eq])] = String(body[body.index(after: eq)...])
                } else if switchNames.contains(body) {
                    switches.insert(body)
                } else {
                    guard i + 1 < arguments.count else { throw UsageError("--\(body) needs a value") }
                    options[body] = arguments[i + 1]
                    i += 1
                }
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    mutating func value(_ name: String, env: String? = nil) -> String? {
        used.insert(name)
        if let v = options[name] { return v }
        if let env, let v = ProcessInfo.processInfo.environment[env], !v.isEmpty { return v }
        return nil
    }

    mutating func required(_ name: String, env: String? = nil) throws(UsageError) -> String {
        guard let v = value(name, env: env) else {
            throw UsageError("--\(name) is required" + (env.map { " (or set \($0))" } ?? ""))
        }
        return v
    }

    mutating func int(_ name: String, default d: Int) throws(UsageError) -> Int {
        guard let v = value(name) else { return d }
        guard let i = Int(v) else { throw UsageError("--\(name) must be a whole number") }
        return i
    }

    mutating func flag(_ name: String) -> Bool {
        used.insert(name)
        return switches.contains(name)
    }

    /// Fails on options nobody asked for (typos).
    func rejectUnknown() throws(UsageError) {
        if let unknown = options.keys.sorted().first(where: { !used.contains($0) }) { throw UsageError("unknown option --\(unknown)") }
        if let unknown = switches.sorted().first(where: { !used.contains($0) }) { throw UsageError("unknown option --\(unknown)") }
    }
}

/// A command-line mistake: printed with the usage, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints to standard error.
/// Writes `message` to standard error, any password in it hidden (errors may quote a connection string back).
func printError(_ message: String) {
    let line = Array((CredentialRedaction.redacted(message) + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// All of standard input, as bytes.
func readStandardInput() -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count > 0 { data.append(contentsOf: buffer[..<count]) } else if count == 0 || errno != EINTR { break }
    }
    return data
}

import Foundation
import Synchronization

/// Writes one JSON object per line to standard output.
///
/// Callers pass only fields that are safe to log; device tokens, API keys, JWTs and private keys are
/// never handed to the logger (at most a short SHA-256 prefix of a device token).
public final class Logger: Sendable {
    public enum Level: String, Sendable { case info, warning, error }

    private let lock = Mutex(())
    private let enabled: Bool
    private let sink: (@Sendable (Data) -> Void)?

    /// - Parameter sink: receives each line instead of standard output (tests read the log this way).
    public init(enabled: Bool = true, sink: (@Sendable (Data) -> Void)? = nil) {
        self.enabled = enabled
        self.sink = sink
    }

    public func log(_ level: Level, _ message: String, _ fields: [String: LogValue] = [:]) {
        guard enabled else { return }
        var object: [String: LogValue] = fields
        object["ts"] = .string(Self.timestamp())
        object["level"] = .string(level.rawValue)
        object["msg"] = .string(message)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(object) else { return }
        line.append(0x0A)
        if let sink { return sink(line) }
        lock.withLock { _ in
            line.withUnsafeBytes { raw in _ = Foundation.write(1, raw.baseAddress, raw.count) }
        }
    }

    private static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}

/// A loggable value.
public enum LogValue: Encodable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int)
    case double(Double)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        }
    }
}

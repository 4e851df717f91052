import Foundation
import Locking
import TwoBitsCrypto

/// Writes one JSON object per line to standard output.
///
/// Callers pass only fields that are safe to log; device tokens, API keys, JWTs and private keys are
/// never handed to the logger (at most a short SHA-256 prefix of a device token). Lines are built
/// by hand and written in batches (every 50 ms, or at 64 KiB): a logger on every request must cost
/// microseconds, not an encoder, a date formatter and a system call. Warnings and errors are written at once.
public final class Logger: Sendable {
    public enum Level: String, Sendable { case info, warning, error }

    private let buffer = Lock(Data())
    private let enabled: Bool
    private let sink: (@Sendable (Data) -> Void)?

    /// - Parameter sink: receives each line instead of standard output (tests read the log this way).
    public init(enabled: Bool = true, sink: (@Sendable (Data) -> Void)? = nil) {
        self.enabled = enabled
        self.sink = sink
        if enabled && sink == nil {
            let flusher = Thread { [weak self] in
                while let logger = self {
                    logger.flush()
                    usleep(50_000)
                }
            }
            flusher.name = "twobits-log"
            flusher.start()
        }
    }

    /// Writes whatever is buffered.
    public func flush() {
        buffer.withLock { data in
            guard !data.isEmpty else { return }
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            data.removeAll(keepingCapacity: true)
        }
    }

    public func log(_ level: Level, _ message: String, _ fields: [String: LogValue] = [:]) {
        guard enabled else { return }
        var line = #"{"ts":""# + Self.timestamp() + #"","level":""# + level.rawValue + #"","msg":"# + Self.quote(message)
        for key in fields.keys.sorted() {
            line += "," + Self.quote(key) + ":" + fields[key]!.json
        }
        line += "}\n"
        if let sink { return sink(Data(line.utf8)) }
        let full = buffer.withLock { data -> Bool in
            data.append(contentsOf: line.utf8)
            return data.count >= 64 * 1024
        }
        if full || level != .info { flush() }
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var t = now.tv_sec
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T" + pad(parts.tm_hour, 2)
            + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "." + pad(Int32(now.tv_nsec / 1_000_000), 3) + "Z"
    }

    /// A JSON string literal.
    static func quote(_ s: String) -> String { JSONString.quote(s) }
}

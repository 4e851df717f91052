public import FoundationEssentials
import Locking
import TwoBitsCrypto
import Glibc
import WireFormats

/// Writes one JSON object per line to standard output.
///
/// Callers pass only fields that are safe to log; device tokens, API keys, JWTs and private keys are
/// never handed to the logger (at most a short SHA-256 prefix of a device token). Lines are built
/// by hand and written in batches (every 50 ms, or at 64 KiB): a logger on every request must cost
/// microseconds, not an encoder, a date formatter and a system call. Warnings and errors are written at once.
public final class LogWriter: Sendable {
    public enum Level: String, Sendable { case info, warning, error }

    private let buffer = Lock([UInt8]())
    private let enabled: Bool
    private let sink: (@Sendable (Data) -> Void)?

    /// - Parameter sink: receives each line instead of standard output (tests read the log this way).
    public init(enabled: Bool = true, sink: (@Sendable (Data) -> Void)? = nil) {
        self.enabled = enabled
        self.sink = sink
        if enabled && sink == nil {
            DetachedThread.start(name: "twobits-log") { [weak self] in
                while let logger = self {
                    logger.flush()
                    usleep(50_000)
                }
            }
        }
    }

    /// Writes whatever is buffered.
    public func flush() {
        buffer.withLock { data in
            guard !data.isEmpty else { return }
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(1, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            data.removeAll(keepingCapacity: true)
        }
    }

    /// Logs one line; any password in the message or a text field is hidden (`CredentialRedaction`): errors
    /// quote connection strings and URLs back.
    public func log(_ level: Level, _ message: String, _ fields: [String: LogValue] = [:]) {
        guard enabled else { return }
        write(level, CredentialRedaction.redacted(message), fields.map { ($0.key, $0.value.redacted) }.sorted { $0.key < $1.key })
    }

    /// Logs one line with `fields` in the order given: for the line written on every request, whose caller
    /// lists its fields sorted by name, as `log(_:_:_:)` writes them (no dictionary built, hashed and sorted).
    public func log(_ level: Level, _ message: String, ordered fields: KeyValuePairs<String, LogValue>) {
        guard enabled else { return }
        write(level, message, fields)
    }

    private func write(_ level: Level, _ message: String, _ fields: some Sequence<(key: String, value: LogValue)>) {
        // Written byte by byte into one buffer: this runs once per request.
        var line = [UInt8]()
        line.reserveCapacity(256)
        line.append(contentsOf: #"{"ts":""#.utf8)
        Self.appendTimestamp(to: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(contentsOf: #"","msg":"#.utf8)
        JSONString.append(message, to: &line)
        for (key, value) in fields {
            line.append(0x2C)
            JSONString.append(key, to: &line)
            line.append(0x3A)
            value.append(to: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        if let sink { return sink(Data(line)) }
        let full = buffer.withLock { data -> Bool in
            data.append(contentsOf: line)
            return data.count >= 64 * 1024
        }
        if full || level != .info { flush() }
    }

    /// Appends the RFC 3339 UTC time with milliseconds, digit by digit.
    static func appendTimestamp(to out: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var t = now.tv_sec
        var parts = tm()
        gmtime_r(&t, &parts)
        func digits(_ value: Int32, _ width: Int, then separator: UInt8?) {
            var divisor: Int32 = 1
            for _ in 1..<width { divisor *= 10 }
            var v = value
            while divisor > 0 {
                out.append(0x30 + UInt8(v / divisor % 10))
                v %= divisor
                divisor /= 10
            }
            if let separator { out.append(separator) }
        }
        digits(parts.tm_year + 1900, 4, then: UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2, then: UInt8(ascii: "-"))
        digits(parts.tm_mday, 2, then: UInt8(ascii: "T"))
        digits(parts.tm_hour, 2, then: UInt8(ascii: ":"))
        digits(parts.tm_min, 2, then: UInt8(ascii: ":"))
        digits(parts.tm_sec, 2, then: UInt8(ascii: "."))
        digits(Int32(now.tv_nsec / 1_000_000), 3, then: UInt8(ascii: "Z"))
    }

    /// A JSON string literal.
    static func quote(_ s: String) -> String { JSONString.quote(s) }
}

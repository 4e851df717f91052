#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads whole files with POSIX calls.
///
/// Used instead of `Data(contentsOf:)`, which in this toolchain's Foundation leaks its read buffer for
/// files shorter than 15 bytes (LeakSanitizer shows it under `make sanitize`).
public enum FileBytes {
    /// Why a file could not be read: `errno`'s text, e.g. "No such file or directory".
    public struct ReadError: Error, Equatable, Sendable {
        public let errno: Int32
        public var reason: String { String(cString: strerror(errno)) }
    }

    /// The file's bytes; at most `limit` bytes are accepted (a larger file is `EFBIG`).
    public static func read(_ path: String, limit: Int = 16 << 20) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReadError(errno: errno)
            }
            if n == 0 { return bytes }
            guard bytes.count + n <= limit else { throw ReadError(errno: EFBIG) }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }
}

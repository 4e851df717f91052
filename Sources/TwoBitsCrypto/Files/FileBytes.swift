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
        /// The path names a FIFO, a device, a socket or a directory, refused before any read.
        public var isNotRegularFile = false
        public var reason: String {
            isNotRegularFile ? "not a regular file (a FIFO, a device, a socket or a directory)" : String(cString: strerror(errno))
        }
    }

    /// The file's bytes; at most `limit` bytes are accepted (a larger file is `EFBIG`). Only a regular file is
    /// read: opening a FIFO waits for a writer, and reading a device may never end, so either would hang a start.
    public static func read(_ path: String, limit: Int = 16 << 20) throws(ReadError) -> [UInt8] {
        // O_NONBLOCK: the open of a FIFO returns at once instead of waiting for a writer; fstat then refuses it
        // (on the descriptor, so a file swapped after a stat cannot slip through). Regular files ignore the flag.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw ReadError(errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReadError(errno: errno) }
        guard isRegular(info.st_mode) else { throw ReadError(errno: EINVAL, isNotRegularFile: true) }
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

    /// Whether `mode` (a `stat` result's `st_mode`) is a regular file's.
    public static func isRegular<Mode: BinaryInteger>(_ mode: Mode) -> Bool { mode & 0o170000 == 0o100000 }
}

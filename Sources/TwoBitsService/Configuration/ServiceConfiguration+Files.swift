import FoundationEssentials
import Glibc
import TwoBitsCrypto

extension ServiceConfiguration {
    /// Refuses, naming `field`, a path that exists but is not a regular file. Checked with stat before anything
    /// opens it: opening a FIFO waits for a writer, so a key given as one would hang the start with no output.
    /// A missing file is left to the reader, which says so.
    static func refuseIrregularFile(_ path: String, field: String) throws(ConfigurationError) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        guard FileBytes.isRegular(info.st_mode) else {
            throw ConfigurationError(field, "\(path) is not a regular file (a FIFO, a device, a socket or a directory); name the file itself")
        }
    }

    /// The bytes of the regular file at `path`, or an error naming `field`. FileBytes refuses anything else on
    /// the descriptor it opened without blocking, so no stat beforehand is needed (nor could one be trusted).
    static func readRegularFile(_ path: String, field: String) throws(ConfigurationError) -> Data {
        do { return Data(try FileBytes.read(path)) } catch {
            throw ConfigurationError(field, "cannot read \(path): \(error.reason)")
        }
    }
}

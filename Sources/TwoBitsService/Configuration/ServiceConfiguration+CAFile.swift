import FoundationEssentials
import Glibc
import TwoBitsCrypto

extension ServiceConfiguration {
    /// `apple.ca_file`, checked at start: a file curl could not load would fail every Apple call's handshake
    /// instead, long after the deployment looked healthy.
    static func checkedCAFile(_ path: String?) throws(ConfigurationError) -> String? {
        guard let path else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ConfigurationError("apple.ca_file", "cannot read \(path) (no such file or permission denied)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ConfigurationError("apple.ca_file", "\(path) is not a regular file (a PEM bundle of CA certificates)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("apple.ca_file", "cannot read \(path) (permission denied)")
        }
        guard (try? X509Certificate.certificates(pem: String(decoding: data, as: UTF8.self)))?.isEmpty == false else {
            throw ConfigurationError("apple.ca_file", "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return path
    }
}

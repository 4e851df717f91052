import Foundation
import TwoBitsCrypto
import WireFormats

/// A fresh empty directory under the system temporary directory, named `prefix` and a random suffix.
/// The caller removes it (the scoped harnesses do).
public func makeTemporaryDirectory(prefix: String) throws -> String {
    let path = NSTemporaryDirectory() + prefix + SecureRandom.bytes(6).hexString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

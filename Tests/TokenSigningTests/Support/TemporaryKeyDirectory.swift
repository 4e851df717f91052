import Foundation
import TokenSigning

/// A fresh key directory path under the system temporary directory (not created), removed by `cleanUp()`.
struct TemporaryKeyDirectory {
    let root: String
    let path: String

    init() {
        root = FileManager.default.temporaryDirectory.path + "/twobits-tokens-tests-" + UUID().uuidString
        path = root + "/keys"
    }

    var store: SigningKeyStore { SigningKeyStore(directory: path) }

    func cleanUp() { try? FileManager.default.removeItem(atPath: root) }

    /// Records that a server activated `key` when it was created (a rotation followed at once by SIGHUP).
    @discardableResult
    func activate(_ key: SigningKey) throws -> SigningKey {
        try store.recordActivation(of: key, at: key.createdAt)
        return key
    }

    /// The permission bits of a file (e.g. 0o600).
    static func mode(of path: String) -> mode_t {
        var info = stat()
        precondition(stat(path, &info) == 0, "cannot stat \(path)")
        return info.st_mode & 0o777
    }

    /// Runs `body` with a fresh directory that is removed afterwards.
    @discardableResult
    static func with<T>(_ body: (TemporaryKeyDirectory) throws -> T) throws -> T {
        let dir = TemporaryKeyDirectory()
        defer { dir.cleanUp() }
        return try body(dir)
    }
}

/// A fixed, whole-second instant so file names and TTL arithmetic are predictable.
let referenceDate = Date(timeIntervalSince1970: 1_750_000_000)

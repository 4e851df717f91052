public import FoundationEssentials
import TwoBitsCrypto
import Glibc

/// A directory of signing keys: PKCS#8 PEM files named `<created-unix-ms>-<kid>.pem`, mode 0600.
///
/// The newest key signs, from the next server start or SIGHUP. Each server records when it activated
/// a key in `<kid>.activated` (the latest activation across servers wins). A key is retired once a
/// newer key has been activated: servers switched away from it then at the latest. It stays in the
/// JWKS until every token it may have signed has expired; `prune` then deletes it. A key whose
/// successors were never activated is still signing somewhere and is never pruned.
public struct SigningKeyStore: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// Every key, oldest first. Refuses a directory writable by group or others and key files that are
    /// group- or world-readable or owned by another user: whoever can plant a key there can mint tokens.
    public func load() throws(SigningKeyError) -> [SigningKey] {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory else {
            throw .directoryMissing(directory)
        }
        var directoryInfo = stat()
        guard stat(directory, &directoryInfo) == 0 else { throw .io("cannot stat \(directory)") }
        if directoryInfo.st_mode & 0o022 != 0 {
            throw .directoryWritable(path: directory, mode: String(directoryInfo.st_mode & 0o777, radix: 8))
        }
        let owner = geteuid()
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch { throw .io("cannot list \(directory): \(error)") }
        var keys: [SigningKey] = []
        for name in names.sorted() where name.hasSuffix(".pem") {
            let path = directory + "/" + name
            guard let created = Self.creationTime(fromFileName: name) else { continue }
            var info = stat()
            guard stat(path, &info) == 0 else { throw .io("cannot stat \(path)") }
            if info.st_mode & 0o077 != 0 { throw .permissive(path: path, mode: String(info.st_mode & 0o777, radix: 8)) }
            if info.st_uid != owner { throw .foreignOwner(path: path, owner: info.st_uid, service: owner) }
            let key: P256PrivateKey
            do { key = try P256PrivateKey(contentsOfFile: path) } catch { throw .badKey(path: path, problem: error.description) }
            keys.append(SigningKey(privateKey: key, createdAt: created, path: path))
        }
        guard !keys.isEmpty else { throw .empty(directory) }
        return keys.sorted { $0.createdAt < $1.createdAt }
    }

    /// Creates a new key (the directory too, mode 0700); it becomes the signing key at the next start or SIGHUP.
    @discardableResult
    public func generate(now: Date = Date()) throws(SigningKeyError) -> SigningKey {
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
            throw .io("cannot create \(directory): \(error)")
        }
        let key = P256PrivateKey.generate()
        let kid = JWK(publicKey: key.publicKey).kid
        var millis = Int64(now.timeIntervalSince1970 * 1000)
        // Keep creation times strictly increasing so "newest signs" is never ambiguous.
        if let newest = try? load().last, Int64(newest.createdAt.timeIntervalSince1970 * 1000) >= millis {
            millis = Int64(newest.createdAt.timeIntervalSince1970 * 1000) + 1
        }
        let path = "\(directory)/\(millis)-\(kid).pem"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw .io("cannot create \(path): errno \(errno)") }
        let pem = Array(key.pkcs8PEM.utf8)
        let written = pem.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        guard written == pem.count else { throw .io("short write to \(path)") }
        return SigningKey(privateKey: key, createdAt: Date(timeIntervalSince1970: Double(millis) / 1000), path: path)
    }

    /// Records that a server started signing with `key` at `time` (keeps the latest time).
    public func recordActivation(of key: SigningKey, at time: Date = Date()) throws(SigningKeyError) {
        let path = "\(directory)/\(key.kid).activated"
        if let existing = activations()[key.kid], existing >= time { return }
        let text = String(Int64(time.timeIntervalSince1970 * 1000)) + "\n"
        do { try text.write(toFile: path, atomically: true, encoding: .utf8) } catch {
            throw .io("cannot record the activation of \(key.kid) in \(path): \(error)")
        }
    }

    /// The latest activation time of each key that a server has activated.
    public func activations() -> [String: Date] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
        var result: [String: Date] = [:]
        for name in names where name.hasSuffix(".activated") {
            guard let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8),
                  case let fields = text.split(whereSeparator: \.isWhitespace), fields.count == 1,
                  let millis = Int64(fields[0]) else { continue }
            result[String(name.dropLast(".activated".count))] = Date(timeIntervalSince1970: Double(millis) / 1000)
        }
        return result
    }

    /// When each key stopped signing: the latest activation of any newer key. Keys with no activated
    /// successor are absent (still signing, or possibly so).
    public static func retirements(_ keys: [SigningKey], activations: [String: Date]) -> [String: Date] {
        var result: [String: Date] = [:]
        for (i, key) in keys.enumerated() {
            if let latest = keys[(i + 1)...].compactMap({ activations[$0.kid] }).max() { result[key.kid] = latest }
        }
        return result
    }

    /// Keys that may still have live tokens: those not retired, and retired ones within `maxTokenLifetime` of retirement.
    public static func verifying(_ keys: [SigningKey], activations: [String: Date], maxTokenLifetime: TimeInterval, now: Date) -> [SigningKey] {
        let retired = retirements(keys, activations: activations)
        return keys.filter { key in
            guard let at = retired[key.kid] else { return true }
            return now < at.addingTimeInterval(maxTokenLifetime)
        }
    }

    /// Deletes retired keys whose every token has expired. Returns the deleted keys.
    /// `maxTokenLifetime` must be at least the longest TTL any server was configured with. `activations`: the
    /// directory's own when nil; pass them merged with the ledger's when servers share one.
    public func prune(maxTokenLifetime: TimeInterval, activations: [String: Date]? = nil, now: Date = Date()) throws(SigningKeyError) -> [SigningKey] {
        let keys = try load()
        let keep = Set(Self.verifying(keys, activations: activations ?? self.activations(), maxTokenLifetime: maxTokenLifetime, now: now).map(\.kid))
        var removed: [SigningKey] = []
        for key in keys where !keep.contains(key.kid) {
            do { try FileManager.default.removeItem(atPath: key.path) } catch { throw .io("cannot delete \(key.path): \(error)") }
            try? FileManager.default.removeItem(atPath: "\(directory)/\(key.kid).activated")
            removed.append(key)
        }
        return removed
    }

    static func creationTime(fromFileName name: String) -> Date? {
        guard let dash = name.firstIndex(of: "-"), let millis = Int64(name[..<dash]) else { return nil }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}

import Foundation
import Ledger
import Testing
import TokenSigning
import SQLiteLedger
@testable import UseCases

/// Replicas on different machines have their own copy of the key directory but one ledger: the activation
/// times that retire old keys travel through the ledger, not through `.activated` files.
@Suite struct KeyActivationSharingTests {
    static func settings(_ directory: String) -> TokenSettings {
        TokenSettings(enabled: true, issuer: "twobits", audience: "main-api", ttlSeconds: 300, limitedUseTTLSeconds: 60,
                      keysDirectory: directory, reuseWindowSeconds: 3600)
    }

    /// Copies a key file into another directory (what deploying the same keys to a second machine does).
    static func copy(_ key: SigningKey, to directory: String) throws {
        let target = directory + "/" + (key.path as NSString).lastPathComponent
        try FileManager.default.copyItem(atPath: key.path, toPath: target)
    }

    @Test func aReplicaSeesTheActivationAnotherReplicaRecorded() async throws {
        let root = FileManager.default.temporaryDirectory.path + "/twobits-keyshare-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let storeA = SigningKeyStore(directory: root + "/a"), storeB = SigningKeyStore(directory: root + "/b")
        let first = try storeA.generate(now: Date().addingTimeInterval(-7200))
        _ = try storeB.generate(now: Date().addingTimeInterval(-9000)) // creates b/ with its mode; removed below
        for key in try storeB.load() { try FileManager.default.removeItem(atPath: key.path) }
        try Self.copy(first, to: storeB.directory)

        let ledger = try SQLiteLedger(path: root + "/ledger.sqlite")
        let a = try KeyRing(settings: Self.settings(storeA.directory), ledger: ledger)
        let b = try KeyRing(settings: Self.settings(storeB.directory), ledger: ledger)
        try await a.shareActivation()
        try await b.shareActivation()

        // A rotates and reloads; B has the new key file but has not reloaded, and no `.activated` file of it.
        let second = try storeA.generate()
        try Self.copy(second, to: storeB.directory)
        let reload = try await a.reload()
        #expect(reload.signingKID == second.kid)
        #expect(try await ledger.keyActivations()[second.kid] != nil)
        #expect(storeB.activations()[second.kid] == nil)

        try await b.readSharedActivations()
        #expect(b.shared.withLock { $0.activations }[second.kid] != nil)
        // B still signs with the first key (only its own reload switches), and publishes both.
        #expect(b.issuer().key.kid == first.kid)
        let jwks = String(decoding: b.jwks(), as: UTF8.self)
        #expect(jwks.contains(first.kid) && jwks.contains(second.kid))
    }
}

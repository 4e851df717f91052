import AppAttest
import AppAttestFixtures
import Foundation
import Testing
import TwoBitsCrypto

/// The chain verifier remembers an intermediate that verified once and skips only the root's signature over it:
/// every other check (the leaf's signature, all three validity periods, CA constraints) still runs each time.
@Suite struct ChainVerifierMemoryTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    struct Chain {
        let rootKey = P256PrivateKey.generate()
        let intermediateKey = P256PrivateKey.generate()
        let root: X509Certificate
        let intermediate: X509Certificate
        let verifier: CertificateChainVerifier

        init(rootValidity: ClosedRange<Date> = (now - 365 * day)...(now + 365 * day),
             intermediateValidity: ClosedRange<Date> = (now - 365 * day)...(now + 365 * day),
             rootExtensions: [(oid: String, der: Data)] = [], intermediateExtensions: [(oid: String, der: Data)] = []) throws {
            root = try X509CertificateBuilder(commonName: "Memory Root", serial: 1, notBefore: rootValidity.lowerBound,
                                              notAfter: rootValidity.upperBound, isCA: true, extensions: rootExtensions)
                .issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
            intermediate = try X509CertificateBuilder(commonName: "Memory CA 1", serial: 2, notBefore: intermediateValidity.lowerBound,
                                                      notAfter: intermediateValidity.upperBound, isCA: true, extensions: intermediateExtensions)
                .issue(subjectKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
            verifier = try CertificateChainVerifier(roots: [root])
        }

        /// Another intermediate of the same root, with a leaf it signed.
        func sibling(_ number: UInt64) throws -> (intermediate: X509Certificate, leaf: X509Certificate) {
            let key = P256PrivateKey.generate()
            let sibling = try X509CertificateBuilder(commonName: "Memory CA \(number)", serial: 10 + number, notBefore: now - 365 * day,
                                                     notAfter: now + 365 * day, isCA: true)
                .issue(subjectKey: key.publicKey, issuer: root, issuerKey: rootKey)
            let leaf = try X509CertificateBuilder(commonName: "leaf \(number)", serial: 100 + number, notBefore: now - day, notAfter: now + day, isCA: false)
                .issue(subjectKey: P256PrivateKey.generate().publicKey, issuer: sibling, issuerKey: key)
            return (sibling, leaf)
        }

        func leaf(signedBy key: P256PrivateKey? = nil, validity: ClosedRange<Date> = (now - day)...(now + day)) throws -> X509Certificate {
            try X509CertificateBuilder(commonName: "leaf", serial: 3, notBefore: validity.lowerBound, notAfter: validity.upperBound, isCA: false)
                .issue(subjectKey: P256PrivateKey.generate().publicKey, issuer: intermediate, issuerKey: key ?? intermediateKey)
        }
    }

    /// The refusal's words, or nil when the chain verified.
    static func reason(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return (error as? X509Error)?.description ?? "\(error)" }
    }

    @Test func aVerifiedIntermediateIsRememberedOnceAndStillJudged() throws {
        let chain = try Chain()
        #expect(chain.verifier.anchoredIntermediateCount == 0)
        try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
        #expect(chain.verifier.anchoredIntermediateCount == 1)
        // Through the remembered intermediate: a good leaf passes, and so does the same chain again (no second entry).
        try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
        #expect(chain.verifier.anchoredIntermediateCount == 1)
        // A leaf signed by another key in the intermediate's name, an expired leaf, a leaf alone: refused.
        let forged = try chain.leaf(signedBy: P256PrivateKey.generate())
        #expect(Self.reason { try chain.verifier.verify(leaf: forged, intermediates: [chain.intermediate], at: Self.now) }
                == "certificate signature failure")
        let expired = try chain.leaf(validity: (Self.now - 3 * Self.day)...(Self.now - Self.day))
        #expect(Self.reason { try chain.verifier.verify(leaf: expired, intermediates: [chain.intermediate], at: Self.now) }
                == "certificate has expired")
        let good = try chain.leaf()
        #expect(Self.reason { try chain.verifier.verify(leaf: good, intermediates: [], at: Self.now) } != nil)
        // The root's own store is unchanged: the intermediate alone still chains to it.
        #expect(Self.reason { try chain.verifier.verify(leaf: chain.intermediate, intermediates: [], at: Self.now) } == nil)
    }

    /// Each path judges the root's and the intermediate's periods at the verification's time, with the same words.
    @Test(arguments: [true, false])
    func theRootsAndTheIntermediatesPeriodsAreJudgedEachTime(remembered: Bool) throws {
        let chain = try Chain(rootValidity: (Self.now - 365 * Self.day)...(Self.now + 10 * Self.day),
                              intermediateValidity: (Self.now - 365 * Self.day)...(Self.now + 20 * Self.day))
        if remembered {
            try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
            #expect(chain.verifier.anchoredIntermediateCount == 1)
        }
        let lateLeaf = try chain.leaf(validity: (Self.now - Self.day)...(Self.now + 100 * Self.day))
        // Day 15: the root has expired, the intermediate has not.
        #expect(Self.reason {
            try chain.verifier.verify(leaf: lateLeaf, intermediates: [chain.intermediate], at: Self.now + 15 * Self.day) } == "certificate has expired")
        // Before the root's and the intermediate's start: not yet valid.
        let earlyLeaf = try chain.leaf(validity: (Self.now - 400 * Self.day)...(Self.now + Self.day))
        #expect(Self.reason {
            try chain.verifier.verify(leaf: earlyLeaf, intermediates: [chain.intermediate], at: Self.now - 380 * Self.day) } == "certificate is not yet valid")
        #expect(chain.verifier.anchoredIntermediateCount == (remembered ? 1 : 0))
    }

    @Test func anIntermediateOfAnotherRootIsNeitherTrustedNorRemembered() throws {
        let chain = try Chain(), stranger = try Chain()
        #expect(Self.reason {
            try chain.verifier.verify(leaf: stranger.leaf(), intermediates: [stranger.intermediate], at: Self.now) } != nil)
        #expect(chain.verifier.anchoredIntermediateCount == 0)
        // A remembered intermediate does not vouch for a stranger's leaf, nor stand in for the one a chain names.
        try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
        #expect(Self.reason {
            try chain.verifier.verify(leaf: stranger.leaf(), intermediates: [chain.intermediate], at: Self.now) } != nil)
        #expect(Self.reason {
            try chain.verifier.verify(leaf: chain.leaf(), intermediates: [stranger.intermediate], at: Self.now) } != nil)
        #expect(chain.verifier.anchoredIntermediateCount == 1)
    }

    /// Policies or name constraints on the root or the intermediate bear on the whole path (and OpenSSL ignores
    /// an anchor's policies): such chains are always verified whole.
    @Test(arguments: [(onRoot: true, oid: "2.5.29.32"), (onRoot: false, oid: "2.5.29.32"), (onRoot: false, oid: "2.5.29.36")])
    func aChainWithPathWideExtensionsIsNeverCut(onRoot: Bool, oid: String) throws {
        // certificatePolicies { anyPolicy }, or policyConstraints { requireExplicitPolicy 5 } (never reached here).
        let der = oid == "2.5.29.32" ? Data([0x30, 0x08, 0x30, 0x06, 0x06, 0x04, 0x55, 0x1D, 0x20, 0x00]) : Data([0x30, 0x03, 0x80, 0x01, 0x05])
        let chain = onRoot ? try Chain(rootExtensions: [(oid: oid, der: der)]) : try Chain(intermediateExtensions: [(oid: oid, der: der)])
        try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
        try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
        #expect(chain.verifier.anchoredIntermediateCount == 0)
    }

    /// The intermediate's own period is still judged once it is the anchor (OpenSSL checks an anchor's dates).
    @Test func aRememberedIntermediateThatExpiresIsRefused() throws {
        let chain = try Chain(intermediateValidity: (Self.now - 365 * Self.day)...(Self.now + 10 * Self.day))
        try chain.verifier.verify(leaf: chain.leaf(), intermediates: [chain.intermediate], at: Self.now)
        #expect(chain.verifier.anchoredIntermediateCount == 1)
        let lateLeaf = try chain.leaf(validity: (Self.now - Self.day)...(Self.now + 100 * Self.day))
        #expect(Self.reason {
            try chain.verifier.verify(leaf: lateLeaf, intermediates: [chain.intermediate], at: Self.now + 15 * Self.day) } == "certificate has expired")
        try chain.verifier.verify(leaf: lateLeaf, intermediates: [chain.intermediate], at: Self.now + 5 * Self.day)
    }

    /// At most `maxAnchoredIntermediates` are remembered; the others keep verifying whole, each through its own intermediate.
    @Test func theRememberedIntermediatesAreBounded() throws {
        let chain = try Chain()
        let limit = CertificateChainVerifier.maxAnchoredIntermediates
        for number in 1...UInt64(limit + 2) {
            let sibling = try chain.sibling(number)
            try chain.verifier.verify(leaf: sibling.leaf, intermediates: [sibling.intermediate], at: Self.now)
            try chain.verifier.verify(leaf: sibling.leaf, intermediates: [sibling.intermediate], at: Self.now)
            #expect(chain.verifier.anchoredIntermediateCount == min(Int(number), limit))
        }
    }

    @Test func appleCA1IsRememberedOnTheRealCapture() throws {
        let verifier = try CertificateChainVerifier(roots: [AppleRootCertificates.appAttestationRoot])
        let x5c = X509CertificateTests.x5c
        let fixture = AppAttestFixture.load("bas-d-appattest")
        let leaf = try X509Certificate(der: x5c[0]), ca1 = try X509Certificate(der: x5c[1])
        try verifier.verify(leaf: leaf, intermediates: [ca1], at: try #require(fixture.verifyAt))
        try verifier.verify(leaf: leaf, intermediates: [ca1], at: try #require(fixture.verifyAt))
        #expect(verifier.anchoredIntermediateCount == 1)
        #expect(Self.reason {
            try verifier.verify(leaf: leaf, intermediates: [ca1], at: Date(timeIntervalSince1970: 4_000_000_000)) } == "certificate has expired")
    }
}

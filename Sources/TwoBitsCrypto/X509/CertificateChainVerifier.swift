import COpenSSL
import COpenSSLShims
public import FoundationEssentials
import Locking

/// Verifies certificate chains to fixed roots at a chosen time, with OpenSSL's X.509 verification.
///
/// Only the roots given here are trusted: no system trust store, no partial chains (the chain must
/// reach one of the roots; an intermediate is an anchor only once it has itself verified to one, below).
/// The store is built once and shared; each verification has its own context.
///
/// A chain of one intermediate that has verified once is remembered (by its exact DER, at most
/// `maxAnchoredIntermediates` of them): later chains through the same intermediate skip the root's signature
/// over it, the same bytes under the same key, and check everything else again. For App Attest that is one
/// P-384 verification in two, every intermediate being Apple's same CA.
// Sendable (its OpenSSL pointer held as an OpenSSLHandle): the OpenSSL store is filled in init and only read afterwards; the cache of intermediates is behind a Lock.
public final class CertificateChainVerifier: Sendable {
    private let storeHandle: OpenSSLHandle
    private var store: OpaquePointer { storeHandle.pointer }
    /// Kept alive because the store points at their OpenSSL objects.
    public let roots: [X509Certificate]
    private let anchored = Lock<[AnchoredIntermediate]>([])
    /// Bounds the memory a stream of distinct (validly signed) intermediates can take.
    public static let maxAnchoredIntermediates = 8

    public init(roots: [X509Certificate]) throws(X509Error) {
        guard !roots.isEmpty else { throw .malformed("no root certificate") }
        guard let store = X509_STORE_new() else { throw .malformed("X509_STORE_new failed") }
        for root in roots where X509_STORE_add_cert(store, root.cert) != 1 {
            X509_STORE_free(store)
            throw .malformed("cannot add a root: \(drainOpenSSLErrors())")
        }
        self.storeHandle = OpenSSLHandle(store)
        self.roots = roots
    }

    deinit { X509_STORE_free(store) }

    /// Verifies `leaf` through `intermediates` to one of the roots, as if the time were `time`.
    /// Signatures, validity periods, CA constraints and path lengths are all checked.
    public func verify(leaf: X509Certificate, intermediates: [X509Certificate], at time: Date) throws(X509Error) {
        let at = time_t(time.timeIntervalSince1970.rounded(.down))
        if intermediates.count == 1, let known = anchoredIntermediate(matching: intermediates[0]) {
            try known.checkRootTime(at)
            try run(store: known.store, leaf: leaf, untrusted: [], at: at, partialChain: true)
            withExtendedLifetime(known) {}
            return
        }
        let top = try run(store: store, leaf: leaf, untrusted: intermediates, at: at, partialChain: false)
        if intermediates.count == 1, let top { remember(intermediates[0], signedBy: top) }
    }

    /// How many intermediates are remembered as verified (for tests and the benchmark).
    package var anchoredIntermediateCount: Int { anchored.withLock { $0.count } }

    private func anchoredIntermediate(matching certificate: X509Certificate) -> AnchoredIntermediate? {
        anchored.withLock { list in list.first { $0.certificate.hasSameDER(as: certificate) } }
    }

    private func remember(_ intermediate: X509Certificate, signedBy top: OpaquePointer) {
        guard let root = roots.first(where: { X509_cmp($0.cert, top) == 0 }),
              AnchoredIntermediate.allowsAnchoring(root: root, intermediate: intermediate),
              let entry = AnchoredIntermediate(certificate: intermediate, root: root) else { return }
        anchored.withLock { list in
            guard list.count < Self.maxAnchoredIntermediates, !list.contains(where: { $0.certificate.hasSameDER(as: intermediate) }) else { return }
            list.append(entry)
        }
    }

    /// One OpenSSL verification; returns the chain's top certificate (borrowed, valid while `self` lives)
    /// when it is one of the roots.
    @discardableResult
    private func run(store: OpaquePointer, leaf: X509Certificate, untrusted intermediates: [X509Certificate], at time: time_t,
                     partialChain: Bool) throws(X509Error) -> OpaquePointer? {
        guard let context = X509_STORE_CTX_new() else { throw .malformed("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = twobits_x509_stack_new() else { throw .malformed("stack allocation failed") }
        defer { twobits_x509_stack_free(untrusted) }
        for certificate in intermediates where twobits_x509_stack_push(untrusted, certificate.cert) == 0 {
            throw .malformed("stack push failed")
        }
        guard X509_STORE_CTX_init(context, store, leaf.cert, untrusted) == 1 else {
            throw .malformed("X509_STORE_CTX_init failed: \(drainOpenSSLErrors())")
        }
        let parameters = X509_STORE_CTX_get0_param(context)
        // set_time also sets X509_V_FLAG_USE_CHECK_TIME: the validity periods are judged at `time`, not now.
        X509_VERIFY_PARAM_set_time(parameters, time)
        // Only the anchored stores hold a non-root: there, and only there, the chain may end below a root.
        if partialChain { X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }
        let result = X509_verify_cert(context)
        // Keep the certificates alive until OpenSSL is done with them.
        withExtendedLifetime((leaf, intermediates)) {}
        if result == 1 { return twobits_x509_chain_top(context) }
        let code = X509_STORE_CTX_get_error(context)
        ERR_clear_error()
        let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "verification failed"
        throw .untrusted(code: Int(code), reason: reason)
    }
}

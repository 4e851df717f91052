import COpenSSL
public import FoundationEssentials

/// Verifies certificate chains to fixed roots at a chosen time, with OpenSSL's X.509 verification.
///
/// Only the roots given here are trusted: no system trust store, no partial chains (the chain must
/// reach one of the roots, an intermediate alone is never an anchor). The store is built once and
/// shared; each verification has its own context.
public final class CertificateChainVerifier: @unchecked Sendable {
    private let store: OpaquePointer
    /// Kept alive because the store points at their OpenSSL objects.
    public let roots: [X509Certificate]

    public init(roots: [X509Certificate]) throws(X509Error) {
        guard !roots.isEmpty else { throw .malformed("no root certificate") }
        guard let store = X509_STORE_new() else { throw .malformed("X509_STORE_new failed") }
        for root in roots where X509_STORE_add_cert(store, root.cert) != 1 {
            X509_STORE_free(store)
            throw .malformed("cannot add a root: \(drainOpenSSLErrors())")
        }
        self.store = store
        self.roots = roots
    }

    deinit { X509_STORE_free(store) }

    /// Verifies `leaf` through `intermediates` to one of the roots, as if the time were `time`.
    /// Signatures, validity periods, CA constraints and path lengths are all checked.
    public func verify(leaf: X509Certificate, intermediates: [X509Certificate], at time: Date) throws(X509Error) {
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
        // set_time also sets X509_V_FLAG_USE_CHECK_TIME: the validity periods are judged at `time`, not now.
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(time.timeIntervalSince1970.rounded(.down)))
        let result = X509_verify_cert(context)
        // Keep the certificates alive until OpenSSL is done with them.
        withExtendedLifetime((leaf, intermediates)) {}
        if result == 1 { return }
        let code = X509_STORE_CTX_get_error(context)
        ERR_clear_error()
        let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "verification failed"
        throw .untrusted(code: Int(code), reason: reason)
    }
}

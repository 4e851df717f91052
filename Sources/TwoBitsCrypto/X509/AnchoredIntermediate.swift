import COpenSSL
import FoundationEssentials

/// An intermediate whose signature by one of a verifier's roots has already been checked, with a trust store
/// that holds it as the anchor of a partial chain. The root's signature over the same DER under the same key
/// cannot change, so it is checked once; everything that depends on the time or the leaf is checked every call.
// Sendable (its OpenSSL pointer held as an OpenSSLHandle): its OpenSSL store is filled in init and only read by verifications afterwards.
final class AnchoredIntermediate: Sendable {
    let certificate: X509Certificate
    /// The root that signed it: its validity period is still judged at each verification's time.
    let root: X509Certificate
    /// A store holding only `certificate`; verifications through it set `X509_V_FLAG_PARTIAL_CHAIN`.
    private let storeHandle: OpenSSLHandle
    var store: OpaquePointer { storeHandle.pointer }

    init?(certificate: X509Certificate, root: X509Certificate) {
        guard let store = X509_STORE_new() else { return nil }
        guard X509_STORE_add_cert(store, certificate.cert) == 1 else {
            X509_STORE_free(store)
            ERR_clear_error()
            return nil
        }
        self.certificate = certificate
        self.root = root
        self.storeHandle = OpenSSLHandle(store)
    }

    deinit { X509_STORE_free(store) }

    /// Whether the chain root → intermediate may be cut at the intermediate. OpenSSL does not process a trust
    /// anchor's policy extensions, so a root or an intermediate carrying any would be judged differently once
    /// the intermediate is the anchor; name constraints bear on every certificate below. Such chains are
    /// always verified whole (Apple's App Attestation root and CA 1 carry none of these).
    static func allowsAnchoring(root: X509Certificate, intermediate: X509Certificate) -> Bool {
        [root, intermediate].allSatisfy { certificate in
            pathWideExtensions.allSatisfy { X509_get_ext_by_NID(certificate.cert, $0, -1) < 0 }
        }
    }

    private static let pathWideExtensions = [NID_name_constraints, NID_certificate_policies, NID_policy_constraints,
                                             NID_policy_mappings, NID_inhibit_any_policy]

    /// The root's validity period at `time`, judged as OpenSSL judges it in a full chain (and with its error codes).
    func checkRootTime(_ time: time_t) throws(X509Error) {
        var at = time
        let code: Int32
        switch (X509_cmp_time(X509_get0_notBefore(root.cert), &at), X509_cmp_time(X509_get0_notAfter(root.cert), &at)) {
        case (0, _): code = X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD
        case (1, _): code = X509_V_ERR_CERT_NOT_YET_VALID
        case (_, 0): code = X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD
        case (_, -1): code = X509_V_ERR_CERT_HAS_EXPIRED
        default: return
        }
        let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "verification failed"
        throw .untrusted(code: Int(code), reason: reason)
    }
}

import COpenSSL
public import FoundationEssentials

/// Issues X.509 v3 certificates for P-256 keys: test chains, and the sandbox's own App Attest CA.
/// Never used to judge a certificate; TwoBits only issues what it then verifies like any other.
public struct X509CertificateBuilder: Sendable {
    public var commonName: String
    public var serial: UInt64
    public var notBefore: Date
    public var notAfter: Date
    /// A CA certificate gets basicConstraints CA:TRUE and keyUsage keyCertSign, both critical.
    public var isCA: Bool
    /// Extra extensions: dotted OID and the DER placed in extnValue, not critical.
    public var extensions: [(oid: String, der: Data)]

    public init(commonName: String, serial: UInt64, notBefore: Date, notAfter: Date, isCA: Bool, extensions: [(oid: String, der: Data)] = []) {
        self.commonName = commonName
        self.serial = serial
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.isCA = isCA
        self.extensions = extensions
    }

    /// Issues the certificate of `subjectKey`, signed (ECDSA with SHA-256) by `issuerKey` as `issuer`;
    /// self-signed when `issuer` is nil.
    public func issue(subjectKey: P256PublicKey, issuer: X509Certificate?, issuerKey: P256PrivateKey) throws(X509Error) -> X509Certificate {
        guard let cert = X509_new() else { throw .malformed("X509_new failed") }
        defer { X509_free(cert) }
        func check(_ ok: Bool, _ what: String) throws(X509Error) {
            if !ok { throw .malformed("\(what): \(drainOpenSSLErrors())") }
        }
        try check(X509_set_version(cert, 2) == 1, "version")
        try check(ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert), serial) == 1, "serial")
        guard let name = X509_NAME_new() else { throw .malformed("X509_NAME_new failed") }
        defer { X509_NAME_free(name) }
        let utf8 = Array(commonName.utf8)
        try check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, utf8, Int32(utf8.count), -1, 0) == 1, "subject")
        try check(X509_set_subject_name(cert, name) == 1, "subject")
        try check(X509_set_issuer_name(cert, issuer.map { X509_get_subject_name($0.cert) } ?? name) == 1, "issuer")
        try check(ASN1_TIME_set(X509_getm_notBefore(cert), time_t(notBefore.timeIntervalSince1970)) != nil, "notBefore")
        try check(ASN1_TIME_set(X509_getm_notAfter(cert), time_t(notAfter.timeIntervalSince1970)) != nil, "notAfter")
        try check(X509_set_pubkey(cert, subjectKey.pkey) == 1, "public key")
        if isCA {
            try add(cert, X509V3_EXT_conf_nid(nil, nil, NID_basic_constraints, "critical,CA:TRUE"), "basicConstraints")
            try add(cert, X509V3_EXT_conf_nid(nil, nil, NID_key_usage, "critical,keyCertSign,cRLSign"), "keyUsage")
        }
        for (oid, der) in extensions {
            guard let object = OBJ_txt2obj(oid, 1) else { throw .malformed("bad OID \(oid)") }
            defer { ASN1_OBJECT_free(object) }
            guard let value = ASN1_OCTET_STRING_new() else { throw .malformed("ASN1_OCTET_STRING_new failed") }
            defer { ASN1_OCTET_STRING_free(value) }
            let bytes = [UInt8](der)
            try check(ASN1_OCTET_STRING_set(value, bytes, Int32(bytes.count)) == 1, "extension value")
            try add(cert, X509_EXTENSION_create_by_OBJ(nil, object, 0, value), oid)
        }
        try check(X509_sign(cert, issuerKey.pkey, EVP_sha256()) > 0, "sign")
        let length = i2d_X509(cert, nil)
        try check(length > 0, "encode")
        var der = Data(count: Int(length))
        let written = der.withUnsafeMutableBytes { raw -> Int32 in
            var out = raw.bindMemory(to: UInt8.self).baseAddress
            return i2d_X509(cert, &out)
        }
        try check(written == length, "encode")
        return try X509Certificate(der: der)
    }

    private func add(_ cert: OpaquePointer, _ ext: OpaquePointer?, _ what: String) throws(X509Error) {
        guard let ext else { throw .malformed("\(what): \(drainOpenSSLErrors())") }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(cert, ext, -1) == 1 else { throw .malformed("\(what): \(drainOpenSSLErrors())") }
    }
}

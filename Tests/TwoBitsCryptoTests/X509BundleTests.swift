import Foundation
import Testing
import TwoBitsCrypto

/// A PEM text as large as a system CA bundle (`apple.ca_file` may be one, with a proxy's CA appended) is read
/// whole: OpenSSL reads it in place, so the bytes must stay pinned for the whole read.
@Suite struct X509BundleTests {
    @Test func everyCertificateOfALargeBundleIsRead() throws {
        let system = "/etc/ssl/certs/ca-certificates.crt"
        guard let data = FileManager.default.contents(atPath: system) else {
            Issue.record("no \(system): install ca-certificates")
            return
        }
        let text = String(decoding: data, as: UTF8.self)
        let bundle = String(repeating: text, count: 4)
        let blocks = bundle.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1
        #expect(blocks > 400)
        #expect(try X509Certificate.certificates(pem: bundle).count == blocks)
    }
}

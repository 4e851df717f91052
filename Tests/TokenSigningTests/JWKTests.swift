import Foundation
import Testing
import TokenSigning
import TwoBitsCrypto
import WireFormats

@Suite struct JWKThumbprintTests {
    /// RFC 7638's own example (section 3.1) is an RSA key; TwoBits only has EC keys. RFC 9449 (DPoP)
    /// publishes an EC P-256 JWK together with its RFC 7638 SHA-256 thumbprint (the `jkt` of section 6.1).
    @Test func matchesThePublishedThumbprintOfRFC9449sExampleKey() {
        let kid = JWK.thumbprint(x: "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs", y: "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
        #expect(kid == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    }

    /// RFC 7517 appendix A.2's EC private key, as SEC1 PEM built from its published `d`, `x` and `y`.
    static let rfc7517KeyPEM = """
    -----BEGIN EC PRIVATE KEY-----
    MHcCAQEEIPO9DAeoH7kyeB7VJ1L2DMiaa+XlGTT+AZON21XY93gBoAoGCCqGSM49
    AwEHoUQDQgAEMKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D7gS2XpJFbZ
    iItSs3m9+9Ue6GnvHw/GW2ZZaVtszggXIw==
    -----END EC PRIVATE KEY-----

    """

    @Test func aKnownKeyBecomesTheExpectedJWK() throws {
        let key = try P256PrivateKey(pem: Self.rfc7517KeyPEM)
        let jwk = JWK(publicKey: key.publicKey)
        #expect(jwk.kty == "EC")
        #expect(jwk.crv == "P-256")
        #expect(jwk.x == "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4")
        #expect(jwk.y == "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM")
        #expect(jwk.use == "sig")
        #expect(jwk.alg == "ES256")
        // Computed independently (Python hashlib over the canonical JSON) when the test was written.
        #expect(jwk.kid == "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s")
    }

    /// The thumbprint recomputed here from RFC 7638's rules, without `JWK.thumbprint`: the required
    /// members only, in lexicographic order, no whitespace, SHA-256, base64url without padding.
    @Test func generatedKeysHaveTheCanonicalThumbprintAsKid() throws {
        for _ in 0..<10 {
            let key = P256PrivateKey.generate()
            let jwk = JWK(publicKey: key.publicKey)
            let (x, y) = key.publicKey.coordinates
            #expect(Data(base64URLEncoded: jwk.x) == x)
            #expect(Data(base64URLEncoded: jwk.y) == y)
            #expect(jwk.x.count == 43 && jwk.y.count == 43) // 32 bytes, unpadded
            let members = [("crv", "P-256"), ("kty", "EC"), ("x", jwk.x), ("y", jwk.y)].sorted { $0.0 < $1.0 }
            let canonical = "{" + members.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",") + "}"
            let expected = SHA256Digest.hash(Data(canonical.utf8)).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(jwk.kid == expected)
            #expect(jwk.kid.count == 43)
        }
    }

    @Test func theJWKSetEncodesTheMembersAVerifierNeeds() throws {
        let jwk = JWK(publicKey: try P256PrivateKey(pem: Self.rfc7517KeyPEM).publicKey)
        let data = try JSONEncoder().encode(JWKSet(keys: [jwk]))
        let object = try #require(try JSONValue.parse(data).objectValue)
        guard case .array(let keys)? = object["keys"] else { Issue.record("keys is not an array"); return }
        #expect(keys.count == 1)
        let key = try #require(keys.first?.objectValue)
        #expect(Set(key.keys) == ["kty", "crv", "x", "y", "kid", "use", "alg"])
        #expect(key["kid"]?.stringValue == "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s")
        // No private member ever leaks into the JWKS.
        #expect(key["d"] == nil)
        #expect(try JSONDecoder().decode(JWKSet.self, from: data) == JWKSet(keys: [jwk]))
    }
}

import Foundation
import Testing
import TokenSigning
import TwoBitsCrypto
import WireFormats

/// Tokens bound to a session (`bnd`): the claim's value, its place in the payload, its type, and the
/// verifier's binding check after every other check.
@Suite struct SessionBindingTests {
    @Test func theClaimIsTheBase64URLSHA256OfTheUTF8Bytes() throws {
        // SHA-256("abc"), base64url without padding.
        #expect(SessionBinding("abc")?.claim == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0")
        #expect(SessionBinding("é")?.claim == SHA256Digest.hash(Data([0xC3, 0xA9])).base64URLEncodedString())
        #expect(SessionBinding("") == nil)
        #expect(SessionBinding(String(repeating: "a", count: 1_024)) != nil)
        #expect(SessionBinding(String(repeating: "a", count: 1_025)) == nil)
        #expect(SessionBinding(String(repeating: "é", count: 513)) == nil, "1,026 bytes in 513 characters")
    }

    @Test func aBoundTokenCarriesBndInSortedPlaceAndVerifiesOnlyWithItsBinding() throws {
        try TokenFixture.with { f in
            let binding = try #require(SessionBinding("sess_1"))
            let token = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 600, binding: binding).token
            let payload = try #require(Data(base64URLEncoded: String(token.split(separator: ".")[1])))
            let text = String(decoding: payload, as: UTF8.self)
            #expect(text.hasPrefix(#"{"aud":"main-api","bnd":""# + binding.claim + #"","exp":"#), "\(text)")
            #expect(f.verifier.verify(token).claims?.bnd == binding.claim, "without a binding: valid, bnd shown")
            #expect(f.verifier.verify(token, binding: binding).claims?.bnd == binding.claim)
            #expect(f.verifier.verify(token, binding: SessionBinding("sess_2")).failure == .bindingMismatch)
            let unbound = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 600).token
            #expect(f.verifier.verify(unbound, binding: binding).failure == .bindingMismatch)
            #expect(f.verifier.verify(unbound).claims?.bnd == nil)
        }
    }

    @Test func theBindingIsCheckedAfterEveryOtherCheck() throws {
        try TokenFixture.with { f in
            let binding = try #require(SessionBinding("sess_1"))
            let old = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 60, now: referenceDate).token
            #expect(f.verifier.verify(old, binding: SessionBinding("sess_2")).failure == .expired)
            #expect(TokenVerifier(keys: [f.key], issuer: "twobits", audience: "other").verify(old, binding: binding).failure == .wrongAudience)
        }
    }

    @Test func aBndThatIsNotAStringIsMalformed() throws {
        try TokenFixture.with { f in
            let exp = Int64(Date().timeIntervalSince1970) + 600
            for bnd in ["1", "true", "[]", "{}"] {
                let claims = #"{"aud":"main-api","bnd":\#(bnd),"exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck"}"#
                #expect(f.verifier.verify(f.signByHand(claims: claims)).failure == .malformed, "bnd \(bnd)")
            }
        }
    }
}

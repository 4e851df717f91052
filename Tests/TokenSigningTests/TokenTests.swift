import Foundation
import Testing
import TokenSigning
import TwoBitsCrypto
import WireFormats

/// A signing key in a throw-away directory, and an issuer/verifier pair over it.
struct TokenFixture {
    let dir = TemporaryKeyDirectory()
    let key: SigningKey
    let issuer: TokenIssuer
    let verifier: TokenVerifier

    init(issuer iss: String = "twobits", audience: String = "main-api") throws {
        key = try dir.store.generate(now: referenceDate)
        issuer = TokenIssuer(key: key, issuer: iss, audience: audience)
        verifier = TokenVerifier(keys: [key], issuer: iss, audience: audience)
    }

    func cleanUp() { dir.cleanUp() }

    @discardableResult
    static func with<T>(_ body: (TokenFixture) throws -> T) throws -> T {
        let fixture = try TokenFixture()
        defer { fixture.cleanUp() }
        return try body(fixture)
    }

    /// Signs arbitrary header and claims JSON with this fixture's key, bypassing `TokenIssuer`.
    func signByHand(header: String? = nil, claims: String) -> String {
        let h = header ?? #"{"alg":"ES256","kid":"\#(key.kid)","typ":"JWT"}"#
        return JWS.sign(headerJSON: Data(h.utf8), claimsJSON: Data(claims.utf8), signer: ES256Signer(key: key.privateKey))
    }
}

extension Result where Failure == TokenVerifier.Failure {
    var failure: TokenVerifier.Failure? { if case .failure(let f) = self { return f }; return nil }
    var claims: Success? { try? get() }
}

@Suite struct TokenIssuerTests {
    @Test(arguments: [60, 300, 900, 86_400])
    func expiryIsIssuedAtPlusTheTTL(ttl: Int) throws {
        try TokenFixture.with { f in
            let (token, claims) = f.issuer.issue(subject: "install-1", tier: .devicecheck, limitedUse: false, ttlSeconds: ttl, now: referenceDate)
            #expect(claims.iat == 1_750_000_000)
            #expect(claims.exp - claims.iat == Int64(ttl))
            // The signed payload says the same as the returned claims.
            let parts = try #require(JWS.decode(token))
            #expect(parts.claims["iat"]?.intValue == claims.iat)
            #expect(parts.claims["exp"]?.intValue == claims.exp)
        }
    }

    @Test func headerNamesTheAlgorithmTheKidAndTheType() throws {
        try TokenFixture.with { f in
            let token = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).token
            let header = try #require(JWS.decode(token)?.header)
            #expect(header == ["alg": .string("ES256"), "kid": .string(f.key.kid), "typ": .string("JWT")])
        }
    }

    @Test func claimsCarryTheTierAlwaysAndLimOnlyWhenLimited() throws {
        try TokenFixture.with { f in
            let plain = f.issuer.issue(subject: "install-1", tier: .devicecheck, limitedUse: false, ttlSeconds: 900, now: referenceDate)
            let plainClaims = try #require(JWS.decode(plain.token)?.claims)
            #expect(Set(plainClaims.keys) == ["iss", "aud", "sub", "iat", "exp", "jti", "tier"])
            #expect(plainClaims["tier"] == .string("devicecheck"))
            #expect(plainClaims["iss"] == .string("twobits"))
            #expect(plainClaims["aud"] == .string("main-api"))
            #expect(plainClaims["sub"] == .string("install-1"))
            #expect(plain.claims.lim == nil)
            #expect(!plain.claims.limitedUse)

            let limited = f.issuer.issue(subject: "install-1", tier: .devicecheck, limitedUse: true, ttlSeconds: 300, now: referenceDate)
            let limitedClaims = try #require(JWS.decode(limited.token)?.claims)
            #expect(Set(limitedClaims.keys) == ["iss", "aud", "sub", "iat", "exp", "jti", "tier", "lim"])
            #expect(limitedClaims["lim"] == .bool(true))
            #expect(limitedClaims["tier"] == .string("devicecheck"))
            #expect(limited.claims.limitedUse)

            let debug = f.issuer.issue(subject: "ci", tier: .debug, limitedUse: false, ttlSeconds: 900, now: referenceDate)
            #expect(JWS.decode(debug.token)?.claims["tier"] == .string("debug"))
        }
    }

    @Test func jtiIs128RandomBits() throws {
        try TokenFixture.with { f in
            var seen = Set<String>()
            for _ in 0..<200 {
                let claims = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).claims
                #expect(Data(base64URLEncoded: claims.jti)?.count == 16)
                seen.insert(claims.jti)
            }
            #expect(seen.count == 200)
        }
    }

    @Test func anIssuedTokenVerifies() throws {
        try TokenFixture.with { f in
            let issued = f.issuer.issue(subject: "install-1", tier: .devicecheck, limitedUse: true, ttlSeconds: 300)
            #expect(f.verifier.verify(issued.token).claims == issued.claims)
        }
    }
}

@Suite struct TokenVerifierReasonTests {
    @Test func aTamperedPayloadIsABadSignature() throws {
        try TokenFixture.with { f in
            let token = f.issuer.issue(subject: "install-1", tier: .debug, limitedUse: false, ttlSeconds: 900).token
            let pieces = token.split(separator: ".").map(String.init)
            var claims = try #require(JWS.decode(token)?.claims)
            claims["tier"] = .string("devicecheck") // try to upgrade a debug token
            let forged = try JSONEncoder().encode(JSONValue.object(claims)).base64URLEncodedString()
            #expect(f.verifier.verify([pieces[0], forged, pieces[2]].joined(separator: ".")).failure == .badSignature)
        }
    }

    @Test func aTamperedHeaderOrSignatureIsABadSignature() throws {
        try TokenFixture.with { f in
            let token = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).token
            let pieces = token.split(separator: ".").map(String.init)
            var signature = try #require(Data(base64URLEncoded: pieces[2]))
            signature[10] ^= 0x01
            #expect(f.verifier.verify([pieces[0], pieces[1], signature.base64URLEncodedString()].joined(separator: ".")).failure == .badSignature)
            // Same header members, different bytes: the signature covers the encoded header.
            let header = Data(#"{"typ":"JWT","kid":"\#(f.key.kid)","alg":"ES256"}"#.utf8).base64URLEncodedString()
            #expect(f.verifier.verify([header, pieces[1], pieces[2]].joined(separator: ".")).failure == .badSignature)
            // A truncated signature (re-encoded: cutting the text instead leaves unused bits set, which base64url refuses as malformed).
            let original = try #require(Data(base64URLEncoded: pieces[2]))
            #expect(f.verifier.verify([pieces[0], pieces[1], original.prefix(61).base64URLEncodedString()].joined(separator: ".")).failure == .badSignature)
            #expect(f.verifier.verify([pieces[0], pieces[1], String(pieces[2].dropLast(4))].joined(separator: ".")).failure != nil)
        }
    }

    @Test func anExpiredTokenIsExpired() throws {
        try TokenFixture.with { f in
            let issued = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 60, now: referenceDate)
            #expect(f.verifier.verify(issued.token, now: referenceDate.addingTimeInterval(59)).claims != nil)
            // `exp` itself is already too late (RFC 7519: on or after).
            #expect(f.verifier.verify(issued.token, now: referenceDate.addingTimeInterval(60)).failure == .expired)
            #expect(f.verifier.verify(issued.token, now: referenceDate.addingTimeInterval(3600)).failure == .expired)
            // And with the real clock: issued long ago.
            #expect(f.verifier.verify(issued.token).failure == .expired)
        }
    }

    @Test func theWrongAudienceIsNamed() throws {
        try TokenFixture.with { f in
            let token = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).token
            let other = TokenVerifier(keys: [f.key], issuer: "twobits", audience: "another-api")
            #expect(other.verify(token).failure == .wrongAudience)
        }
    }

    @Test func theWrongIssuerIsNamed() throws {
        try TokenFixture.with { f in
            let token = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).token
            let other = TokenVerifier(keys: [f.key], issuer: "someone-else", audience: "main-api")
            #expect(other.verify(token).failure == .wrongIssuer)
        }
    }

    @Test func anUnknownKidIsAnUnknownKey() throws {
        try TokenFixture.with { f in
            try TokenFixture.with { g in
                let token = g.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 900).token
                #expect(f.verifier.verify(token).failure == .unknownKey)
                // Claiming a known kid does not help a token signed by another key.
                let claims = #"{"aud":"main-api","exp":4102444800,"iat":1750000000,"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck"}"#
                let forged = g.signByHand(header: #"{"alg":"ES256","kid":"\#(f.key.kid)","typ":"JWT"}"#, claims: claims)
                #expect(f.verifier.verify(forged).failure == .badSignature)
            }
        }
    }

    @Test(arguments: [
        "", "garbage", "a.b", "a.b.c.d", "not.a.token", "....", "eyJhbGciOiJFUzI1NiJ9..",
        "%%%.%%%.%%%", "e30.e30.e30", "W10.e30.AAAA", String(repeating: "A", count: 9_000),
    ])
    func garbageIsMalformed(token: String) throws {
        try TokenFixture.with { f in
            #expect(f.verifier.verify(token).failure == .malformed)
        }
    }

    @Test func algorithmsOtherThanES256AndMissingKidsAreMalformed() throws {
        try TokenFixture.with { f in
            let claims = #"{"aud":"main-api","exp":4102444800,"iat":1750000000,"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck"}"#
            let none = Data(#"{"alg":"none","kid":"\#(f.key.kid)"}"#.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString() + "."
            #expect(f.verifier.verify(none).failure == .malformed)
            #expect(f.verifier.verify(f.signByHand(header: #"{"alg":"HS256","kid":"\#(f.key.kid)"}"#, claims: claims)).failure == .malformed)
            #expect(f.verifier.verify(f.signByHand(header: #"{"alg":"ES256","typ":"JWT"}"#, claims: claims)).failure == .malformed)
            #expect(f.verifier.verify(f.signByHand(header: #"{"alg":"ES256","kid":42}"#, claims: claims)).failure == .malformed)
            // The same claims with a proper header verify, so it is the header that was refused.
            #expect(f.verifier.verify(f.signByHand(claims: claims)).claims?.tier == .devicecheck)
        }
    }

    /// A correctly signed token whose header or claims repeat a field is malformed: two parsers could
    /// read two different values (the first or the last), so neither reading is trusted.
    @Test func aCorrectlySignedTokenWithADuplicateClaimIsMalformed() throws {
        try TokenFixture.with { f in
            let exp = Int64(Date().timeIntervalSince1970) + 600
            let claims = #"{"aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck"}"#
            let twoTiers = #"{"aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck","tier":"debug"}"#
            let twoAudiences = #"{"aud":"other","aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck"}"#
            #expect(f.verifier.verify(f.signByHand(claims: twoTiers)).failure == .malformed)
            #expect(f.verifier.verify(f.signByHand(claims: twoAudiences)).failure == .malformed)
            #expect(f.verifier.verify(f.signByHand(header: #"{"alg":"ES256","kid":"\#(f.key.kid)","alg":"ES256"}"#, claims: claims)).failure == .malformed)
            // Deep nesting in a claim is refused by the parser's depth limit, not by time.
            let deep = #"{"aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck","x":\#(String(repeating: "[", count: 40) + String(repeating: "]", count: 40))}"#
            #expect(f.verifier.verify(f.signByHand(claims: deep)).failure == .malformed)
            // The control: the same claims once each verify.
            #expect(f.verifier.verify(f.signByHand(claims: claims)).claims?.tier == .devicecheck)
        }
    }

    @Test func aCorrectlySignedTokenWithoutATierIsMalformedNeverAPass() throws {
        try TokenFixture.with { f in
            let exp = Int64(Date().timeIntervalSince1970) + 600
            let noTier = #"{"aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s"}"#
            #expect(f.verifier.verify(f.signByHand(claims: noTier)).failure == .malformed)

            // An unknown tier name, a null tier, or a tier of the wrong type is no better.
            for tier in [#""premium""#, "null", "true", "1", #"["devicecheck"]"#, #""DEVICECHECK""#, #""""#] {
                let claims = #"{"aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":\#(tier)}"#
                #expect(f.verifier.verify(f.signByHand(claims: claims)).failure == .malformed, "tier \(tier)")
            }

            // The control: with the tier, the same hand-signed token verifies.
            let withTier = #"{"aud":"main-api","exp":\#(exp),"iat":\#(exp - 900),"iss":"twobits","jti":"x","sub":"s","tier":"devicecheck"}"#
            #expect(f.verifier.verify(f.signByHand(claims: withTier)).claims?.tier == .devicecheck)
        }
    }

    @Test func otherRequiredClaimsMissingOrMistypedAreMalformed() throws {
        try TokenFixture.with { f in
            let exp = Int64(Date().timeIntervalSince1970) + 600
            let complete: [String: String] = [
                "aud": #""main-api""#, "exp": "\(exp)", "iat": "\(exp - 900)", "iss": #""twobits""#, "jti": #""x""#, "sub": #""s""#,
                "tier": #""devicecheck""#,
            ]
            func json(_ members: [String: String]) -> String {
                "{" + members.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
            }
            #expect(f.verifier.verify(f.signByHand(claims: json(complete))).claims != nil)
            for name in complete.keys where name != "tier" {
                var without = complete
                without[name] = nil
                #expect(f.verifier.verify(f.signByHand(claims: json(without))).failure == .malformed, "without \(name)")
            }
            var stringExp = complete
            stringExp["exp"] = "\"\(exp)\""
            #expect(f.verifier.verify(f.signByHand(claims: json(stringExp))).failure == .malformed)
        }
    }

    @Test func checksRunInTheDocumentedOrder() throws {
        // Structure, key, signature, issuer, audience, expiry: an expired token for the wrong audience
        // reports the audience, and a token of an unknown key never gets to its claims.
        try TokenFixture.with { f in
            let token = f.issuer.issue(subject: "s", tier: .devicecheck, limitedUse: false, ttlSeconds: 60, now: referenceDate).token
            #expect(TokenVerifier(keys: [f.key], issuer: "twobits", audience: "other").verify(token).failure == .wrongAudience)
            #expect(TokenVerifier(keys: [f.key], issuer: "other", audience: "other").verify(token).failure == .wrongIssuer)
            #expect(TokenVerifier(keys: [], issuer: "twobits", audience: "main-api").verify(token).failure == .unknownKey)
            #expect(TokenVerifier(keys: [f.key], issuer: "twobits", audience: "main-api").verify(token).failure == .expired)
        }
    }
}

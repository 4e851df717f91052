import Foundation
import TokenSigning
import TwoBitsCrypto

/// JWS decoding and verification: a verifier never accepts a mutated valid token. One valid token is
/// made at start with a key of its own; the input is read as edits to it (4 bytes each: position, op,
/// byte; a position with its high bit set counts from the end, where the signature is). The edited
/// token verifies only when it is the original. The raw input, as a token, never verifies.
enum JWSCheck {
    struct Fixture: Sendable {
        let token: [UInt8]
        let verifier: TokenVerifier
    }

    static let fixture: Fixture = {
        let directory = NSTemporaryDirectory() + "twobits-fuzz-jws-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard let key = try? SigningKeyStore(directory: directory).generate() else { fatalError("cannot make a signing key in \(directory)") }
        let issuer = TokenIssuer(key: key, issuer: "twobits", audience: "main-api")
        let token = issuer.issue(subject: "fuzz", tier: .devicecheck, limitedUse: false, ttlSeconds: 3_600).token
        let verifier = TokenVerifier(keys: [key], issuer: "twobits", audience: "main-api")
        guard case .success = verifier.verify(token) else { fatalError("the fixture's own token does not verify") }
        return Fixture(token: Array(token.utf8), verifier: verifier)
    }()

    static func mutate(_ token: [UInt8], with input: [UInt8]) -> [UInt8] {
        var t = token
        var i = 0
        while i + 3 < input.count {
            // The high bit counts the position from the end (the signature), the rest from the start.
            let offset = Int(input[i] & 0x7F) << 8 | Int(input[i + 1])
            let position = input[i] & 0x80 == 0 ? offset % (t.count + 1) : max(0, t.count - 1 - offset % (t.count + 1))
            let byte = input[i + 3]
            switch input[i + 2] % 4 {
            case 0 where position < t.count: t[position] = byte
            case 1: t.insert(byte, at: position)
            case 2 where position < t.count: t.remove(at: position)
            case 3 where position < t.count: t[position] ^= 1 << (byte % 8)
            default: break
            }
            i += 4
        }
        return t
    }

    static func check(_ input: [UInt8]) -> String? {
        let f = fixture
        let edited = mutate(f.token, with: input)
        let result = f.verifier.verify(String(decoding: edited, as: UTF8.self))
        if edited == f.token {
            guard case .success = result else { return "the unchanged token was refused: \(result)" }
        } else if case .success = result {
            return "a mutated token verified: \(String(decoding: edited, as: UTF8.self))"
        }
        if case .success = f.verifier.verify(String(decoding: input, as: UTF8.self)) { return "the raw input verified" }
        // Decoding alone: either nil or three parts whose signing input is the first two segments.
        let text = String(decoding: input, as: UTF8.self)
        if let parts = JWS.decode(text) {
            let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
            guard pieces.count == 3, parts.signingInput == Data((pieces[0] + "." + pieces[1]).utf8) else { return "decode split it wrongly" }
        }
        return nil
    }
}

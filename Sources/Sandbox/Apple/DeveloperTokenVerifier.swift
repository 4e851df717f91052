import DeviceCheckModel
import FoundationEssentials
import TwoBitsCrypto

/// Checks a developer JWT the way Apple does, and says which of Apple's answers a failure gets.
struct DeveloperTokenVerifier: Sendable {
    let teamID: String
    let keyID: String
    let publicKey: P256PublicKey
    let maxAgeSeconds: Int
    /// JWTs whose signature was already found good (`VerifiedSignatures` says why).
    let verifiedSignatures = VerifiedSignatures()

    enum Failure: Error, Equatable {
        /// 400 "Missing or badly formatted authorization token"
        case malformed
        /// 401 "Unable to verify authorization token"
        case unverified
        /// 401 expired
        case expired
    }

    /// Verifies `Authorization: Bearer <jwt>` (the two-bits API), or the bare `<jwt>` when `bearer` is false
    /// (`attestationData`, the form proven against Apple); returns the JWT on success.
    func verify(authorization: String?, now: Date, bearer: Bool = true) -> Result<String, Failure> {
        guard let authorization else { return .failure(.malformed) }
        if bearer, !authorization.hasPrefix("Bearer ") { return .failure(.malformed) }
        if !bearer, authorization.hasPrefix("Bearer ") { return .failure(.malformed) }
        // Spaces around the token are tolerated, as Apple does; inside it they make it malformed.
        let pieces = authorization.dropFirst(bearer ? "Bearer ".count : 0).split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard pieces.count == 1, case let jwt = String(pieces[0]), let parts = JWS.decode(jwt),
              parts.header["alg"]?.stringValue == "ES256",
              let kid = parts.header["kid"]?.stringValue,
              let iss = parts.claims["iss"]?.stringValue,
              let iat = parts.claims["iat"]?.intValue
        else { return .failure(.malformed) }
        guard kid == keyID, iss == teamID else { return .failure(.unverified) }
        if !verifiedSignatures.contains(jwt) {
            guard parts.signature.count == 64, publicKey.verifyES256(signature: parts.signature, message: parts.signingInput) else {
                return .failure(.unverified)
            }
            verifiedSignatures.insert(jwt)
        }
        let nowSeconds = Int64(now.timeIntervalSince1970)
        if iat > nowSeconds + 60 { return .failure(.unverified) }
        if nowSeconds - iat > Int64(maxAgeSeconds) { return .failure(.expired) }
        return .success(jwt)
    }
}

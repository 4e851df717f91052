public import FoundationEssentials
public import TwoBitsCrypto
import WireFormats

/// Verifies App Attest assertions against a stored key, Apple's steps in order. Stateless: the caller
/// supplies the stored key, app id and counter, and stores the new counter atomically.
public struct AssertionVerifier: Sendable {
    public let decoder: CBORDecoder

    public init(decoder: CBORDecoder = CBORDecoder()) { self.decoder = decoder }

    /// Verifies `assertion` (the CBOR `generateAssertion` returned) over `clientData` with the stored
    /// key (65-byte uncompressed point), for `appID`, whose last accepted counter is `storedCounter`.
    public func verify(assertion: Data, clientData: Data, publicKey: Data, appID: AppID, storedCounter: UInt32) throws(AppAttestFailure) -> VerifiedAssertion {
        let key: P256PublicKey
        do { key = try P256PublicKey(uncompressedPoint: publicKey) } catch { throw AppAttestFailure(.badFormat, at: .decode, "stored public key: \(error)") }
        return try verify(assertion: assertion, clientDataHash: SHA256Digest.hash(clientData), publicKey: key, appID: appID, storedCounter: storedCounter)
    }

    /// The same with the clientData already hashed and the key already parsed.
    public func verify(assertion: Data, clientDataHash: Data, publicKey: P256PublicKey, appID: AppID, storedCounter: UInt32) throws(AppAttestFailure) -> VerifiedAssertion {
        let object: CBORValue
        do { object = try decoder.decode(assertion) } catch { throw AppAttestFailure(.badFormat, at: .decode, "assertion: \(error)") }
        guard case .map = object else { throw AppAttestFailure(.badFormat, at: .decode, "the assertion is not a CBOR map") }
        guard let signature = object["signature"]?.bytesValue else { throw AppAttestFailure(.badFormat, at: .decode, "signature missing or not bytes") }
        guard let authBytes = object["authenticatorData"]?.bytesValue else {
            throw AppAttestFailure(.badFormat, at: .decode, "authenticatorData missing or not bytes")
        }
        guard clientDataHash.count == 32 else { throw AppAttestFailure(.badFormat, at: .decode, "clientDataHash is not 32 bytes") }
        // The AT flag real devices set here is ignored: assertion authenticator data never carries credential data.
        let authData = try AuthenticatorData(authBytes, kind: .assertion, decoder: decoder)

        // 1-3. nonce = SHA-256(authenticatorData ‖ clientDataHash); the signature is ECDSA-SHA256 over the nonce.
        let nonce = SHA256Digest.hash(authData.raw + clientDataHash)
        guard publicKey.verifyDER(signature: signature, message: nonce) else {
            throw AppAttestFailure(.badSignature, at: .signature, "the signature does not verify with the stored key")
        }

        // 4. RP ID hash.
        guard authData.rpIDHash == appID.rpIDHash else {
            throw AppAttestFailure(.rpIDMismatch, at: .rpID, "RP ID hash \(authData.rpIDHash.hexString) is not SHA-256(\"\(appID)\")")
        }

        // 5. counter strictly above the stored one.
        guard authData.counter > storedCounter else {
            throw AppAttestFailure(.counterNotIncreasing, at: .counter, "counter \(authData.counter) is not above the stored \(storedCounter)")
        }
        return VerifiedAssertion(counter: authData.counter, appID: appID)
    }
}

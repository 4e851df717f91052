#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireVocabulary

/// The App Attest tier: attest once, then one assertion per token; any failure becomes the reason to fall back.
extension TwoBitsClient {
    enum StrongOutcome {
        case token(ClientToken)
        case fallback(AppAttestStatus)
    }

    /// How a step of the strong tier left it.
    enum StrongExit: Error {
        case fallback(AppAttestStatus)
        /// The key is unusable (`invalidKey`, or TwoBits does not know it): discard it and attest a new one, once;
        /// the status is the reason when that was already done.
        case discardKey(AppAttestStatus)
        case client(TwoBitsClientError)
    }

    func strongTier(limitedUse: Bool, payload: Data?) async throws(TwoBitsClientError) -> StrongOutcome {
        guard await appAttest.isSupported else { return .fallback(.unsupported) }
        if backoff.isWaiting(now: configuration.now()) { return .fallback(.throttled) }
        var reattested = false
        while true {
            do throws(StrongExit) {
                let key = await keyStore.load()
                let token: ClientToken
                if let key, let artifact = key.artifact {
                    token = try await assert(keyID: key.keyID, artifact: artifact, limitedUse: limitedUse, payload: payload)
                } else {
                    token = try await attest(pendingKeyID: key?.keyID, limitedUse: limitedUse)
                }
                backoff.succeed()
                return .token(token)
            } catch {
                switch error {
                case .fallback(let status):
                    return .fallback(status)
                case .client(let clientError):
                    throw clientError
                case .discardKey(let status):
                    await keyStore.remove()
                    if reattested { return .fallback(status) }
                    reattested = true
                }
            }
        }
    }

    func attest(pendingKeyID: String?, limitedUse: Bool) async throws(StrongExit) -> ClientToken {
        let keyID: String
        if let pendingKeyID {
            keyID = pendingKeyID
        } else {
            do {
                keyID = try await appAttest.generateKey()
            } catch {
                throw platformExit(error, failed: .attestFailed)
            }
            // Kept before its attestation: an attestation Apple throttled is retried later with the same key.
            await keyStore.save(AttestedKey(keyID: keyID, artifact: nil))
        }
        let challenge = try await challengeBytes(failed: .attestFailed, purpose: .attestation)
        let object: Data
        do {
            object = try await appAttest.attestKey(keyID, clientDataHash: SystemSHA256.hash(challenge.bytes))
        } catch {
            throw platformExit(error, failed: .attestFailed)
        }
        let request = AttestationRequest(keyID: keyID, attestationObject: object.base64EncodedString(), challenge: challenge.text,
                                         deviceToken: await attachedDeviceToken(), installID: configuration.installID,
                                         limitedUse: limitedUse ? true : nil)
        let answer: TokenAnswer
        do {
            answer = try await relay.attest(request)
        } catch {
            throw relayExit(error, failed: .attestFailed)
        }
        guard answer.tier == .appattest, let artifact = answer.artifact else { throw .fallback(.attestFailed) }
        await keyStore.save(AttestedKey(keyID: keyID, artifact: artifact))
        return clientToken(answer, limitedUse: limitedUse, status: nil)
    }

    private func assert(keyID: String, artifact: String, limitedUse: Bool, payload: Data?) async throws(StrongExit) -> ClientToken {
        // An attested key asserts whatever the rollout says: `enroll` is not read here.
        let challenge = try await challengeBytes(failed: .assertFailed, purpose: .assertion)
        let clientData = ClientData(challenge: challenge.text, payload: payload)
        let assertion: Data
        do {
            assertion = try await appAttest.generateAssertion(keyID, clientDataHash: clientData.hash)
        } catch {
            throw platformExit(error, failed: .assertFailed)
        }
        let request = AssertionRequest(artifact: artifact, assertion: assertion.base64EncodedString(),
                                       clientData: clientData.bytes.base64EncodedString(), challenge: challenge.text,
                                       deviceToken: await attachedDeviceToken(), installID: configuration.installID,
                                       limitedUse: limitedUse ? true : nil)
        let answer: TokenAnswer
        do {
            answer = try await relay.assert(request)
        } catch {
            throw relayExit(error, failed: .assertFailed)
        }
        guard answer.tier == .appattest else { throw .fallback(.assertFailed) }
        return clientToken(answer, limitedUse: limitedUse, status: nil)
    }

    /// A challenge from TwoBits, checked to be 32 bytes of base64url before it goes into signed JSON. For an
    /// attestation, `enroll: false` (the install is outside the rollout, or TwoBits is at its attestation cap)
    /// sends the app to the DeviceCheck tier as `not_enrolled`; a pending key waits for a later call.
    func challengeBytes(failed: AppAttestStatus, purpose: ChallengeRequest.Purpose) async throws(StrongExit) -> (text: String, bytes: Data, expiresIn: Int) {
        let answer: ChallengeAnswer
        do {
            answer = try await relay.challenge(ChallengeRequest(installID: configuration.installID, purpose: purpose))
        } catch {
            throw relayExit(error, failed: failed)
        }
        if purpose == .attestation, answer.enroll == false { throw .fallback(.notEnrolled) }
        guard answer.challenge.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
              let bytes = Base64URL.decode(answer.challenge), bytes.count == 32 else { throw .fallback(failed) }
        return (answer.challenge, Data(bytes), answer.expiresIn)
    }

    /// A fresh DeviceCheck token for the strong tier's calls, when the configuration asks for one and the
    /// device can make it.
    private func attachedDeviceToken() async -> String? {
        guard configuration.attachesDeviceToken, await deviceCheck.isSupported else { return nil }
        return try? await deviceCheck.generateToken().base64EncodedString()
    }

    /// What an App Attest failure means for the flow.
    func platformExit(_ error: any Error, failed: AppAttestStatus) -> StrongExit {
        switch error as? PlatformFailure ?? .unknown(String(describing: error)) {
        case .invalidKey:
            return .discardKey(failed)
        case .serverUnavailable:
            backoff.fail(now: configuration.now(), random: configuration.random())
            return .fallback(.throttled)
        case .featureUnsupported:
            return .fallback(.unsupported)
        case .invalidInput, .unknown:
            return .fallback(failed)
        }
    }

    /// What a relay failure in the strong tier means for the flow.
    func relayExit(_ error: any Error, failed: AppAttestStatus) -> StrongExit {
        guard let failure = error as? RelayFailure else { return .fallback(.network) }
        switch failure {
        case .unreachable:
            return .fallback(.network)
        case .malformedAnswer:
            return .fallback(failed)
        case .refused(let status, let text, let reasonText, _):
            let code = APIErrorCode(rawValue: text), reason = reasonText.map(AppAttestRefusalReason.init(rawValue:))
            if code == .deviceBanned { return .client(.deviceBanned) }
            if reason == .keyRevoked { return .client(.keyRevoked) }
            if code == .notEnabled { return .fallback(.notEnrolled) }
            // TwoBits does not know the key (a restored ledger, an artifact of another server), or knows it
            // already attested: a new key, once.
            if reason == .keyUnknown || code == .keyAlreadyAttested { return .discardKey(failed) }
            if status >= 500 || status == 429 { return .fallback(.network) }
            return .fallback(failed)
        }
    }
}

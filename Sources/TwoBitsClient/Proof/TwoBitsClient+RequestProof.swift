#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Request proofs: the install's attested key signs one request (its method, path and body) over a one-time
/// `request_proof` challenge. App Attest or nothing: a proof has no fallback tier.
extension TwoBitsClient {
    /// The proof for one request, to send in its headers (`RequestProof.headers`); the body is sent unchanged.
    ///
    /// Attests a key first when the install has none. Made one at a time with the key's other assertions (the
    /// tokens'), in call order; send the request before signing the next, as TwoBits refuses a proof whose
    /// counter is not above the last one it verified (`counter_not_increasing`).
    ///
    /// - Parameters:
    ///   - method: the HTTP method as sent (`POST`).
    ///   - path: the request target from its `/`, query included, percent-encoding as sent (`/v1/payouts?x=1`).
    ///   - body: the exact body bytes sent (empty for none).
    /// - Throws: `TwoBitsClientError.requestProofUnavailable` when App Attest cannot sign now (never a weaker
    ///   signal instead), `.deviceBanned`, `.keyRevoked`.
    public func proof(method: String, path: String, body: Data = Data()) async throws(TwoBitsClientError) -> RequestProof {
        try await gate.run { () async throws(TwoBitsClientError) -> RequestProof in
            try await self.signRequest(method: method, path: path, body: body)
        }
    }

    /// Fetches one `request_proof` challenge ahead of the next `proof(...)` (e.g. when a payment screen opens),
    /// replacing any kept one. Single-use and short-lived: the next proof uses it, or a fresh one once it expired.
    /// A failure is ignored here: the proof fetches its own.
    public func prefetchProofChallenge() async {
        await gate.run { () async -> Void in await self.prefetch() }
    }

    private func prefetch() async {
        guard await appAttest.isSupported, let challenge = try? await challengeBytes(failed: .assertFailed, purpose: .requestProof) else { return }
        prefetchedChallenge = PrefetchedChallenge(
            text: challenge.text, bytes: challenge.bytes,
            usableUntil: configuration.now().addingTimeInterval(TimeInterval(challenge.expiresIn) - configuration.expiryMargin))
    }

    func signRequest(method: String, path: String, body: Data) async throws(TwoBitsClientError) -> RequestProof {
        guard await appAttest.isSupported else { throw .requestProofUnavailable(.unsupported) }
        if backoff.isWaiting(now: configuration.now()) { throw .requestProofUnavailable(.throttled) }
        var reattested = false
        while true {
            do throws(StrongExit) {
                var key = await keyStore.load()
                if key?.artifact == nil {
                    // The attestation's token is not needed here; the key is.
                    _ = try await attest(pendingKeyID: key?.keyID, limitedUse: false)
                    key = await keyStore.load()
                }
                guard let key, let artifact = key.artifact else { throw StrongExit.fallback(.attestFailed) }
                let proof = try await sign(keyID: key.keyID, artifact: artifact, method: method, path: path, body: body)
                backoff.succeed()
                return proof
            } catch {
                switch error {
                case .fallback(let status):
                    throw .requestProofUnavailable(status)
                case .client(let clientError):
                    throw clientError
                case .discardKey(let status):
                    await keyStore.remove()
                    if reattested { throw .requestProofUnavailable(status) }
                    reattested = true
                }
            }
        }
    }

    private func sign(keyID: String, artifact: String, method: String, path: String, body: Data) async throws(StrongExit) -> RequestProof {
        let challenge = try await proofChallenge()
        let clientData = ProofClientData(challenge: challenge.text, method: method, path: path, body: body)
        let assertion: Data
        do {
            assertion = try await appAttest.generateAssertion(keyID, clientDataHash: clientData.hash)
        } catch {
            throw platformExit(error, failed: .assertFailed)
        }
        return RequestProof(artifact: artifact, clientData: clientData.bytes, assertion: assertion)
    }

    /// The prefetched challenge while it is usable (taken: it serves one proof), a fresh one otherwise.
    private func proofChallenge() async throws(StrongExit) -> (text: String, bytes: Data) {
        if let kept = prefetchedChallenge {
            prefetchedChallenge = nil
            if configuration.now() < kept.usableUntil { return (kept.text, kept.bytes) }
        }
        let fresh = try await challengeBytes(failed: .assertFailed, purpose: .requestProof)
        return (fresh.text, fresh.bytes)
    }
}

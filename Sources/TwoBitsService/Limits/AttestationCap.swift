public import FoundationEssentials
import Locking

/// `app_attest.max_attestations_per_second`: a token bucket (burst one second's worth) that each challenge
/// answered `enroll: true` for an attestation takes from. Empty, the challenge answers `enroll: false`
/// rather than an error: the app uses the DeviceCheck tier and attests another time.
///
/// Per replica: the configured rate is what each replica allows.
public final class AttestationCap: Sendable {
    private let bucket: Lock<TokenBucket>
    private let now: @Sendable () -> Double

    public init(perSecond: Int, now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.now = now
        bucket = Lock(TokenBucket(ratePerSecond: Double(perSecond), burst: perSecond, now: now()))
    }

    /// Takes one attestation's room; false when none is left this instant.
    public func admit() -> Bool {
        let time = now()
        return bucket.withLock { $0.take(1, now: time) == nil }
    }
}

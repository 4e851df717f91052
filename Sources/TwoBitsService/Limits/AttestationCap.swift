public import FoundationEssentials
import Locking

/// `app_attest.max_attestations_per_second`: a token bucket (burst one second's worth) that each challenge
/// answered `enroll: true` for an attestation takes from. Empty, the challenge answers `enroll: false`
/// rather than an error: the app uses the DeviceCheck tier and attests another time.
///
/// A total for the deployment, as Apple's limit is: each replica's bucket holds its share (`LiveReplicas`: the rate
/// divided exactly, the burst rounded up), resized at the first challenge after the replica count changes.
public final class AttestationCap: Sendable {
    private struct State {
        var bucket: TokenBucket
        /// The replica count the bucket is sized for.
        var sizedFor: Int
    }

    private let perSecond: Int
    private let replicas: LiveReplicas
    private let state: Lock<State>
    private let now: @Sendable () -> Double

    public init(perSecond: Int, replicas: LiveReplicas = LiveReplicas(),
                now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.perSecond = perSecond
        self.replicas = replicas
        self.now = now
        let count = replicas.count
        state = Lock(State(bucket: TokenBucket(ratePerSecond: LiveReplicas.share(ofRate: Double(perSecond), replicas: count),
                                               burst: LiveReplicas.share(ofCount: perSecond, replicas: count), now: now()),
                           sizedFor: count))
    }

    /// Takes one attestation's room; false when none is left this instant.
    public func admit() -> Bool {
        let time = now()
        let count = replicas.count
        return state.withLock { s in
            if s.sizedFor != count {
                s.bucket.resize(ratePerSecond: LiveReplicas.share(ofRate: Double(perSecond), replicas: count),
                                burst: LiveReplicas.share(ofCount: perSecond, replicas: count), now: time)
                s.sizedFor = count
            }
            return s.bucket.take(1, now: time) == nil
        }
    }
}

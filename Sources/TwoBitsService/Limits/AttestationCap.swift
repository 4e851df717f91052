public import FoundationEssentials
import Locking
import Mechanisms

/// `app_attest.max_attestations_per_second`: a token bucket (burst one second's worth) that each challenge
/// answered `enroll: true` for an attestation takes from. Empty, the challenge answers `enroll: false`
/// rather than an error: the app uses the DeviceCheck tier and attests another time.
///
/// A total for the deployment, as Apple's limit is: each replica's bucket holds its share (`LiveReplicas`: the rate
/// divided exactly, the burst rounded up), resized at the first challenge after the replica count changes.
///
/// No one caller drains it: an install id is enrolled at most `maxPerInstall` times a window (the challenge's
/// lifetime), and challenges without an install id take at most half the rate, so that honest installs always
/// keep a share. Install ids are the app's word: a relay in front must rate-limit challenges per signed-in user
/// (docs/examples/relay.py), which TwoBits cannot see.
public final class AttestationCap: Sendable {
    /// Enrollments one install id gets per window: a retry after a failed attestation, not a stream.
    public static let maxPerInstall = 2
    /// Install ids remembered at once; past it the expired ones are forgotten, then (a flood of made-up ids) all.
    static let maxTrackedInstalls = 100_000

    private struct State {
        var bucket: TokenBucket
        /// Challenges without an install id take from this too: half the rate and burst.
        var anonymous: TokenBucket
        /// The replica count the buckets are sized for.
        var sizedFor: Int
        /// Install id → (enrollments, start of its window).
        var perInstall: [String: (count: Int, since: Double)] = [:]
    }

    private let perSecond: Int
    private let window: Double
    private let replicas: LiveReplicas
    private let state: Lock<State>
    private let now: @Sendable () -> Double

    /// `window`: seconds over which `maxPerInstall` counts (the challenge's lifetime).
    public init(perSecond: Int, replicas: LiveReplicas = LiveReplicas(), window: TimeInterval = 300,
                now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.perSecond = perSecond
        self.window = window
        self.replicas = replicas
        self.now = now
        let count = replicas.count
        let time = now()
        state = Lock(State(bucket: Self.bucket(perSecond, count, now: time), anonymous: Self.bucket(perSecond, count, now: time, half: true),
                           sizedFor: count))
    }

    private static func bucket(_ perSecond: Int, _ replicas: Int, now: Double, half: Bool = false) -> TokenBucket {
        let rate = LiveReplicas.share(ofRate: Double(perSecond), replicas: replicas) / (half ? 2 : 1)
        let burst = LiveReplicas.share(ofCount: perSecond, replicas: replicas)
        return TokenBucket(ratePerSecond: rate, burst: half ? max(1, (burst + 1) / 2) : burst, now: now)
    }

    /// Takes one attestation's room for `installID` (nil: the app sent none); false when none is left this
    /// instant, or this install had its share of the window.
    public func admit(installID: String?) -> Bool {
        let time = now()
        let count = replicas.count
        return state.withLock { s in
            if s.sizedFor != count {
                let main = Self.bucket(perSecond, count, now: time), half = Self.bucket(perSecond, count, now: time, half: true)
                s.bucket.resize(ratePerSecond: main.ratePerSecond, burst: Int(main.capacity), now: time)
                s.anonymous.resize(ratePerSecond: half.ratePerSecond, burst: Int(half.capacity), now: time)
                s.sizedFor = count
            }
            if let installID, let seen = s.perInstall[installID], time - seen.since < window, seen.count >= Self.maxPerInstall { return false }
            if installID == nil {
                s.anonymous.refill(now: time)
                guard s.anonymous.secondsUntilAvailable(1) == 0 else { return false }
            }
            guard s.bucket.take(1, now: time) == nil else { return false }
            if installID == nil { _ = s.anonymous.take(1, now: time) }
            if let installID { Self.record(installID, at: time, window: window, in: &s.perInstall) }
            return true
        }
    }

    private static func record(_ installID: String, at time: Double, window: Double, in perInstall: inout [String: (count: Int, since: Double)]) {
        if let seen = perInstall[installID], time - seen.since < window {
            perInstall[installID] = (seen.count + 1, seen.since)
            return
        }
        if perInstall.count >= maxTrackedInstalls {
            perInstall = perInstall.filter { time - $0.value.since < window }
            if perInstall.count >= maxTrackedInstalls { perInstall.removeAll(keepingCapacity: true) }
        }
        perInstall[installID] = (1, time)
    }
}

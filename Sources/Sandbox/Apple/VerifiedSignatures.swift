import Locking

/// The developer JWTs whose ES256 signature the sandbox has already checked, byte for byte.
///
/// Why: a team's backend sends the same JWT on every call for up to an hour, and checking its signature
/// again (a P-256 verification) was a large share of the sandbox's CPU in the benchmarks, taken from the
/// machine the service under test runs on (measured: Benchmarks/HISTORY.md, 2026-11-26, 09:20-11:15). Real Apple spends none of ours. Only an identical string is remembered,
/// so the answer is the one a fresh check would give; the claims and the clock are still checked each call.
final class VerifiedSignatures: Sendable {
    /// Few: one JWT per signing key and period is what a well-behaved client sends.
    static let capacity = 8

    private let recent = Lock<[String]>([])

    func contains(_ jwt: String) -> Bool {
        recent.withLock { $0.contains(jwt) }
    }

    /// Remembers `jwt`, forgetting the oldest beyond `capacity`.
    func insert(_ jwt: String) {
        recent.withLock { list in
            guard !list.contains(jwt) else { return }
            if list.count >= Self.capacity { list.removeFirst() }
            list.append(jwt)
        }
    }
}

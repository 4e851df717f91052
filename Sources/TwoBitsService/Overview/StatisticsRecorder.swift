import FoundationEssentials
import Ledger
import Locking

/// Counts the overview's figures in memory and adds them to the ledger's hourly counters every few
/// seconds (and at shutdown): the request path pays a lock and a dictionary update, never a write.
/// A flush that fails keeps its counts for the next one, up to `maxPending` distinct counters.
final class StatisticsRecorder: Sendable {
    /// Upper bounds of the Apple latency buckets, in milliseconds; the last bucket is everything above.
    static let latencyBucketsMilliseconds: [Double] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000]
    /// Hours of counters the ledger keeps.
    static let retention: TimeInterval = 35 * 86_400
    /// Distinct counters held while the ledger refuses writes; past it new ones are dropped (and counted).
    static let maxPending = 10_000

    private struct Key: Hashable {
        var family: String, subject: String, outcome: String, bucket: Int, hour: Int64
    }

    private let pending = Lock<(counts: [Key: Int64], dropped: Int)>(([:], 0))
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    func count(_ family: String, _ subject: String, _ outcome: String, bucket: Int = 0) {
        let key = Key(family: family, subject: subject, outcome: outcome, bucket: bucket, hour: StatisticIncrement.hour(of: now()))
        pending.withLock { state in
            if state.counts[key] == nil, state.counts.count >= Self.maxPending { state.dropped += 1; return }
            state.counts[key, default: 0] += 1
        }
    }

    /// An Apple call, in the bucket of its latency (-1 when it has none: refused before it was sent).
    func appleCall(endpoint: String, outcome: String, seconds: Double?) {
        let bucket = seconds.map { s in Self.latencyBucketsMilliseconds.firstIndex(where: { s * 1000 <= $0 }) ?? Self.latencyBucketsMilliseconds.count } ?? -1
        count("apple", endpoint, outcome, bucket: bucket)
    }

    /// Counters dropped because the ledger was unavailable for too long.
    var dropped: Int { pending.withLock { $0.dropped } }

    /// Adds what was counted since the last flush to the ledger; on failure the counts wait for the next.
    func flush(to ledger: any StatisticsStore) async throws(StorageError) {
        let taken = pending.withLock { state -> [Key: Int64] in
            defer { state.counts = [:] }
            return state.counts
        }
        guard !taken.isEmpty else { return }
        let increments = taken.map { StatisticIncrement(family: $0.key.family, subject: $0.key.subject, outcome: $0.key.outcome,
                                                        bucket: $0.key.bucket, hour: $0.key.hour, count: $0.value) }
        do { try await ledger.addStatistics(increments, forgetBefore: now().addingTimeInterval(-Self.retention)) } catch {
            pending.withLock { state in
                for (key, value) in taken {
                    if state.counts[key] == nil, state.counts.count >= Self.maxPending { state.dropped += 1; continue }
                    state.counts[key, default: 0] += value
                }
            }
            throw error
        }
    }
}

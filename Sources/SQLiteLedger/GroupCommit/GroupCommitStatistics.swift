/// How the group commit has grouped writes: commits made, writes in them, the largest batch.
public struct GroupCommitStatistics: Sendable {
    public private(set) var commits = 0
    public private(set) var writes = 0
    public private(set) var largestBatch = 0

    mutating func record(batch: Int) {
        commits += 1
        writes += batch
        largestBatch = max(largestBatch, batch)
    }
}

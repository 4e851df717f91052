/// The last `capacity` updates Apple accepted, oldest first, so that a test can match every write to
/// the request that made it (the fault campaign's `write-audited`), not only count them per device.
struct WriteLog {
    /// Bounded so a long benchmark cannot grow the sandbox without end (about 150 bytes an entry).
    static let capacity = 200_000

    private(set) var entries: [SandboxWrite] = []
    /// How many updates were accepted in all, also those no longer kept.
    private(set) var total = 0

    mutating func append(atMilliseconds: Int64, deviceID: String, bit0: Bool?, bit1: Bool?, transactionID: String) {
        total += 1
        entries.append(SandboxWrite(sequence: total, atMilliseconds: atMilliseconds, deviceID: deviceID, bit0: bit0, bit1: bit1,
                                    transactionID: transactionID))
        // Drops a tenth at a time: the copy is paid once per capacity / 10 updates, not on every one.
        if entries.count > Self.capacity { entries.removeFirst(Self.capacity / 10) }
    }

    /// Up to `limit` entries with a sequence above `after`, oldest first.
    func page(after: Int, limit: Int) -> [SandboxWrite] {
        guard let first = entries.first else { return [] }
        let start = max(0, after - first.sequence + 1) // sequences are consecutive, so the index is arithmetic
        guard start < entries.count else { return [] }
        return Array(entries[start..<min(entries.count, start + limit)])
    }

    /// The oldest sequence still kept (total + 1 when none is).
    var oldest: Int { entries.first?.sequence ?? total + 1 }
}

/// Whether a loop woken for a few events pauses to gather more (`EventLoop.coalescingMicroseconds`): only
/// while pausing pays.
///
/// Under load a pause gathers events that would each have cost a wake of their own; on a quiet loop it
/// gathers nothing and only delays the answer. So after `fruitlessLimit` pauses in a row that gathered
/// nothing the loop stops pausing, and tries one pause again every `probeEvery` wakes to notice load
/// coming back. A quiet server therefore answers at once (but for one wake in `probeEvery`), and a loaded
/// one pauses on every sparse wake.
struct WakeCoalescing {
    static let fruitlessLimit = 4
    static let probeEvery = 64

    /// Pauses in a row that gathered no event.
    private var fruitless = 0
    /// Sparse wakes served without a pause since pausing stopped paying.
    private var skipped = 0

    /// Called for a wake that could pause: true to pause.
    mutating func shouldPause() -> Bool {
        guard fruitless >= Self.fruitlessLimit else { return true }
        skipped += 1
        guard skipped >= Self.probeEvery else { return false }
        skipped = 0
        return true
    }

    /// Called after a pause, with how many events it gathered.
    mutating func paused(gathered: Int) {
        // `skipped` needs no reset: it is 0 whenever a pause runs (never counted while pausing, zeroed by a probe).
        fruitless = gathered > 0 ? 0 : fruitless + 1
    }

    /// True while sparse wakes pause.
    var pausing: Bool { fruitless < Self.fruitlessLimit }
}

public import FoundationEssentials
import Mechanisms

/// The refresher's schedule as a value: when to renew, how many at once (a token bucket of
/// `maxRefreshesPerSecond`), and what each of Apple's answers does to the key and to the whole refresher
/// (a 429 or an outage backs every renewal off, exponentially with jitter). No clock, no I/O: the runner
/// (`ReceiptRefreshRunner`) feeds it times and answers and carries out what it returns.
public struct ReceiptRefresher: Sendable {
    public let settings: ReceiptRefreshSettings
    /// Renewals allowed now; refilled at `maxRefreshesPerSecond`, at most that many (times: dates, as seconds
    /// since the reference date).
    private var bucket: TokenBucket
    /// Throttles and outages pause every renewal, exponentially with equal jitter.
    private let backoff: ExponentialBackoff
    /// Throttles and outages in a row; a renewal that reaches Apple otherwise resets it.
    public private(set) var failuresInARow = 0
    /// No renewal before this time (a back-off).
    public private(set) var pausedUntil: Date?
    /// No key was due at the last lease: look again at this time.
    private var idleUntil: Date?
    /// Apple said Incorrect Environment at least once: later ones are counted, not logged.
    private var incorrectEnvironmentSeen = false

    public init(settings: ReceiptRefreshSettings, now: Date) {
        self.settings = settings
        bucket = TokenBucket(ratePerSecond: Double(settings.maxRefreshesPerSecond), burst: settings.maxRefreshesPerSecond,
                             now: now.timeIntervalSinceReferenceDate)
        backoff = ExponentialBackoff(base: .seconds(settings.baseBackoff), maximum: .seconds(settings.maxBackoff), jitter: .equal)
    }

    /// The next step at `now`; a `.refresh(limit:)` takes its renewals from the bucket.
    public mutating func next(now: Date) -> ReceiptRefreshStep {
        bucket.refill(onWallClock: now.timeIntervalSinceReferenceDate)
        if let pausedUntil, pausedUntil > now { return .wait(until: pausedUntil) }
        if let idleUntil, idleUntil > now { return .wait(until: idleUntil) }
        let whole = bucket.takeWhole()
        guard whole >= 1 else { return .wait(until: now.addingTimeInterval(bucket.secondsUntilAvailable(1))) }
        return .refresh(limit: whole)
    }

    /// The lease found `leased` of the `limit` keys asked for: the rest go back to the bucket, and with none
    /// due the refresher rests for `idleDelay`.
    public mutating func leased(_ leased: Int, of limit: Int, now: Date) {
        bucket.giveBack(Double(max(0, limit - leased)))
        idleUntil = leased == 0 ? now.addingTimeInterval(settings.idleDelay) : nil
    }

    /// Whether a leased key may be sent to Apple now; during a back-off it is postponed instead (`deferral`).
    public func mayRenew(now: Date) -> Bool { pausedUntil.map { $0 <= now } ?? true }

    /// A leased key not sent because of a back-off: it waits until the back-off ends.
    public func deferral(keyID: String, now: Date) -> (action: ReceiptRefreshAction, report: ReceiptRefreshReport) {
        (.postpone(until: max(pausedUntil ?? now, now)), ReceiptRefreshReport(keyID: keyID, outcome: .deferred, log: false))
    }

    /// What Apple's answer for `keyID` does. `jitter` in [0, 1) spreads the back-offs of replicas apart.
    public mutating func handle(_ renewal: ReceiptRenewal, keyID: String, now: Date,
                                jitter: Double) -> (action: ReceiptRefreshAction, report: ReceiptRefreshReport) {
        switch renewal {
        case .renewed(let receipt):
            failuresInARow = 0
            return (.store(receipt), ReceiptRefreshReport(keyID: keyID, outcome: .renewed, log: false))
        case .notYet:
            failuresInARow = 0
            return (.postpone(until: now.addingTimeInterval(settings.notYetDelay)), ReceiptRefreshReport(keyID: keyID, outcome: .notYet, log: false))
        case .noData:
            failuresInARow = 0
            return (.stop, ReceiptRefreshReport(keyID: keyID, outcome: .noData, detail: "Apple has no data for this key's receipt", log: true))
        case .throttled:
            return (.postpone(until: backOff(now: now, jitter: jitter)), ReceiptRefreshReport(keyID: keyID, outcome: .throttled, log: false))
        case .unavailable(let detail):
            return (.postpone(until: backOff(now: now, jitter: jitter)),
                    ReceiptRefreshReport(keyID: keyID, outcome: .unavailable, detail: detail, log: failuresInARow == 1))
        case .incorrectEnvironment:
            let first = !incorrectEnvironmentSeen
            incorrectEnvironmentSeen = true
            return (.postpone(until: now.addingTimeInterval(settings.refusedDelay)),
                    ReceiptRefreshReport(keyID: keyID, outcome: .incorrectEnvironment,
                                         detail: "Apple answered Incorrect Environment: app_attest.environment (or the Apple endpoint) does not match the keys' receipts",
                                         log: first))
        case .refused(let detail):
            failuresInARow = 0
            return (.postpone(until: now.addingTimeInterval(settings.refusedDelay)),
                    ReceiptRefreshReport(keyID: keyID, outcome: .refused, detail: detail, log: true))
        }
    }

    /// Pauses every renewal: `baseBackoff` doubled per failure in a row, capped, then scaled by 0.5-1.0.
    private mutating func backOff(now: Date, jitter: Double) -> Date {
        failuresInARow += 1
        let until = now.addingTimeInterval(backoff.delay(afterFailures: failuresInARow, random: jitter).inSeconds)
        pausedUntil = until
        return until
    }
}

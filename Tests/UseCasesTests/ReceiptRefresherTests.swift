import Foundation
import Testing
import UseCases

/// The refresher's schedule alone: the rate per replica, the back-off on 429 and outages (exponential,
/// jittered, pausing every renewal), the stop after 404, Incorrect Environment logged once.
struct ReceiptRefresherTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let renewed = RenewedReceipt(receipt: Data([1]), riskMetric: 3, creation: Date(timeIntervalSince1970: 1_800_000_000),
                                 notBefore: Date(timeIntervalSince1970: 1_800_086_400), expiration: Date(timeIntervalSince1970: 1_807_776_000))

    @Test func atMostTheConfiguredRenewalsASecond() {
        var refresher = ReceiptRefresher(settings: ReceiptRefreshSettings(maxRefreshesPerSecond: 5), now: start)
        #expect(refresher.next(now: start) == .refresh(limit: 5), "a burst of the rate")
        refresher.leased(5, of: 5, now: start)
        guard case .wait(let until) = refresher.next(now: start) else { Issue.record("the bucket is empty"); return }
        #expect(until > start && until <= start.addingTimeInterval(0.2))
        #expect(refresher.next(now: start.addingTimeInterval(0.4)) == .refresh(limit: 2), "0.4 s refills two")
        refresher.leased(2, of: 2, now: start.addingTimeInterval(0.4))
        #expect(refresher.next(now: start.addingTimeInterval(10)) == .refresh(limit: 5), "never more than a second's worth")
    }

    @Test func keysNotLeasedGoBackAndNoneDueRests() {
        var refresher = ReceiptRefresher(settings: ReceiptRefreshSettings(maxRefreshesPerSecond: 4, idleDelay: 10), now: start)
        #expect(refresher.next(now: start) == .refresh(limit: 4))
        refresher.leased(0, of: 4, now: start)
        #expect(refresher.next(now: start) == .wait(until: start.addingTimeInterval(10)))
        #expect(refresher.next(now: start.addingTimeInterval(10)) == .refresh(limit: 4))
    }

    @Test func throttlingBacksOffExponentiallyWithJitterAndPausesEveryRenewal() {
        let settings = ReceiptRefreshSettings(baseBackoff: 30, maxBackoff: 200)
        var refresher = ReceiptRefresher(settings: settings, now: start)
        var pauses: [TimeInterval] = []
        for _ in 0..<5 {
            let (action, report) = refresher.handle(.throttled, keyID: "k", now: start, jitter: 1)
            #expect(report.outcome == .throttled)
            guard case .postpone(let until) = action else { Issue.record("a throttled key waits"); return }
            pauses.append(until.timeIntervalSince(start))
        }
        #expect(pauses == [30, 60, 120, 200, 200], "doubled, capped")
        #expect(!refresher.mayRenew(now: start.addingTimeInterval(199)))
        #expect(refresher.next(now: start.addingTimeInterval(100)) == .wait(until: start.addingTimeInterval(200)))
        #expect(refresher.deferral(keyID: "other", now: start).action == .postpone(until: start.addingTimeInterval(200)))
        // Jitter spreads replicas: half the delay at 0.
        var jittered = ReceiptRefresher(settings: settings, now: start)
        #expect(jittered.handle(.unavailable("503"), keyID: "k", now: start, jitter: 0).action == .postpone(until: start.addingTimeInterval(15)))
        // A renewal that reaches Apple ends the run of failures.
        #expect(refresher.handle(.renewed(renewed), keyID: "k", now: start.addingTimeInterval(300), jitter: 1).action == .store(renewed))
        #expect(refresher.failuresInARow == 0 && refresher.mayRenew(now: start.addingTimeInterval(300)))
        #expect(refresher.handle(.throttled, keyID: "k", now: start.addingTimeInterval(300), jitter: 1).action == .postpone(until: start.addingTimeInterval(330)))
    }

    @Test func noDataStopsTheKey() {
        var refresher = ReceiptRefresher(settings: ReceiptRefreshSettings(), now: start)
        let (action, report) = refresher.handle(.noData, keyID: "k", now: start, jitter: 0.5)
        #expect(action == .stop && report.outcome == .noData && report.log)
        #expect(refresher.mayRenew(now: start), "a 404 is about one key, not a reason to pause")
    }

    @Test func incorrectEnvironmentIsLoggedOnceAndCountedEachTime() {
        var refresher = ReceiptRefresher(settings: ReceiptRefreshSettings(refusedDelay: 86_400), now: start)
        let first = refresher.handle(.incorrectEnvironment, keyID: "a", now: start, jitter: 0)
        let second = refresher.handle(.incorrectEnvironment, keyID: "b", now: start, jitter: 0)
        #expect(first.report.outcome == .incorrectEnvironment && first.report.log)
        #expect(second.report.outcome == .incorrectEnvironment && !second.report.log)
        #expect(first.action == .postpone(until: start.addingTimeInterval(86_400)))
        let refused = refresher.handle(.refused("bad_chain"), keyID: "c", now: start, jitter: 0)
        #expect(refused.report.outcome == .refused && refused.report.detail == "bad_chain")
        #expect(refresher.handle(.notYet, keyID: "d", now: start, jitter: 0).action == .postpone(until: start.addingTimeInterval(3_600)))
    }

    @Test func theRiskPolicyRefusesOnlyAboveItsMaximumAndOnlyWhenToldTo() {
        let refuse = RiskMetricPolicy(maxMetric: 5, action: .refuse)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(refuse.verdict(metric: nil, attestedAt: now, now: now) == .allowed)
        #expect(refuse.verdict(metric: 5, attestedAt: now, now: now) == .allowed)
        #expect(refuse.verdict(metric: 6, attestedAt: now, now: now) == .exceeded(metric: 6))
        #expect(RiskMetricPolicy(maxMetric: 5, action: .flag).verdict(metric: 6, attestedAt: now, now: now) == .allowed)
    }

    @Test func anUnknownMetricFailsClosedPastItsGraceUnderRefuseOnly() {
        let refuse = RiskMetricPolicy(maxMetric: 5, action: .refuse, unknownGrace: 3_600)
        let attested = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(refuse.verdict(metric: nil, attestedAt: attested, now: attested.addingTimeInterval(3_600)) == .allowed)
        #expect(refuse.verdict(metric: nil, attestedAt: attested, now: attested.addingTimeInterval(3_601)) == .unknownTooLong(attestedAt: attested))
        // A known metric is judged on its value however old the key.
        #expect(refuse.verdict(metric: 2, attestedAt: attested, now: attested.addingTimeInterval(86_400 * 20)) == .allowed)
        let flag = RiskMetricPolicy(maxMetric: 5, action: .flag, unknownGrace: 3_600)
        #expect(flag.verdict(metric: nil, attestedAt: attested, now: attested.addingTimeInterval(86_400)) == .allowed)
        // Two days by default; the attestation-time check follows the action unless told.
        #expect(RiskMetricPolicy(maxMetric: 5, action: .refuse).unknownGrace == 172_800)
        #expect(RiskMetricPolicy(maxMetric: 5, action: .refuse).checkAtAttestation)
        #expect(!RiskMetricPolicy(maxMetric: 5, action: .flag).checkAtAttestation)
        #expect(RiskMetricPolicy(maxMetric: 5, action: .flag, checkAtAttestation: true).checkAtAttestation)
    }
}

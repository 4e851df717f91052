public import FoundationEssentials
public import Ledger

/// Each replica's receipt refresher: leases due keys from the ledger (never a key another replica holds),
/// renews each through `ReceiptRenewing` at the pace `ReceiptRefresher` sets, and stores what came back.
/// It reports every renewal (`onReport`); the service counts and logs them.
public actor ReceiptRefreshRunner {
    private var refresher: ReceiptRefresher
    private let store: any AppAttestReceiptStore
    private let renewer: any ReceiptRenewing
    /// This replica's name in the leases.
    public nonisolated let owner: String
    private let clock: @Sendable () -> Date
    private let jitter: @Sendable () -> Double
    private let onReport: @Sendable (ReceiptRefreshReport) -> Void

    public init(settings: ReceiptRefreshSettings, store: any AppAttestReceiptStore, renewer: any ReceiptRenewing, owner: String,
                clock: @escaping @Sendable () -> Date = { Date() }, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                onReport: @escaping @Sendable (ReceiptRefreshReport) -> Void = { _ in }) {
        refresher = ReceiptRefresher(settings: settings, now: clock())
        self.store = store
        self.renewer = renewer
        self.owner = owner
        self.clock = clock
        self.jitter = jitter
        self.onReport = onReport
    }

    /// Runs until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            let wait = await step()
            if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64(min(wait, 60) * 1_000))) }
        }
    }

    /// One step: renews what is due and allowed now and returns 0, or returns how many seconds to wait.
    @discardableResult
    public func step() async -> TimeInterval {
        let now = clock()
        switch refresher.next(now: now) {
        case .wait(let until): return max(0.001, until.timeIntervalSince(now))
        case .refresh(let limit):
            let keys: [AppAttestKeyRecord]
            do {
                keys = try await store.leaseDueReceipts(owner: owner, until: now.addingTimeInterval(refresher.settings.leaseSeconds),
                                                        activeSince: now.addingTimeInterval(-refresher.settings.activeWindow), now: now, limit: limit)
            } catch {
                refresher.leased(0, of: limit, now: now)
                onReport(ReceiptRefreshReport(keyID: "", outcome: .storageFailed, detail: error.message, log: true))
                return 0
            }
            refresher.leased(keys.count, of: limit, now: now)
            for key in keys { await renew(key) }
            return 0
        }
    }

    private func renew(_ key: AppAttestKeyRecord) async {
        let decided: (action: ReceiptRefreshAction, report: ReceiptRefreshReport)
        if refresher.mayRenew(now: clock()) {
            let renewal = await renewer.renew(receipt: key.receipt, key: key, now: clock())
            decided = refresher.handle(renewal, keyID: key.keyID, now: clock(), jitter: jitter())
        } else {
            decided = refresher.deferral(keyID: key.keyID, now: clock())
        }
        do {
            switch decided.action {
            case .store(let receipt):
                let stored = try await store.storeRenewedReceipt(keyID: key.keyID, owner: owner, receipt: receipt.receipt, riskMetric: receipt.riskMetric,
                                                                 notBefore: receipt.notBefore, expiration: receipt.expiration, now: clock())
                // The lease ran out during the call and another replica took the key: its answer wins.
                if !stored { onReport(ReceiptRefreshReport(keyID: key.keyID, outcome: .storageFailed, detail: "the lease ran out", log: true)); return }
            case .postpone(let until): try await store.postponeReceiptRefresh(keyID: key.keyID, owner: owner, retryAt: until)
            case .stop: try await store.stopReceiptRefresh(keyID: key.keyID, owner: owner, now: clock())
            }
        } catch {
            onReport(ReceiptRefreshReport(keyID: key.keyID, outcome: .storageFailed, detail: error.message, log: true))
            return
        }
        onReport(decided.report)
    }
}

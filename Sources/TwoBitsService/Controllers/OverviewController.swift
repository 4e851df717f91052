import FoundationEssentials
import HTTPServer
import Ledger
import UseCases

/// `GET /v1/admin/overview` (role `admin`): the console's figures from the ledger's hourly counters, which
/// every replica adds to, so they survive restarts and cover the whole deployment.
struct OverviewController: Sendable {
    let statistics: StatisticsRecorder
    let ledger: any StatisticsStore & PendingOrderStore
    /// Nil without a `tokens` section (no signing keys to show).
    let keys: KeyRing?

    func register(in routes: inout RouteTable) {
        routes.add("GET", "/v1/admin/overview", .role(.admin)) { _ throws(APIError) in
            let now = Date()
            // This process's latest counts first, so what just happened here shows; a failure keeps them for later.
            try? await statistics.flush(to: ledger)
            let counters: [StatisticIncrement]
            let pending: [PendingDeviceAction]
            do throws(StorageError) {
                counters = try await ledger.statistics(since: now.addingTimeInterval(-Double(OverviewReport.claimDays) * 86_400))
                pending = try await ledger.pendingActions()
            } catch { throw APIError.storageUnavailable(error) }
            let report = OverviewReport(statistics: counters, pendingBans: pending.count, keys: keys?.statuses() ?? [],
                                        dropped: statistics.dropped, now: now)
            return .json(200, report)
        }
    }
}

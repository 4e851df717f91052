import DeviceCheckModel
import Foundation
import Ledger
import Policy
@testable import UseCases

/// The use cases over one device's bits, built as the composition root builds them (one `DeviceBits`, the
/// admission, bans, pending orders, installs and promotions over it), under the names the suites call.
struct BitUseCases: Sendable {
    let bits: DeviceBits
    let admission: DeviceAdmission
    let bans: BanService
    let pendingOrders: PendingOrderService
    let installs: InstallService
    let promotions: PromotionService

    init(configuration: PolicyConfiguration, apple: any DeviceCheckAPI, ledger: any Ledger, now: @escaping @Sendable () -> Date = { Date() }) {
        let rules = BitRules(configuration: configuration)
        bits = DeviceBits(rules: rules, apple: apple, ledger: ledger, now: now)
        admission = DeviceAdmission(bits: bits, ledger: ledger)
        bans = BanService(bits: bits)
        pendingOrders = PendingOrderService(rules: rules, ledger: ledger, now: now)
        installs = InstallService(bits: bits, admission: admission)
        promotions = PromotionService(bits: bits)
    }

    var layout: BitLayout { bits.layout }
    func meaning(of result: QueryResult) -> DeviceMeaning { bits.meaning(of: result) }

    func admit(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> Admission {
        try await admission.admit(token: token, installID: installID, client: client)
    }

    /// `admit`, reduced to the device's meaning (what most tests look at).
    func admitMeaning(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> DeviceMeaning? {
        try await admit(token: token, installID: installID, client: client).meaning
    }

    func setBanned(_ banned: Bool, token: DeviceToken, reason: String?, client: String) async throws(PolicyError) -> BanOutcome {
        try await bans.setBanned(banned, token: token, reason: reason, client: client)
    }

    func orderPending(_ kind: PendingDeviceAction.Kind, installID: String, reason: String?, client: String) async throws(PolicyError) -> BanOutcome {
        try await pendingOrders.order(kind, installID: installID, reason: reason, client: client)
    }

    func inspect(token: DeviceToken) async throws(PolicyError) -> DeviceMeaning { try await bans.inspect(token: token) }

    func registerInstall(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> InstallOutcome {
        try await installs.registerInstall(token: token, installID: installID, client: client)
    }

    func claim(_ promotionID: String, token: DeviceToken, client: String, resuming: Bool = false) async throws(PolicyError) -> ClaimOutcome {
        try await promotions.claim(promotionID, token: token, client: client, resuming: resuming)
    }

    func prepareClaim(_ promotionID: String, token: DeviceToken, client: String, resuming: Bool = false) async throws(PolicyError) -> ClaimStep {
        try await promotions.prepareClaim(promotionID, token: token, client: client, resuming: resuming)
    }

    func writeClaim(_ claim: ClaimWrite) async throws(PolicyError) -> ClaimOutcome { try await promotions.writeClaim(claim) }

    func eligibility(_ promotionID: String, token: DeviceToken) async throws(PolicyError) -> Eligibility {
        try await promotions.eligibility(promotionID, token: token)
    }

    func reconcileInterruptedWrites() async throws(PolicyError) -> Int { try await bits.reconcileInterruptedWrites() }
    func retryUnsavedResolutions() async { await bits.retryUnsavedResolutions() }
    var unsavedResolutionCount: Int { bits.unsavedResolutionCount }
}

import DeviceDomain
import FoundationEssentials

extension AppAttestKeyRecord {
    /// An `app_attest_keys` row (`SELECT *`); an environment other than Apple's two is a `StorageError`.
    public init(row r: some LedgerRow) throws(StorageError) {
        self.init(keyID: try r.text("key_id") ?? "", publicKey: try r.data("public_key") ?? Data(), counter: UInt32(try r.integer("counter") ?? 0),
                  receipt: try r.data("receipt") ?? Data(), environment: try r.parsed("environment", as: "an environment", AppleEnvironment.init(rawValue:)), appID: try r.text("app_id") ?? "",
                  validationCategory: try r.integer("validation_category").map(Int.init), firstSeen: try r.time("first_seen_ms") ?? Date(timeIntervalSince1970: 0),
                  revokedAt: try r.time("revoked_ms"), revokedReason: try r.text("revoked_reason"),
                  riskMetric: try r.integer("risk_metric").map(Int.init))
    }
}

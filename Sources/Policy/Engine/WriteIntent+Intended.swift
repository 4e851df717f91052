import DeviceCheckModel
import Ledger

// The ledger (layer 0) stores a write intent's bits and month as text and cannot see `Bits` or `YearMonth`
// (DeviceCheckModel sits above it, over libcrypto); the policy is the one place that converts them, both ways.
extension WriteIntent {
    /// The intent to write `bits`, which Apple stamps with `month`.
    init(id: String, tokenPrefix: String, bits: Bits, month: YearMonth, successResult: AuditResult, event: AuditEvent) {
        self.init(id: id, tokenPrefix: tokenPrefix, bits: bits.description, month: month.description, successResult: successResult,
                  event: event)
    }

    /// Whether `state`, read after the write, shows that it happened: the intended bits, stamped in the intent's
    /// month or later. False when the stored bits or month cannot be read (nothing can show such a write).
    func isShown(by state: BitState) -> Bool {
        guard let bits = Bits(self.bits), let month = YearMonth(self.month) else { return false }
        return state.bits == bits && state.lastUpdated >= month
    }
}

public import DeviceCheckModel
public import Ledger

// The ledger (layer 1) stores a write intent's bits and month as text and cannot see `Bits` or `YearMonth`
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

    /// The resolution of this intent (left `unknown`) from a query answer read after it: written when the device
    /// shows the intended bits stamped in the intent's month or later, otherwise not written.
    public func settlement(from result: QueryResult) -> WriteResolution {
        var written = false
        if case .state(let state) = result { written = isShown(by: state) }
        let verdict = written ? "the device shows the intended bits" : "the device does not show the intended bits"
        return WriteResolution(id: id, result: written ? successResult : .failed, bitsAfter: written ? event.bitsAfter : nil,
                               reason: WritePlan.joined(event.reason, "settled by a later query of the device token: \(verdict)"), transactionID: nil)
    }
}

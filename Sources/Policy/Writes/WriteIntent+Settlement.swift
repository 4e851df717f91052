public import DeviceCheckModel
public import Ledger

extension WriteIntent {
    /// Whether `state`, read after the write, shows that it happened: the intended bits, stamped in the intent's
    /// month or later.
    func isShown(by state: BitState) -> Bool {
        state.bits == bits && state.lastUpdated >= month
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

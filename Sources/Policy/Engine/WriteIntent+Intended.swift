import DeviceCheckModel
import Ledger

extension WriteIntent {
    /// Whether `state`, read after the write, shows that it happened: the intended bits, stamped in the intent's
    /// month or later.
    func isShown(by state: BitState) -> Bool {
        state.bits == bits && state.lastUpdated >= month
    }
}

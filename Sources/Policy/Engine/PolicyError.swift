public import DeviceCheckModel
public import Ledger

/// Why a policy operation did not happen.
public enum PolicyError: Error, Sendable {
    /// Apple gave no usable answer (bad token, our credentials, or transient).
    case apple(DeviceCheckError)
    /// The layout has no meaning for this operation; the message names the layout.
    case notEnabled(String)
    case unknownPromotion(String)
    case promotionNotActive(id: String, starts: YearMonth, ends: YearMonth?)
    /// The device has claimed this promotion; the month of the claim.
    case alreadyClaimed(YearMonth)
    /// Banned; `appliedPending` says whether a pending ban was applied by this very request.
    case deviceBanned(appliedPending: PendingDeviceAction.Kind? = nil)
    case storage(StorageError)
    /// The request was answered (its deadline passed, or the server is stopping) before Apple's update
    /// started: the write was not sent.
    case cancelled
}

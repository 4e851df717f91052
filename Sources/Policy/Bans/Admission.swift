public import Ledger

/// A device let through `BitPolicy.admit`.
public struct Admission: Sendable {
    /// The device's meaning (nil under a layout without a ban meaning: only validated).
    public let meaning: DeviceMeaning?
    /// A pending ban or unban for the install id that was written to the bits first.
    public let appliedPending: PendingDeviceAction.Kind?
}

public import Ledger
public import Policy

/// A device let through `DeviceAdmission.admit`.
public struct Admission: Sendable {
    /// The device's meaning (nil under a layout without a ban meaning: only validated).
    public let meaning: DeviceMeaning?
    /// A pending ban or unban for the install id that was written to the bits first.
    public let appliedPending: PendingDeviceAction.Kind?
}

public import Ledger

/// What one page of the audit trail says of the newest order applied through an install id.
public enum OrderHistoryScan: Sendable, Equatable {
    /// The page holds it: the kind known applied (nil: a ban of unknown outcome, not known to be the device's).
    case found(PendingDeviceAction.Kind?)
    /// Not in this page: read the next older page, if any.
    case notInPage
}

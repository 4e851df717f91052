public import DeviceCheckModel

/// What an attempt against Apple called: one of DeviceCheck's three endpoints, or App Attest's `attestationData`
/// (the receipt renewals), named by `label` in the metrics' `endpoint` label.
public enum AppleCallEndpoint: Sendable, Equatable {
    case deviceCheck(AppleEndpoint)
    case attestationData

    public var label: String {
        switch self {
        case .deviceCheck(let endpoint): endpoint.rawValue
        case .attestationData: "attestation_data"
        }
    }
}

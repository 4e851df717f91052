public import WireVocabulary

/// Why a token came from the DeviceCheck tier rather than App Attest (sent as `app_attest_status` when the
/// relay is told to): the wire's `AppAttestFallbackReason`, the one list the server counts by.
public typealias AppAttestStatus = AppAttestFallbackReason

/// Every way `TwoBitsClient.token(for:limitedUse:payload:)` and `proof(method:path:body:)` fail, each with what the app should do
/// (`whatToDo`). docs/client.md lists them.
public enum TwoBitsClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// TwoBits refused the device as banned (403 `device_banned`). Bans hold in every tier.
    case deviceBanned
    /// The operators revoked this install's App Attest key (403 `key_revoked`).
    case keyRevoked
    /// The route needs the strong tier and App Attest is not available now, for the reason given.
    case strongTierUnavailable(AppAttestStatus)
    /// A request proof needs the install's App Attest key and App Attest cannot sign now, for the reason given
    /// (`unsupported`: never on this device). There is no fallback: the route stays closed to this request.
    case requestProofUnavailable(AppAttestStatus)
    /// The request cannot be signed as given (a body stream, no URL): its exact bytes and target are needed.
    case unsignableRequest(String)
    /// App Attest is not available (the reason given) and neither is DeviceCheck (a simulator without a debug
    /// secret, or DeviceCheck failing).
    case noTierAvailable(AppAttestStatus?, deviceCheck: String)
    /// TwoBits refused the DeviceCheck token (400 `invalid_device_token`): Apple did not accept it.
    case deviceTokenRefused
    /// TwoBits or Apple is unavailable (503, 502): retry after the delay when one is given.
    case serviceUnavailable(retryAfterSeconds: Int?)
    /// The relay could not reach the main API or TwoBits.
    case network(String)
    /// TwoBits (or the main API) refused the request in a way the client does not handle.
    case refused(status: Int, code: String, reason: String?)
    /// An answer that is not what TwoBits sends.
    case malformedAnswer(String)

    /// One sentence: what the app (or its developer) should do about it.
    public var whatToDo: String {
        switch self {
        case .deviceBanned:
            return "Do not retry: this device is banned; show the user how to reach support."
        case .keyRevoked:
            return "Do not retry: this install's App Attest key was revoked; show the user how to reach support."
        case .strongTierUnavailable:
            return "This route needs App Attest, which this device cannot provide now: retry later, or offer the user a way through routes that accept the devicecheck tier."
        case .requestProofUnavailable(.unsupported):
            return "This device cannot sign requests (no App Attest): tell the user this action needs a supported iPhone or iPad; do not retry."
        case .requestProofUnavailable:
            return "This action needs App Attest, which is not available now: retry later; there is no weaker way through."
        case .unsignableRequest:
            return "Fix the request: give its body as Data (not a stream) and an absolute URL before signing it."
        case .noTierAvailable:
            return "This device can give neither App Attest nor DeviceCheck: on a simulator set ClientConfiguration.debugSecret (development only); on a device retry later."
        case .deviceTokenRefused:
            return "Apple refused this build's DeviceCheck token: check that the build's environment (development or production) matches TwoBits' apple.environment."
        case .serviceUnavailable:
            return "Retry after the delay given (or a few seconds): TwoBits or Apple is briefly unavailable."
        case .network:
            return "Retry when the device is online; the main API or TwoBits could not be reached."
        case .refused:
            return "Report the status and code to the backend team: the relay or TwoBits' configuration refuses this request."
        case .malformedAnswer:
            return "Report it to the backend team: the relay does not pass TwoBits' answers through unchanged."
        }
    }

    public var description: String {
        switch self {
        case .deviceBanned: return "device banned. " + whatToDo
        case .keyRevoked: return "App Attest key revoked. " + whatToDo
        case .strongTierUnavailable(let status): return "strong tier unavailable (\(status.rawValue)). " + whatToDo
        case .requestProofUnavailable(let status): return "request proof unavailable (\(status.rawValue)). " + whatToDo
        case .unsignableRequest(let detail): return "unsignable request: \(detail). " + whatToDo
        case .noTierAvailable(let status, let deviceCheck):
            return "no tier available (App Attest: \(status?.rawValue ?? "none"), DeviceCheck: \(deviceCheck)). " + whatToDo
        case .deviceTokenRefused: return "DeviceCheck token refused. " + whatToDo
        case .serviceUnavailable(let seconds): return "service unavailable (retry after \(seconds.map(String.init) ?? "?") s). " + whatToDo
        case .network(let detail): return "network: \(detail). " + whatToDo
        case .refused(let status, let code, let reason): return "refused \(status) \(code)\(reason.map { " (\($0))" } ?? ""). " + whatToDo
        case .malformedAnswer(let detail): return "malformed answer: \(detail). " + whatToDo
        }
    }
}

public import DeviceCheckModel

/// What a client shows to get a fallback token.
public enum ExchangeCredential: Sendable {
    case deviceToken(DeviceToken)
    case debugSecret(String)
}

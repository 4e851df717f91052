public import FoundationEssentials

/// Apple's answer to `POST /v1/attestationData` (App Attest's fraud-metric service), one case per documented status.
public enum AttestationDataAnswer: Sendable, Equatable {
    /// 200: the new receipt (base64-decoded), to store in place of the one sent.
    case receipt(Data)
    /// 304: too early, before the receipt's Not Before; keep the receipt sent.
    case notModified
    /// 400 `Incorrect Environment`: a receipt of the other environment (a configuration error).
    case incorrectEnvironment
    /// 400 `Bad Payload` (or any other 400): the body was not a receipt Apple accepts.
    case badPayload
    /// 401, after signing a new developer token once: Apple cannot verify the token, or it is another team's.
    case unauthorized
    /// 404: Apple has no data for the receipt (past its expiry, or the key quiet for 30 days); stop refreshing it.
    case noData
    /// 429: too many requests; back off.
    case throttled
    /// 5xx, no answer, or an answer that is not Apple's (a 200 whose body is not base64); the detail says which.
    case unavailable(String)
}

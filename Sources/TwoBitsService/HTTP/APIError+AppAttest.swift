import AppAttest
import Policy
public import UseCases
import WireVocabulary

extension APIError {
    /// Which App Attest request failed: names the error code (`attestation_invalid` or `assertion_invalid`).
    public enum AppAttestStep: String, Sendable {
        case challenge, attestation, assertion
    }

    /// The strong tier's refusals as HTTP answers: a verification failure is 401 with its reason (Apple's
    /// step that failed, or the challenge, the key or the counter); never a 500.
    public init(_ error: AppAttestExchangeError, step: AppAttestStep) {
        let invalid: APIErrorCode = step == .assertion ? .assertionInvalid : .attestationInvalid
        switch error {
        case .appAttest(let refusal):
            switch refusal {
            case .invalid(let reason, let detail):
                self.init(401, invalid, detail.isEmpty ? "the \(step.rawValue) failed Apple's check \(reason.rawValue)" : detail, details: [WireField.reason: reason.rawValue])
            case .challengeUnknownOrUsed:
                self.init(401, invalid, "the challenge was never issued, has expired or was used already; ask POST /v1/app-attest/challenges for a fresh one",
                          details: [WireField.reason: refusal.code])
            case .clientDataMismatch:
                self.init(401, invalid, "client_data must be a JSON object whose \"challenge\" member is the request's challenge",
                          details: [WireField.reason: refusal.code])
            case .keyUnknown:
                self.init(401, invalid, "no attestation of this key was accepted; attest it first (POST /v1/app-attest/attestations)", details: [WireField.reason: refusal.code])
            case .keyRevoked:
                self.init(403, invalid, "an admin revoked this key; generate and attest a new one", details: [WireField.reason: refusal.code])
            case .counterNotIncreasing(let stored):
                self.init(401, invalid, "the assertion's counter is not above the last one accepted (\(stored)): a replay, or assertions sent concurrently; send them one at a time",
                          details: [WireField.reason: refusal.code])
            case .validationCategoryRefused(let category):
                let named = category.map { ValidationCategory(rawValue: $0).name } ?? "none"
                self.init(403, invalid, "builds of this distribution (\(named)) are not accepted here (app_attest.validation_categories)", details: [WireField.reason: refusal.code])
            case .riskMetricExceeded(let metric, let max):
                self.init(403, invalid, "Apple's risk metric for this key's device (\(metric) keys attested in 30 days) is over this server's limit (app_attest.risk.max_metric \(max))",
                          details: [WireField.reason: refusal.code])
            case .riskMetricUnknown(_, let grace):
                self.init(403, invalid, "Apple's risk metric for this key is still unknown \(Int(grace / 3_600)) hours after it was attested (its receipts could not be refreshed at Apple), and this server refuses such keys (app_attest.risk, action refuse); generate and attest a new key",
                          details: [WireField.reason: refusal.code])
            case .keyAlreadyAttested:
                self.init(409, .keyAlreadyAttested, "this key was attested before; send assertions with it, or generate a new key")
            case .storage(let storage): self = .storageUnavailable(storage)
            }
        case .deviceTokenRequired:
            self.init(400, .deviceTokenRequired, "this server requires device_token (a DeviceCheck token of the same device) with every App Attest request")
        case .refused(let policy): self.init(policy)
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireVocabulary

/// The DeviceCheck tier: a fresh DeviceCheck token (or a development debug secret) exchanged for a token.
extension TwoBitsClient {
    func fallbackTier(_ status: AppAttestStatus?, limitedUse: Bool) async throws(TwoBitsClientError) -> ClientToken {
        var attempts = 0
        while true {
            attempts += 1
            var request = FallbackExchangeRequest(installID: configuration.installID, limitedUse: limitedUse ? true : nil,
                                                  appAttestStatus: status)
            if await deviceCheck.isSupported {
                do {
                    request.deviceToken = try await deviceCheck.generateToken().base64EncodedString()
                } catch {
                    guard let secret = configuration.debugSecret else { throw .noTierAvailable(status, deviceCheck: String(describing: error)) }
                    request.debugSecret = secret
                }
            } else if let secret = configuration.debugSecret {
                request.debugSecret = secret
            } else {
                throw .noTierAvailable(status, deviceCheck: "unsupported")
            }

            do {
                let answer = try await relay.exchange(request)
                return clientToken(answer, limitedUse: limitedUse, status: status)
            } catch {
                guard let failure = error as? RelayFailure else { throw .network(String(describing: error)) }
                switch failure {
                case .unreachable(let detail):
                    throw .network(detail)
                case .malformedAnswer(let detail):
                    throw .malformedAnswer(detail)
                case .refused(let httpStatus, let code, let reason, let retryAfter):
                    switch APIErrorCode(rawValue: code) {
                    case .deviceBanned: throw .deviceBanned
                    case .invalidDeviceToken: throw .deviceTokenRefused
                    // Apple asks that a DeviceCheck token not be reused: a fresh one, once.
                    case .deviceTokenReused where attempts < 2: continue
                    default:
                        if httpStatus >= 502 || httpStatus == 429 { throw .serviceUnavailable(retryAfterSeconds: retryAfter) }
                        throw .refused(status: httpStatus, code: code, reason: reason)
                    }
                }
            }
        }
    }
}

import AppAttest
import AppleDeviceCheckClient
import FoundationEssentials
import Ledger
import UseCases

/// The refresher's renewals at Apple: the key's latest receipt sent to `attestationData`, and the receipt that comes
/// back verified by Apple's steps (signature, chain to the trusted root, app id, created in the last five minutes,
/// the attested key equal to the stored one) before it replaces the old one. A receipt that fails a step is
/// refused, never stored: its metric would be an attacker's.
struct AppleReceiptRenewer: ReceiptRenewing {
    let apple: AppleDeviceCheckClient
    let verifier: ReceiptVerifier

    func renew(receipt: Data, key: AppAttestKeyRecord, now: Date) async -> ReceiptRenewal {
        switch await apple.attestationData(receipt: receipt) {
        case .receipt(let fresh):
            let verified: VerifiedReceipt
            do {
                // The time of the answer, not of the call: the freshness window starts when Apple signed it.
                verified = try verifier.verify(fresh, appID: key.appID, publicKey: key.publicKey, at: Date(), freshness: ReceiptVerifier.freshness)
            } catch {
                return .refused("Apple's new receipt failed verification at \(error.step.rawValue): \(error.detail)")
            }
            guard verified.type == .receipt else { return .refused("Apple answered a receipt of type \(verified.type.rawValue), not RECEIPT") }
            return .renewed(RenewedReceipt(receipt: fresh, riskMetric: verified.riskMetric, creation: verified.creation,
                                           notBefore: verified.notBefore, expiration: verified.expiration))
        case .notModified: return .notYet
        case .noData: return .noData
        case .throttled: return .throttled
        case .unavailable(let detail): return .unavailable(detail)
        case .incorrectEnvironment: return .incorrectEnvironment
        case .badPayload: return .refused("Apple answered 400 Bad Payload: the stored receipt is not one Apple takes")
        case .unauthorized: return .refused("Apple answered 401: the developer token is not valid for this receipt's team")
        }
    }
}

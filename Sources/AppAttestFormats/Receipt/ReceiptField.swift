/// The payload's field types Apple documents ("Assessing fraud risk") and TwoBits reads.
public enum ReceiptField: Int, Sendable, CaseIterable {
    case appID = 2
    case attestedCertificate = 3
    case clientHash = 4
    case token = 5
    case type = 6
    case environment = 7
    case creation = 12
    case riskMetric = 17
    case notBefore = 19
    case expiration = 21
}

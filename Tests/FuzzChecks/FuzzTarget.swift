/// The fuzz targets: one per parser of untrusted input. Each check runs one input through the product
/// code and returns a description of a broken property, or nil. The libFuzzer executables in
/// Tests/Fuzz trap on a non-nil answer; `FuzzReplayTests` replays every corpus file through the same
/// check in the normal suite.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case json = "FuzzJSON"
    case base64url = "FuzzBase64URL"
    case jws = "FuzzJWS"
    case appleAnswer = "FuzzAppleAnswer"
    case configuration = "FuzzConfiguration"
    case request = "FuzzRequest"
    case appAttest = "FuzzAppAttest"
    case receipt = "FuzzReceipt"

    /// Checks one input; nil when every property holds.
    public func check(_ input: [UInt8]) -> String? {
        switch self {
        case .json: return JSONCheck.check(input)
        case .base64url: return Base64URLCheck.check(input)
        case .jws: return JWSCheck.check(input)
        case .appleAnswer: return AppleAnswerCheck.check(input)
        case .configuration: return ConfigurationCheck.check(input)
        case .request: return RequestCheck.check(input)
        case .appAttest: return AppAttestCheck.check(input)
        case .receipt: return ReceiptCheck.check(input)
        }
    }

    /// Runs the check and traps with its description, for libFuzzer (a trap is a finding).
    public func fuzz(_ start: UnsafeRawPointer, _ count: Int) {
        let input = Array(UnsafeRawBufferPointer(start: start, count: count))
        if let failure = check(input) { fatalError("\(rawValue): \(failure)") }
    }
}

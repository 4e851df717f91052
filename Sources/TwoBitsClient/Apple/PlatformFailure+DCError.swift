/// Apple's `DCError.Code` values, as documented (DeviceCheck/DCError.h): the mapping is over these numbers
/// so that it compiles, and is tested, where the framework does not exist.
extension PlatformFailure {
    static let dcUnknownSystemFailure = 0
    static let dcFeatureUnsupported = 1
    static let dcInvalidInput = 2
    static let dcInvalidKey = 3
    static let dcServerUnavailable = 4

    /// The failure an error with `DCError.Code` raw value `code` (nil: not a `DCError`) stands for.
    init(dcErrorCode code: Int?, describing error: any Error) {
        switch code {
        case Self.dcFeatureUnsupported: self = .featureUnsupported
        case Self.dcInvalidInput: self = .invalidInput
        case Self.dcInvalidKey: self = .invalidKey
        case Self.dcServerUnavailable: self = .serverUnavailable
        default: self = .unknown(String(describing: error))
        }
    }
}

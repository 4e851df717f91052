import Foundation

// A stand-in for Apple's DeviceCheck framework on Linux: the documented error type, with DCError.Code's
// documented raw values, so that the adapters' error mapping runs here against what Apple's devices throw.

/// `DCError` as DeviceCheck/DCError.h declares it.
struct StandInDCError: Error, Equatable {
    enum Code: Int {
        case unknownSystemFailure = 0
        case featureUnsupported = 1
        case invalidInput = 2
        case invalidKey = 3
        case serverUnavailable = 4
    }

    let code: Code
    init(_ code: Code) { self.code = code }

    static let invalidKey = StandInDCError(.invalidKey)
    static let serverUnavailable = StandInDCError(.serverUnavailable)
    static let featureUnsupported = StandInDCError(.featureUnsupported)
    static let invalidInput = StandInDCError(.invalidInput)
    static let unknownSystemFailure = StandInDCError(.unknownSystemFailure)

    static func code(of error: any Error) -> Int? { (error as? StandInDCError)?.code.rawValue }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `DCDevice` as Apple documents it, the part `DeviceCheckDeviceAdapter` uses (see `AppAttestServiceAPI`).
public protocol DeviceCheckDeviceAPI: AnyObject {
    var isSupported: Bool { get }
    func generateToken() async throws -> Data
    /// The `DCError.Code` raw value of `error`, nil when it is no `DCError`.
    static func dcErrorCode(of error: any Error) -> Int?
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// DeviceCheck from Apple's `DCDevice` (`DeviceCheckDeviceAdapter(DCDevice.current)`), its `DCError`s turned
/// into `PlatformFailure`s.
public struct DeviceCheckDeviceAdapter<Device: DeviceCheckDeviceAPI>: DeviceCheckProvider, @unchecked Sendable {
    // @unchecked: DCDevice.current is documented as usable from any thread.
    private let device: Device

    public init(_ device: Device) { self.device = device }

    public var isSupported: Bool { device.isSupported }

    public func generateToken() async throws -> Data {
        do {
            return try await device.generateToken()
        } catch {
            throw PlatformFailure(dcErrorCode: Device.dcErrorCode(of: error), describing: error)
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// DeviceCheck from Apple's `DCDevice` (`DeviceCheckDeviceAdapter { DCDevice.current }`), its `DCError`s turned
/// into `PlatformFailure`s.
public struct DeviceCheckDeviceAdapter<Device: DeviceCheckDeviceAPI>: DeviceCheckProvider, Sendable {
    /// Asked at each call: Apple's `DCDevice` is no `Sendable` type, so the adapter holds the way to reach the
    /// shared instance, not the instance.
    private let device: @Sendable () -> Device

    /// Over a shared instance asked for at each call (`{ DCDevice.current }`).
    public init(_ device: @escaping @Sendable () -> Device) { self.device = device }

    /// Over one instance that is itself `Sendable`.
    public init(_ device: Device) where Device: Sendable { self.device = { device } }

    public var isSupported: Bool { device().isSupported }

    public func generateToken() async throws -> Data {
        do {
            return try await device().generateToken()
        } catch {
            throw PlatformFailure(dcErrorCode: Device.dcErrorCode(of: error), describing: error)
        }
    }
}

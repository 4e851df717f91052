#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// DeviceCheck as the fallback tier uses it: `DCDevice.current` on a device (`DeviceCheckDeviceAdapter`), a
/// simulated iPhone in tests.
public protocol DeviceCheckProvider: Sendable {
    /// Whether this device can make DeviceCheck tokens (false on simulators).
    var isSupported: Bool { get async }
    /// A fresh DeviceCheck token (every call gives a different one).
    func generateToken() async throws -> Data
}

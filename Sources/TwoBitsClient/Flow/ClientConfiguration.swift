#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the client behaves; every field has a default fit for production.
public struct ClientConfiguration: Sendable {
    /// Sent as `install_id` (becomes the token's `sub`, and how pending bans reach the device).
    public var installID: String?
    /// Attach a fresh DeviceCheck token to attestations and assertions, so a banned device is refused in the
    /// strong tier too. Needed when TwoBits runs with `app_attest.require_device_token`.
    public var attachesDeviceToken: Bool
    /// A development debug secret to exchange when the device has no DeviceCheck (simulators). Never ship one.
    public var debugSecret: String?
    /// A cached token is reused until `expires_in` less this many seconds.
    public var expiryMargin: TimeInterval
    /// The first back-off after Apple's `serverUnavailable`; it doubles with each further one.
    public var backoffBase: TimeInterval
    /// The longest back-off.
    public var backoffMaximum: TimeInterval
    /// The time now: injectable for tests.
    public var now: @Sendable () -> Date
    /// A random number in [0, 1) for the back-off's jitter: injectable for tests.
    public var random: @Sendable () -> Double

    public init(installID: String? = nil, attachesDeviceToken: Bool = false, debugSecret: String? = nil,
                expiryMargin: TimeInterval = 60, backoffBase: TimeInterval = 5, backoffMaximum: TimeInterval = 600,
                now: @escaping @Sendable () -> Date = { Date() },
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.installID = installID
        self.attachesDeviceToken = attachesDeviceToken
        self.debugSecret = debugSecret
        self.expiryMargin = expiryMargin
        self.backoffBase = backoffBase
        self.backoffMaximum = backoffMaximum
        self.now = now
        self.random = random
    }
}

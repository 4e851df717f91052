// Apple's DeviceCheck framework exists on Apple platforms only. The condition names the systems rather than
// relying on canImport(DeviceCheck) alone: TwoBits' server has a module of that name, which a build directory
// shared with the server would also offer.
#if canImport(DeviceCheck) && (os(iOS) || os(macOS))
import DeviceCheck

extension DCAppAttestService: AppAttestServiceAPI {
    public static func dcErrorCode(of error: any Error) -> Int? { (error as? DCError)?.code.rawValue }
}

extension DCDevice: DeviceCheckDeviceAPI {
    public static func dcErrorCode(of error: any Error) -> Int? { (error as? DCError)?.code.rawValue }
}

extension TwoBitsClient {
    /// A client over Apple's App Attest and DeviceCheck, keeping its key in the Keychain (`KeychainKeyStore`).
    public init(relay: any TwoBitsRelay, configuration: ClientConfiguration = ClientConfiguration(),
                keyStore: any KeyStore = KeychainKeyStore()) {
        self.init(appAttest: AppAttestServiceAdapter { DCAppAttestService.shared }, deviceCheck: DeviceCheckDeviceAdapter { DCDevice.current },
                  keyStore: keyStore, relay: relay, configuration: configuration)
    }
}
#endif

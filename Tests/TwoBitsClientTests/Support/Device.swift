import Foundation
import TestSupport
import TwoBitsClient

/// A simulated iPhone and a client on it, wired as an app would: Apple's services through the library's
/// adapters, the key store, the relay.
struct Device {
    let appAttest: SimulatedAppAttestService
    let deviceCheck: SimulatedDCDevice
    let keyStore: InMemoryKeyStore
    let relay: ProbeRelay
    let client: TwoBitsClient

    init(_ harness: ClientHarness, appAttestSupported: Bool = true, deviceCheckSupported: Bool = true,
         keyStore: InMemoryKeyStore = InMemoryKeyStore(), clock: TestClock? = nil, relay: (any TwoBitsRelay)? = nil,
         configure: (inout ClientConfiguration) -> Void = { _ in }) async throws {
        appAttest = SimulatedAppAttestService(sandbox: harness.sandboxURL, http: harness.http, supported: appAttestSupported)
        deviceCheck = try await SimulatedDCDevice(sandbox: harness.sandboxURL, http: harness.http, supported: deviceCheckSupported)
        self.keyStore = keyStore
        self.relay = ProbeRelay(relay ?? harness.relay())
        var configuration = ClientConfiguration(installID: "ios-test-install", random: { 0.5 })
        if let clock { configuration.now = { clock.now } }
        configure(&configuration)
        client = TwoBitsClient(appAttest: AppAttestServiceAdapter(appAttest), deviceCheck: DeviceCheckDeviceAdapter(deviceCheck),
                               keyStore: keyStore, relay: self.relay, configuration: configuration)
    }
}

/// The claims of a token (its payload, not verified: TwoBits' own tests verify signatures).
func claims(_ token: ClientToken) -> [String: Any] {
    let part = String(token.value.split(separator: ".")[1])
    var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return (try? JSONSerialization.jsonObject(with: Data(base64Encoded: base64)!)) as? [String: Any] ?? [:]
}

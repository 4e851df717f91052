import Foundation
import TwoBitsClient

// client-demo --server URL --sandbox URL --api-key KEY --app-id TEAM.bundle [--environment development]
//
// The app's side of TwoBits with the TwoBitsClient library: a simulated iPhone attests and asserts (tier
// appattest), a second one without App Attest falls back (tier devicecheck). The relay here holds the main
// API's key itself, standing in for the team's main API; in an app the relay posts to the main API instead.

var options: [String: String] = ["--environment": "development"]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard let value = arguments.popFirst() else { break }
    options[name] = value
}
guard let server = options["--server"].flatMap(URL.init(string:)), let sandbox = options["--sandbox"].flatMap(URL.init(string:)),
      let apiKey = options["--api-key"], let appID = options["--app-id"], let environment = options["--environment"] else {
    print("usage: client-demo --server URL --sandbox URL --api-key KEY --app-id TEAM.bundle [--environment development]")
    exit(2)
}

let relay = URLSessionRelay(baseURL: server, headers: { ["Authorization": "Bearer " + apiKey] })

func show(_ label: String, _ token: ClientToken) {
    let status = token.appAttestStatus.map { ", app_attest_status \($0.rawValue)" } ?? ""
    print("\(label): tier \(token.tier)\(token.limitedUse ? " (limited use)" : "")\(status), expires in \(Int(token.expiresAt.timeIntervalSinceNow)) s")
}

do {
    let first = try await SimulatedIPhone(sandbox: sandbox, appID: appID, environment: environment, hasAppAttest: true)
    let strong = TwoBitsClient(appAttest: AppAttestServiceAdapter(first), deviceCheck: DeviceCheckDeviceAdapter(first),
                               keyStore: InMemoryKeyStore(), relay: relay, configuration: ClientConfiguration(installID: "demo-iphone-1"))
    show("iPhone 1 attests its key", try await strong.token(for: .strong))
    show("iPhone 1 asserts", try await strong.token(for: .strong, limitedUse: true))
    show("iPhone 1 again (cached)", try await strong.token(for: .any))

    let second = try await SimulatedIPhone(sandbox: sandbox, appID: appID, environment: environment, hasAppAttest: false)
    let fallback = TwoBitsClient(appAttest: AppAttestServiceAdapter(IPhoneWithoutAppAttest()), deviceCheck: DeviceCheckDeviceAdapter(second),
                                 keyStore: InMemoryKeyStore(), relay: relay, configuration: ClientConfiguration(installID: "demo-iphone-2"))
    show("iPhone 2 (no App Attest) falls back", try await fallback.token(for: .any))
    do {
        _ = try await fallback.token(for: .strong)
    } catch {
        print("iPhone 2 asks for the strong tier: \(error)")
    }
} catch {
    print("client-demo: \(error)")
    exit(1)
}

import Foundation
import TwoBitsClient

/// One simulated iPhone's `DCDevice`: a device of the sandbox, whose tokens it mints over the control API.
final class SimulatedDCDevice: DeviceCheckDeviceAPI, @unchecked Sendable {
    let sandbox: URL
    let http: JSONHTTP
    let deviceID: String
    let isSupported: Bool
    private let lock = NSLock()
    private var minted = 0

    init(sandbox: URL, http: JSONHTTP, supported: Bool = true) async throws {
        self.sandbox = sandbox
        self.http = http
        isSupported = supported
        deviceID = try await http.post(sandbox.appendingPathComponent("sandbox/v1/devices"), [:])["device_id"] as! String
    }

    var tokensMinted: Int { lock.withLock { minted } }

    func generateToken() async throws -> Data {
        guard isSupported else { throw StandInDCError.featureUnsupported }
        let answer = try await http.post(sandbox.appendingPathComponent("sandbox/v1/devices/\(deviceID)/tokens"), [:])
        lock.withLock { minted += 1 }
        return Data(base64Encoded: answer["device_token"] as! String)!
    }

    static func dcErrorCode(of error: any Error) -> Int? { StandInDCError.code(of: error) }
}

import DeviceCheckModel
import HTTPServer
import Policy
import UseCases

/// `POST /v1/devices/validate`: is this a real Apple device token? (any role)
///
/// When the layout can express a ban, the check is a query (it validates too) so a banned device
/// gets 403 device_banned here as on every client-facing route; otherwise it is a validate.
struct DeviceController: Sendable {
    let admission: DeviceAdmission

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/devices/validate", .anyClient) { request throws(APIError) in
            let body = try request.jsonBody()
            try body.allowOnly(["device_token"])
            let token = try body.deviceToken()
            do throws(PolicyError) {
                return .json(200, ["valid": try await admission.validate(token: token, client: request.clientName)])
            } catch { throw APIError(error) }
        }
    }
}

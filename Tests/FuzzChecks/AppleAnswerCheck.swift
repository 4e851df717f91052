import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import TwoBitsCrypto
import WireFormats

/// Apple's answers, as the client classifies them. Input: byte 0 picks the endpoint, bytes 1-2 the
/// status (mostly Apple's usual ones), the rest is the body. Properties, restated independently: only a
/// 200 succeeds; a query's 200 is "never set" only for Apple's two texts and a state only for a JSON
/// object with boolean bit0/bit1 and a YYYY-MM month, with exactly those values; everything else to a
/// query is an error, never a clear state; 429 is throttling and 5xx a server error.
enum AppleAnswerCheck {
    static let statuses = [200, 200, 200, 400, 401, 403, 404, 429, 500, 502, 503]

    static func check(_ input: [UInt8]) -> String? {
        guard input.count >= 3 else { return nil }
        let endpoint = [AppleEndpoint.validate, .query, .update][Int(input[0]) % 3]
        let status = input[1] < 0xF0 ? statuses[Int(input[2]) % statuses.count] : (Int(input[1] & 0x0F) << 8 | Int(input[2]))
        let body = Data(input.dropFirst(3))
        let result = AppleDeviceCheckClient.classification(endpoint, status: status, body: body)
        switch result {
        case .success(let answer):
            guard status == 200 else { return "status \(status) counted as success" }
            if endpoint == .query {
                guard let answer else { return "a query succeeded without a state" }
                guard answer == expectedQuery(body) else { return "query body read as \(answer), expected \(String(describing: expectedQuery(body)))" }
            }
        case .failure(let error):
            if status == 200, endpoint == .query, let expected = expectedQuery(body) {
                return "a readable query answer (\(expected)) was refused: \(error)"
            }
            if status == 429, error != .unavailable(.throttled) { return "429 read as \(error)" }
            if (500...599).contains(status), error != .unavailable(.serverError(status)) { return "\(status) read as \(error)" }
        }
        return nil
    }

    /// The documented reading of a 200 answer to a query, written without the client's code.
    static func expectedQuery(_ body: Data) -> QueryResult? {
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \n\r\t"))
        if body.first != UInt8(ascii: "{"), text == "Failed to find bit state" || text == "Bit State Not Found" { return .neverSet }
        guard case .object(let o)? = try? JSONValue.parse(body), case .bool(let b0)? = o["bit0"], case .bool(let b1)? = o["bit1"],
              case .string(let m)? = o["last_update_time"], m.utf8.count == 7, let month = YearMonth(m) else { return nil }
        return .state(BitState(bits: Bits(bit0: b0, bit1: b1), lastUpdated: month))
    }
}

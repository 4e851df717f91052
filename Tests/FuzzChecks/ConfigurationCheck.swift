import Foundation
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// The configuration file: parsing either gives a configuration or a `ConfigurationError` with a
/// problem to show; a file that is not JSON (a duplicate key included) is always refused as such.
enum ConfigurationCheck {
    static func check(_ input: [UInt8]) -> String? {
        let data = Data(input)
        let parsed: ServiceConfiguration
        do {
            parsed = try ServiceConfiguration.parse(data, environment: [:], baseDirectory: "/nonexistent-twobits-fuzz")
        } catch {
            guard !error.problem.isEmpty else { return "an error without a problem" }
            do { _ = try JSONValue.parse(data, limits: .configuration) } catch let json {
                guard error.problem == "the configuration is not valid JSON: \(json)" else { return "not JSON, but refused as: \(error)" }
            }
            return nil
        }
        guard case .object? = try? JSONValue.parse(data, limits: .configuration) else { return "accepted a file that is not a JSON object" }
        guard parsed.apple.timeoutMilliseconds >= 100, parsed.server.requestDeadlineMilliseconds >= 3 * parsed.apple.timeoutMilliseconds else {
            return "accepted out-of-range timeouts"
        }
        return nil
    }
}

import Foundation
import TwoBitsService

/// `twobits serve --config FILE`
enum ServeCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        var args = try Arguments(raw)
        let path = try args.required("config", env: "TWOBITS_CONFIG")
        try args.rejectUnknown()
        let service: TwoBitsService
        do throws(ConfigurationError) {
            let configuration = try ServiceConfiguration.load(path: path)
            service = try TwoBitsService(configuration: configuration)
            try await service.start()
        } catch {
            printError("twobits serve: configuration error: \(error)")
            return 1
        }
        let signal = await SignalWaiter().waitForTermination { Task { await service.reloadKeys() } }
        printError("twobits serve: received signal \(signal), shutting down")
        await service.shutdown()
        return 0
    }
}

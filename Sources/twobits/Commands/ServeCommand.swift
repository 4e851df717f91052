import FoundationEssentials
import TwoBitsService

/// `twobits serve --config FILE`
enum ServeCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        var args = try Arguments(raw)
        let path = try args.required("config", env: "TWOBITS_CONFIG")
        try args.rejectUnknown()
        let notifier = ServiceManagerNotifier()
        let service: TwoBitsService
        do throws(ConfigurationError) {
            let configuration = try ServiceConfiguration.load(path: path)
            service = try TwoBitsService(configuration: configuration)
            try await service.start()
        } catch {
            printError("twobits serve: configuration error: \(error)")
            return 1
        }
        let announcer = ReadinessAnnouncer(service: service, notifier: notifier)
        await announcer.announce()
        let signal = await SignalWaiter().waitForTermination {
            Task {
                notifier.send("RELOADING=1")
                await service.reloadKeys()
                await announcer.announce()
            }
        }
        await announcer.stop()
        notifier.send("STOPPING=1")
        printError("twobits serve: received signal \(signal), shutting down")
        await service.shutdown()
        return 0
    }
}

/// One of a process's background loops, run by a `ServiceGroup` beside the requests (the shape of
/// swift-service-lifecycle's `Service`, without its package).
public struct BackgroundService: Sendable {
    public let name: String
    let run: @Sendable () async throws -> Void
    let finish: @Sendable () async -> Void

    /// `run` works until its task is cancelled (the group's shutdown) and then returns; a throw ends it as failed.
    /// `finish` is the last of its work, run at shutdown once `run` has returned (a final flush): it runs whether
    /// or not the service was started or failed, since what it saves was gathered by others too.
    public init(name: String, run: @escaping @Sendable () async throws -> Void, finish: @escaping @Sendable () async -> Void = {}) {
        self.name = name
        self.run = run
        self.finish = finish
    }

    /// A service that waits `period`, then calls `body`, until cancelled (a cancelled wait ends it at once, and
    /// `body` is not called after cancellation).
    public static func periodic(name: String, every period: Duration, _ body: @escaping @Sendable () async -> Void,
                                finish: @escaping @Sendable () async -> Void = {}) -> BackgroundService {
        BackgroundService(name: name, run: {
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                guard !Task.isCancelled else { return }
                await body()
            }
        }, finish: finish)
    }
}

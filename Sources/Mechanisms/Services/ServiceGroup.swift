import Locking

/// Runs a process's background services (the shape of Hummingbird's `Application` services and
/// swift-service-lifecycle's `ServiceGroup`, in a few lines): started in the order given, each in a task of its
/// own; stopped in the reverse order by one graceful shutdown, each cancelled, awaited and finished before the
/// next is stopped, so a service never outlives one it was started after (the last to start is the first to go).
/// A service that fails is reported and the others run on.
public final class ServiceGroup: Sendable {
    /// What the group did, in order, for logs and tests.
    public enum Event: Sendable, Equatable {
        case started(String)
        /// `run` threw before shutdown (the error's description).
        case failed(String, String)
        /// `run` returned after the service's cancellation at shutdown (or had returned or failed before it).
        case stopped(String)
        /// Its `finish` has run.
        case finished(String)
    }

    private enum Phase: Sendable {
        case idle
        case running([Task<Void, Never>])
        case stopped
    }

    private let services: [BackgroundService]
    private let onEvent: @Sendable (Event) -> Void
    private let phase = Lock(Phase.idle)

    public init(_ services: [BackgroundService], onEvent: @escaping @Sendable (Event) -> Void = { _ in }) {
        self.services = services
        self.onEvent = onEvent
    }

    /// Let go without a shutdown (a test's service dropped, a start that failed): the loops end with their
    /// owner, cancelled and not awaited, without `finish`.
    deinit {
        if case .running(let tasks) = phase.withLock({ $0 }) { for task in tasks { task.cancel() } }
    }

    /// Starts each service in order: the next one's task is created only once the previous one's task runs.
    /// Once only; after `shutdown` it starts nothing.
    public func start() async {
        guard phase.withLock({ if case .idle = $0 { $0 = .running([]); return true }; return false }) else { return }
        for service in services {
            let onEvent = self.onEvent
            var created: Task<Void, Never>?
            await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
                created = Task {
                    entered.resume()
                    do { try await service.run() } catch where !Task.isCancelled {
                        onEvent(.failed(service.name, String(describing: error)))
                    } catch {}
                }
            }
            guard let task = created else { return }
            let kept = phase.withLock { p -> Bool in
                guard case .running(var tasks) = p else { return false }
                tasks.append(task)
                p = .running(tasks)
                return true
            }
            // A shutdown came in while this one started: stop it as well.
            guard kept else { task.cancel(); await task.value; return }
            onEvent(.started(service.name))
        }
    }

    /// Stops the services in reverse order: cancels one, waits until its `run` has returned, runs its `finish`,
    /// then the next. A service never started (shutdown before `start`) is only finished. Once only: a second
    /// call returns at once.
    public func shutdown() async {
        let tasks = phase.withLock { p -> [Task<Void, Never>]? in
            switch p {
            case .idle: p = .stopped; return []
            case .running(let tasks): p = .stopped; return tasks
            case .stopped: return nil
            }
        }
        guard let tasks else { return }
        for (index, service) in services.enumerated().reversed() {
            if index < tasks.count {
                tasks[index].cancel()
                await tasks[index].value
                onEvent(.stopped(service.name))
            }
            await service.finish()
            onEvent(.finished(service.name))
        }
    }
}

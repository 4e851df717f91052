import TwoBitsService

/// Sends the service manager `READY=1` once `/readyz` would answer 200 (the port is open, the ledger takes
/// writes, the keys sign), and the failing checks as `STATUS=` while it would not, so that `systemctl
/// status` says why. Announced again after each reload: a reload that leaves the service unable to
/// serve must not be reported as done.
actor ReadinessAnnouncer {
    private let service: TwoBitsService
    private let notifier: ServiceManagerNotifier
    private var current: Task<Void, Never>?

    init(service: TwoBitsService, notifier: ServiceManagerNotifier) {
        self.service = service
        self.notifier = notifier
    }

    /// Starts watching readiness until `READY=1` is sent; a watch already running is replaced.
    func announce() {
        guard notifier.isActive else { return }
        current?.cancel()
        current = Task { [service, notifier] in
            var lastStatus = ""
            while !Task.isCancelled {
                let readiness = await service.readiness()
                if Task.isCancelled { return }
                if readiness.ready {
                    notifier.send("READY=1\nSTATUS=serving on port \(service.port)")
                    return
                }
                let status = "STATUS=not ready: " + readiness.failures.joined(separator: "; ")
                if status != lastStatus { notifier.send(status) }
                lastStatus = status
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Stops watching (shutting down).
    func stop() {
        current?.cancel()
        current = nil
    }
}

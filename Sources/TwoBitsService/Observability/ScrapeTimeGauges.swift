import Locking

/// Gauges read when `/metrics` is scraped rather than kept up to date on every request (in-flight
/// requests, the connection cap, the signing key's age, keys whose risk metric stays unknown): the hot path pays
/// nothing for them.
final class ScrapeTimeGauges: Sendable {
    private let readers = Lock<[@Sendable () async -> Void]>([])

    /// Adds a reader that sets its gauges on the registry; the server adds its own once it exists.
    func add(_ reader: @escaping @Sendable () async -> Void) {
        readers.withLock { $0.append(reader) }
    }

    func refresh() async {
        for reader in readers.withLock({ $0 }) { await reader() }
    }
}

import Foundation
import Locking

/// Collects a service's log lines.
public final class LogCollector: Sendable {
    private let lines = Lock<[String]>([])
    public init() {}
    public func append(_ data: Data) { lines.withLock { $0.append(String(decoding: data, as: UTF8.self)) } }
    public func withLock<T>(_ body: ([String]) -> T) -> T { lines.withLock { body($0) } }
}

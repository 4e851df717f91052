/// A fixed set of event loops, one per thread (`server.threads`, default one per core).
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]

    /// Starts `count` loops named `<name>-0`, `<name>-1`, …, each pausing `coalescingMicroseconds` on a wake
    /// of a few events (`EventLoop.init(name:coalescingMicroseconds:)`).
    public init(count: Int, name: String = "twobits-loop", coalescingMicroseconds: Int = 0) {
        loops = (0..<max(1, count)).map { EventLoop(name: "\(name)-\($0)", coalescingMicroseconds: coalescingMicroseconds) }
    }

    /// Stops every loop and waits for their threads (never call it on a loop).
    public func shutdown() {
        for loop in loops { loop.stop() }
    }
}

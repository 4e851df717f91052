/// A fixed set of event loops, one per thread (`server.threads`, default one per core).
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]

    /// Starts `count` loops named `<name>-0`, `<name>-1`, ….
    public init(count: Int, name: String = "twobits-loop") {
        loops = (0..<max(1, count)).map { EventLoop(name: "\(name)-\($0)") }
    }

    /// Stops every loop and waits for their threads (never call it on a loop).
    public func shutdown() {
        for loop in loops { loop.stop() }
    }
}

/// A timer set on an event loop, to cancel it before it fires.
public struct LoopTimer: Sendable, Hashable {
    let id: UInt64
}

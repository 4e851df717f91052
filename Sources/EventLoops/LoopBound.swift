/// A value that belongs to one event loop: it may travel to other threads (inside a `@Sendable` closure
/// that hops back to the loop, or in an object other threads hold), but is read and written only on its
/// loop's thread, and debug builds check that on every access (swift-nio's `NIOLoopBound` is the model).
/// It replaces an `@unchecked Sendable` justified only by a comment saying who touches the value.
///
/// A value: state several closures change is kept in a `var` of one object (`LoopDaemon`'s), or is a
/// reference itself (a request's exchange).
public struct LoopBound<Value>: @unchecked Sendable { // Unchecked: every access of `stored` asserts the loop (debug builds).
    /// The loop whose thread alone may touch the value.
    public let loop: EventLoop
    private var stored: Value

    /// Binds `value` to `loop`. It may be bound on another thread, before the loop sees it (an object made
    /// elsewhere, then used on its loop only): the accesses are what is checked.
    public init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        stored = value
    }

    /// The value, on its loop's thread only (a debug build traps anywhere else).
    public var value: Value {
        get {
            loop.assertAccessible()
            return stored
        }
        // `_modify`, not `set`: a dictionary inside is changed in place, not copied (swift-nio's box does so too).
        _modify {
            loop.assertAccessible()
            yield &stored
        }
    }
}

extension EventLoop {
    /// The check loop-bound state makes on access: true on this loop's thread, the only one that may touch it.
    /// A predicate of its own so tests can see it answer both ways.
    static func loopBoundAccessIsAllowed(on loop: EventLoop) -> Bool { loop.inLoop }

    /// Traps in debug builds when called off this loop's thread; nothing in release builds.
    @inline(__always)
    func assertAccessible(file: StaticString = #fileID, line: UInt = #line) {
        assert(Self.loopBoundAccessIsAllowed(on: self), "loop-bound state touched off its loop (\(name))", file: file, line: line)
    }
}

import CMicroHTTPD

/// The face of a `LoopDaemon` that libmicrohttpd's C callbacks reach through their user-data pointer.
///
/// A C callback cannot be generic, so it calls through this class (one vtable call, no existential) into
/// the daemon of the owner's context type, which overrides each method.
// Not Sendable itself: only `LoopDaemon`, its one subclass, is shared with its loop (and says why it may be).
class DaemonHooks {
    /// Open connections and their receive deadlines, over every loop (the core's).
    let connections: ConnectionTracker

    init(connections: ConnectionTracker) {
        self.connections = connections
    }

    /// A request line arrived: the retained exchange that becomes the request's `con_cls`.
    func openExchange(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?) -> UnsafeMutableRawPointer { overridden() }

    /// One call of libmicrohttpd's access handler.
    func access(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result { overridden() }

    /// The exchange is over: releases what `openExchange` retained.
    func closeExchange(_ raw: UnsafeMutableRawPointer) { overridden() }

    private func overridden(_ function: StaticString = #function) -> Never { fatalError("\(function) is overridden by LoopDaemon") }
}

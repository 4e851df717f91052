import CMicroHTTPD
import FoundationEssentials

/// One request and its answer on a connection: what libmicrohttpd keeps for us in `con_cls` from the
/// request line to the completion notice, between calls of the access handler (the target, the head,
/// the body so far, how far the exchange has got, and the answer that resumes the suspended connection).
/// Touched only on the thread of the loop whose daemon owns the connection.
// Unchecked: libmicrohttpd calls back for a connection only on its daemon's loop thread, the only one touching this.
final class ConnectionExchange<Context: Sendable>: @unchecked Sendable {
    /// The request target (path and query) exactly as received.
    let target: String
    /// The connection this request arrives on, for the receive deadline.
    let tracked: ConnectionTracker.Connection?
    /// The daemon (and so the loop) the connection belongs to.
    unowned let daemon: LoopDaemon<Context>
    /// The request without its body, once the headers have passed the edge checks.
    var head: ServerRequest?
    /// The owner's context, made with the head and filled in by its head check; the handler and every
    /// answer of this request see it.
    var context: Context?
    /// The answer for a refused request without a body, given at the final call so the connection stays open.
    var refusal: ServerResponse?
    var body = Data()
    var bodyTooLarge = false
    var dispatched = false
    var answered = false

    let connection: OpaquePointer
    let started = ContinuousClock.now
    /// The answer, set exactly once by whichever finishes first: the handler, its deadline, the client's
    /// hang-up (an answer that drops the connection), or shutdown.
    private(set) var response: ServerResponse?

    init(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?, daemon: LoopDaemon<Context>) {
        self.connection = connection
        self.target = target
        self.tracked = tracked
        self.daemon = daemon
    }

    /// Stores the response and resumes the suspended connection; false when an answer was already given.
    @discardableResult
    func finish(_ response: ServerResponse) -> Bool {
        assert(daemon.loop.inLoop)
        guard self.response == nil else { return false }
        self.response = response
        MHD_resume_connection(connection)
        daemon.scheduleRun()
        return true
    }
}

import CMicroHTTPD
import FoundationEssentials

/// One request and its answer on a connection: what libmicrohttpd keeps for us in `con_cls` from the
/// request line to the completion notice, between calls of the access handler (the target, the head,
/// and its state machine, which holds the body so far and the answer that resumes the suspended connection).
/// Touched only on the thread of the loop whose daemon owns the connection.
// Not Sendable: libmicrohttpd calls back for a connection only on its daemon's loop thread, the only one touching this.
final class ConnectionExchange<Context: Sendable> {
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
    /// Where the request stands (see `ConnectionStateMachine`); its body is kept there while it arrives.
    var machine = ConnectionStateMachine()

    let connection: OpaquePointer
    let started = ContinuousClock.now

    init(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?, daemon: LoopDaemon<Context>) {
        self.connection = connection
        self.target = target
        self.tracked = tracked
        self.daemon = daemon
    }

    /// Gives the dispatched request its answer and resumes the suspended connection; only the first
    /// answer (the handler's, its deadline's, the client's hang-up or shutdown) counts. Returns what the
    /// state machine decided: `.nothing` when an answer was already given, and whether the handler is
    /// to be cancelled.
    @discardableResult
    func finish(_ response: ServerResponse, from source: ConnectionStateMachine.AnswerSource) -> ConnectionStateMachine.Action {
        assert(daemon.loop.inLoop)
        let action = machine.answer(response, from: source)
        switch action {
        case .resume, .resumeAndCancelHandler:
            MHD_resume_connection(connection)
            daemon.scheduleRun()
        default:
            break
        }
        return action
    }
}

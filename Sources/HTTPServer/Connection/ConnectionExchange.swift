import CMicroHTTPD
import EventLoops
import FoundationEssentials

/// One request and its answer on a connection: what libmicrohttpd keeps for us in `con_cls` from the
/// request line to the completion notice, between calls of the access handler (the target, the head,
/// and its state machine, which holds the body so far and decides which answer wins).
// Not Sendable: libmicrohttpd calls back for a connection only on its daemon's loop; the handler's task
// carries it in a `LoopBound`, checked on access, and hands it back there.
final class ConnectionExchange<Context: Sendable> {
    /// The request target (path and query) exactly as received.
    let target: String
    /// The connection this request arrives on, for the receive deadline.
    let tracked: ConnectionTracker.Connection?
    /// The request without its body, once the headers have passed the edge checks.
    var head: ServerRequest?
    /// The owner's context, made with the head and filled in by its head check; the handler and every
    /// answer of this request see it.
    var context: Context?
    /// Where the request stands and which answer won (see `ConnectionStateMachine`); its body is kept
    /// there while it arrives.
    var machine = ConnectionStateMachine()
    /// What runs for the request once it is handed to the handler; kept until the exchange is freed, so an
    /// answer that loses the race still finds its request.
    var dispatched: Dispatched?

    let connection: OpaquePointer
    let started = ContinuousClock.now

    /// A request handed to its handler: what the deadline, a hang-up and shutdown answer, and what the
    /// winning answer stops.
    struct Dispatched {
        /// The whole request, with its body and deadline.
        let request: ServerRequest
        let context: Context
        let deadline: LoopTimer
        /// The handler's task, cancelled when the deadline, a hang-up or shutdown answers first so its work stops.
        let task: Task<Void, Never>
        /// The connection's socket, watched for a hang-up while the request is suspended (-1: not watched).
        let socket: Int32
    }

    init(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?) {
        self.connection = connection
        self.target = target
        self.tracked = tracked
    }
}

import EventLoops
import FoundationEssentials

/// Serving in process: the owner's request pipeline without sockets or libmicrohttpd, for tests that exercise
/// the pipeline (routing, checks, handlers, answers) apart from the HTTP edge.
///
/// `respond(to:)` does for a complete request what a daemon does once the edge checks passed it: the owner's
/// context from the head, the head check (on the request without its body, as the daemon runs it before any
/// body byte arrives), the deadline on the request, the middleware and responder in a task that prefers one
/// of the server's event loops (so storage and Apple calls run on a loop thread, as in production), and the
/// edge's `answered`. What the edge itself does is not there: the raw-target, header, framing and size
/// checks, the connection's headers (`Connection: close`), the deadline's own answer, hang-ups and shutdown
/// answers, the connection caps. The loopback tests cover those.
extension HTTPServer {
    /// Starts the event loops only (the server's own, or those of the group given at init): no daemon, no
    /// socket, `port` stays 0. Requests then come through `respond(to:)`; `shutdown` stops the loops.
    public func startInProcess() {
        state.withLock { s in
            guard s.inProcessLoops.isEmpty, s.daemons.isEmpty else { return }
            let ownGroup = givenGroup == nil
                ? EventLoopGroup(count: configuration.threads, coalescingMicroseconds: configuration.wakeCoalescingMicroseconds) : nil
            s.ownGroup = ownGroup
            s.inProcessLoops = (givenGroup ?? ownGroup!).loops
        }
    }

    /// The answer the owner's pipeline gives `request` (its query already decoded, header names in lower
    /// case, as the edge hands them on), computed on one of the server's loops in turn. Before
    /// `startInProcess` or after `shutdown` the answer is `shuttingDown`'s.
    ///
    /// The caller's task is the request's: cancelling it cancels the handler, as a hang-up does on a
    /// connection. The deadline is set on the request but not enforced (no timer answers in its place).
    public func respond(to request: ServerRequest) async -> ServerResponse {
        let started = ContinuousClock.now
        let core = self.core
        var context = core.edge.makeContext(for: request)
        let loop = state.withLock { s -> EventLoop? in
            guard !s.inProcessLoops.isEmpty else { return nil }
            defer { s.nextInProcessLoop = (s.nextInProcessLoop + 1) % s.inProcessLoops.count }
            return s.inProcessLoops[s.nextInProcessLoop]
        }
        guard let loop else {
            let response = core.edge.shuttingDown(request, context: &context)
            core.edge.answered(request, context: context, response: response, elapsed: ContinuousClock.now - started)
            return response
        }
        var head = request
        head.body = Data()
        if let refusal = core.edge.checkHead(head, context: &context) {
            core.edge.answered(request, context: context, response: refusal, elapsed: ContinuousClock.now - started)
            return refusal
        }
        var timed = request
        timed.deadline = .now + .milliseconds(core.configuration.requestDeadlineMilliseconds)
        let dispatched = timed
        let admitted = context
        core.tasks.started()
        let response = await withTaskExecutorPreference(loop) { await core.responder.respond(to: dispatched, context: admitted) }
        core.tasks.ended()
        core.edge.answered(dispatched, context: admitted, response: response, elapsed: ContinuousClock.now - started)
        return response
    }
}

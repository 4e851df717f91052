import FoundationEssentials

/// The phases of one request on a connection, from its head to libmicrohttpd's completion notice, as a
/// value: each event returns what the connection must do, and nothing here touches libmicrohttpd, a loop
/// or a clock, so every transition is tested alone (`ConnectionStateMachineTests`).
///
/// An event that does not fit the phase (a second answer, a body byte after a refusal, a hang-up after
/// the answer) changes nothing and returns `.nothing` (`.discardBody` for body bytes): libmicrohttpd
/// and the loop's timers can race, and the first answer given is the one the client gets.
struct ConnectionStateMachine {
    enum State {
        /// Only the request line may have arrived; the edge checks have not run.
        case awaitingHead
        /// The head passed; the body so far.
        case receivingBody(Data)
        /// The body went over the limit: it is dropped as it arrives, and refused once complete.
        case oversized
        /// The head check refused a request without a body: answered at the final call, so the
        /// connection stays open.
        case refusedWithoutBody(ServerResponse)
        /// The connection is suspended and the handler runs.
        case dispatched
        /// An answer (the handler's, the deadline's, shutdown's or a hang-up's) resumed the connection and
        /// waits for libmicrohttpd's next call to be queued.
        case answerReady(ServerResponse)
        /// An answer was queued, or the connection was closed without one.
        case answered
        /// libmicrohttpd's completion notice: the exchange is over.
        case completed
    }

    /// What the connection does after an event.
    enum Action {
        /// Nothing to do: keep reading, or keep waiting.
        case nothing
        /// The body bytes are not kept (too large, refused, or not expected now); they are consumed all the same.
        case discardBody
        /// Refuse now with this answer (log it and queue it).
        case answerRefusal(ServerResponse)
        /// The body went over the limit: refuse it with the owner's oversized answer.
        case answerOversized
        /// Suspend the connection and hand the request, with this body, to the handler.
        case suspendAndDispatch(Data)
        /// Resume the suspended connection: its answer is ready.
        case resume
        /// Resume the suspended connection and cancel the handler: its work is moot.
        case resumeAndCancelHandler
        /// Queue the answer given while the connection was suspended (it was logged when given).
        case queueAnswer(ServerResponse)
        /// Close the connection without an answer (the client hung up, or the answer says so).
        case closeConnection
    }

    /// Who gave an answer to a dispatched request.
    enum AnswerSource {
        /// The handler returned.
        case handler
        /// The request deadline passed, or the server is shutting down: the handler is cancelled.
        case replacingHandler
        /// The client hung up: the handler is cancelled and the connection closed without an answer.
        case hangUp
    }

    private(set) var state = State.awaitingHead

    /// The edge checks passed: the body, if any, is read next.
    mutating func headAccepted() -> Action {
        guard case .awaitingHead = state else { return .nothing }
        state = .receivingBody(Data())
        return .nothing
    }

    /// The edge checks refused the request before its body: answer now (the answer closes the connection).
    mutating func headRefused(_ response: ServerResponse) -> Action {
        guard case .awaitingHead = state else { return .nothing }
        state = .answered
        return .answerRefusal(response)
    }

    /// The head check refused a request that has no body: the answer waits for the final call.
    mutating func headRefusedWithoutBody(_ response: ServerResponse) -> Action {
        guard case .awaitingHead = state else { return .nothing }
        state = .refusedWithoutBody(response)
        return .nothing
    }

    /// Body bytes arrived; past `limit` bytes in all, the body is dropped and the request becomes oversized.
    mutating func bodyChunk(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Action {
        guard case .receivingBody(var body) = state else { return .discardBody }
        if body.count + bytes.count > limit {
            state = .oversized
            return .discardBody
        }
        // Out of the enum while appending, so the body is not copied on every chunk.
        state = .awaitingHead
        body.append(contentsOf: bytes)
        state = .receivingBody(body)
        return .nothing
    }

    /// libmicrohttpd's call without body bytes: the request is complete, or (dispatched) the connection
    /// was resumed; libmicrohttpd may also call again while it is still suspended.
    mutating func requestComplete() -> Action {
        switch state {
        case .receivingBody(let body):
            state = .dispatched
            return .suspendAndDispatch(body)
        case .oversized:
            state = .answered
            return .answerOversized
        case .refusedWithoutBody(let response):
            state = .answered
            return .answerRefusal(response)
        case .answerReady(let response):
            state = .answered
            return response.dropConnection ? .closeConnection : .queueAnswer(response)
        case .awaitingHead, .dispatched, .answered, .completed:
            return .nothing
        }
    }

    /// An answer for the dispatched request; only the first one counts.
    mutating func answer(_ response: ServerResponse, from source: AnswerSource) -> Action {
        guard case .dispatched = state else { return .nothing }
        switch source {
        case .handler:
            state = .answerReady(response)
            return .resume
        case .replacingHandler:
            state = .answerReady(response)
            return .resumeAndCancelHandler
        case .hangUp:
            var dropping = response
            dropping.dropConnection = true
            state = .answerReady(dropping)
            return .resumeAndCancelHandler
        }
    }

    /// libmicrohttpd's completion notice (it never sends one for a suspended connection).
    mutating func completed() -> Action {
        state = .completed
        return .nothing
    }
}

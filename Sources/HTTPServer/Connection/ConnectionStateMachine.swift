import FoundationEssentials

/// The phases of one request on a connection, from its head to libmicrohttpd's completion notice, and
/// which answer wins once it is handed to the handler, as a value: each event returns what the connection
/// must do, and nothing here touches libmicrohttpd, a loop or a clock, so every transition is tested alone
/// (`ConnectionStateMachineTests`). async-http-client's `HTTP1ConnectionStateMachine` is the model.
///
/// After dispatch four answers race: the handler's, the deadline's, the client's hang-up and shutdown's.
/// The first one given wins and resumes the connection; the daemon takes the request out of its deadline,
/// its hang-up watch and the shutdown list as it delivers it, so the only answer that can still come is the
/// handler's, returning late: that one is dropped. Every other event out of its phase cannot happen unless
/// the daemon is wrong, and traps. The events libmicrohttpd and the client decide (body bytes after a
/// refusal, a call while suspended, a close at any point) are tolerated where they can happen.
struct ConnectionStateMachine {
    enum State {
        /// Only the request line has arrived; the edge checks have not run.
        case awaitingHead
        /// The head passed; the body so far.
        case receivingBody(Data)
        /// Never seen between events: held while the body is appended, so the body's buffer is not copied.
        case modifying
        /// The body went over the limit: it is dropped as it arrives, and refused once complete.
        case oversized
        /// The head check refused a request without a body: answered at the final call, so the
        /// connection stays open.
        case refusedWithoutBody(ServerResponse)
        /// Answered before any dispatch (an edge or head refusal, an oversized body): nothing runs for it.
        case refused
        /// The connection is suspended and the handler runs; nobody has answered yet.
        case handling
        /// The winning answer resumed the connection and waits for libmicrohttpd's next call to be queued.
        case answerReady(ServerResponse)
        /// The winning answer was queued, or the connection closed without one.
        case answered
        /// libmicrohttpd's completion notice: the exchange is over (after a dispatch or not; only a
        /// dispatched request has a handler that can still return).
        case completed(dispatched: Bool)
    }

    /// What the connection does after an event.
    enum Action {
        /// Nothing to do: keep reading, or keep waiting.
        case nothing
        /// The body bytes are not kept (too large, or refused); they are consumed all the same.
        case discardBody
        /// Refuse now with this answer (log it and queue it).
        case answerRefusal(ServerResponse)
        /// The body went over the limit: refuse it with the owner's oversized answer.
        case answerOversized
        /// Suspend the connection and hand the request, with this body, to the handler.
        case suspendAndDispatch(Data)
        /// This answer won: take the request out of its deadline, hang-up watch and the shutdown list, log
        /// it, resume the connection, and cancel the handler when it is still running (its work is moot).
        case deliver(ServerResponse, cancelHandler: Bool)
        /// The handler returned after another answer won (deadline, hang-up, shutdown): its answer is not sent.
        case dropLateAnswer
        /// Queue the answer given while the connection was suspended (it was logged when given).
        case queueAnswer(ServerResponse)
        /// Close the connection without an answer (the client hung up, or the answer says so).
        case closeConnection
        /// libmicrohttpd closed the connection while the handler ran (a daemon stopping): take the request
        /// out of its deadline, hang-up watch and the shutdown list, and cancel the handler; nothing is sent.
        case abandonHandler
    }

    /// Who gives an answer to a dispatched request.
    enum AnswerSource: CaseIterable {
        /// The handler returned.
        case handler
        /// The request deadline passed.
        case deadline
        /// The client hung up: the connection is closed without an answer.
        case hangUp
        /// The server is shutting down and the grace period is over.
        case shutdown
    }

    private(set) var state = State.awaitingHead

    // MARK: - The head (the daemon runs the edge checks in `awaitingHead` only)

    /// The edge checks passed: the body, if any, is read next.
    mutating func headAccepted() -> Action {
        guard case .awaitingHead = state else { preconditionFailure("the head accepted in \(state)") }
        state = .receivingBody(Data())
        return .nothing
    }

    /// The edge checks refused the request before its body: answer now (the answer closes the connection).
    mutating func headRefused(_ response: ServerResponse) -> Action {
        guard case .awaitingHead = state else { preconditionFailure("the head refused in \(state)") }
        state = .refused
        return .answerRefusal(response)
    }

    /// The head check refused a request that has no body: the answer waits for the final call.
    mutating func headRefusedWithoutBody(_ response: ServerResponse) -> Action {
        guard case .awaitingHead = state else { preconditionFailure("the head refused without body in \(state)") }
        state = .refusedWithoutBody(response)
        return .nothing
    }

    // MARK: - The body

    /// Body bytes arrived; past `limit` bytes in all, the body is dropped and the request becomes oversized.
    /// Bytes after a refusal are the client's (a length libmicrohttpd reads and the edge did not): dropped.
    mutating func bodyChunk(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Action {
        switch state {
        case .receivingBody(var body):
            if body.count + bytes.count > limit {
                state = .oversized
                return .discardBody
            }
            state = .modifying
            body.append(contentsOf: bytes)
            state = .receivingBody(body)
            return .nothing
        case .oversized, .refusedWithoutBody, .refused:
            return .discardBody
        case .awaitingHead, .modifying, .handling, .answerReady, .answered, .completed:
            // libmicrohttpd reads the whole body before its final call, and nothing of a suspended connection.
            preconditionFailure("body bytes in \(state)")
        }
    }

    /// libmicrohttpd's call without body bytes: the request is complete, or (dispatched) the connection
    /// was resumed; libmicrohttpd may also call while the connection is still suspended, or after the answer.
    mutating func requestComplete() -> Action {
        switch state {
        case .receivingBody(let body):
            state = .handling
            return .suspendAndDispatch(body)
        case .oversized:
            state = .refused
            return .answerOversized
        case .refusedWithoutBody(let response):
            state = .refused
            return .answerRefusal(response)
        case .answerReady(let response):
            state = .answered
            return response.dropConnection ? .closeConnection : .queueAnswer(response)
        case .handling, .refused, .answered:
            return .nothing
        case .awaitingHead, .modifying, .completed:
            preconditionFailure("the final call in \(state)")
        }
    }

    // MARK: - Which answer wins

    /// An answer for the dispatched request: the first one wins; a handler returning after it is dropped.
    mutating func answer(_ response: ServerResponse, from source: AnswerSource) -> Action {
        switch state {
        case .handling:
            break
        case .answerReady, .answered, .completed(dispatched: true):
            // The race: the deadline, a hang-up or shutdown answered, then the handler returned.
            guard case .handler = source else {
                preconditionFailure("a \(source) answer after the request was answered: its timer, watch or entry outlived it")
            }
            return .dropLateAnswer
        case .awaitingHead, .receivingBody, .modifying, .oversized, .refusedWithoutBody, .refused, .completed(dispatched: false):
            preconditionFailure("a \(source) answer to a request never dispatched (\(state))")
        }
        switch source {
        case .handler:
            state = .answerReady(response)
            return .deliver(response, cancelHandler: false)
        case .deadline:
            state = .answerReady(response)
            return .deliver(response, cancelHandler: true)
        case .shutdown:
            state = .answerReady(response)
            return .deliver(response, cancelHandler: true)
        case .hangUp:
            var dropping = response
            dropping.dropConnection = true
            state = .answerReady(dropping)
            return .deliver(dropping, cancelHandler: true)
        }
    }

    // MARK: - Completion

    /// libmicrohttpd's completion notice, at any point: it sends none for a suspended connection while it
    /// runs, but a daemon that stops closes every connection, one dispatched in its last runs included.
    mutating func completed() -> Action {
        switch state {
        case .awaitingHead, .receivingBody, .oversized, .refusedWithoutBody, .refused:
            state = .completed(dispatched: false)
            return .nothing
        case .answerReady, .answered:
            state = .completed(dispatched: true)
            return .nothing
        case .handling:
            state = .completed(dispatched: true)
            return .abandonHandler
        case .modifying, .completed:
            preconditionFailure("the completion notice in \(state)")
        }
    }
}

import FoundationEssentials
@testable import HTTPServer
import Testing

/// The connection's phases alone, without libmicrohttpd or a loop: every legal event, each tolerated race
/// on its own, and the impossible events, which trap.
@Suite struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine

    // MARK: - Phases reached through legal events

    static func awaitingHead() -> Machine { Machine() }
    static func receiving(_ body: [UInt8] = []) -> Machine {
        var machine = Machine()
        _ = machine.headAccepted()
        if !body.isEmpty { _ = machine.chunk(body, limit: 1_000) }
        return machine
    }
    static func oversized() -> Machine {
        var machine = receiving()
        _ = machine.chunk(Array(repeating: 1, count: 11), limit: 10)
        return machine
    }
    static func refusedWithoutBody() -> Machine {
        var machine = Machine()
        _ = machine.headRefusedWithoutBody(.text(403, "refused"))
        return machine
    }
    static func refusedAtHead() -> Machine {
        var machine = Machine()
        _ = machine.headRefused(.text(400, "bad"))
        return machine
    }
    static func handling() -> Machine {
        var machine = receiving([1, 2])
        _ = machine.requestComplete()
        return machine
    }
    static func answerReady(from source: Machine.AnswerSource = .handler) -> Machine {
        var machine = handling()
        _ = machine.answer(.text(200, "first"), from: source)
        return machine
    }
    static func answered(from source: Machine.AnswerSource = .handler) -> Machine {
        var machine = answerReady(from: source)
        _ = machine.requestComplete()
        return machine
    }
    static func completed(from source: Machine.AnswerSource = .handler) -> Machine {
        var machine = answered(from: source)
        _ = machine.completed()
        return machine
    }

    /// The phases after another answer won, where only the handler's late answer can still come.
    static var answeredPhases: [(String, Machine)] {
        Machine.AnswerSource.allCases.filter { $0 != .handler }.flatMap { source in
            [("answerReady by \(source)", answerReady(from: source)), ("answered by \(source)", answered(from: source)),
             ("completed by \(source)", completed(from: source))]
        }
    }

    // MARK: - The head

    @Test func anAcceptedHeadReadsTheBody() {
        var machine = Machine()
        #expect(machine.headAccepted().name == "nothing")
        #expect(machine.phase == "receivingBody")
        #expect(machine.state.body == Data())
    }

    @Test func aRefusedHeadIsAnsweredAtOnce() {
        var machine = Machine()
        let action = machine.headRefused(.text(400, "bad"))
        #expect(action.name == "answerRefusal")
        #expect(action.response?.status == 400)
        #expect(machine.phase == "refused")
    }

    @Test func aRefusalWithoutBodyWaitsForTheFinalCall() {
        var machine = Machine()
        #expect(machine.headRefusedWithoutBody(.text(403, "refused")).name == "nothing")
        #expect(machine.phase == "refusedWithoutBody")
        let action = machine.requestComplete()
        #expect(action.name == "answerRefusal")
        #expect(action.response?.status == 403)
        #expect(machine.phase == "refused")
    }

    // MARK: - The body

    @Test func bodyChunksAccumulateUpToTheLimit() {
        var machine = Self.receiving()
        #expect(machine.chunk([1, 2, 3], limit: 5).name == "nothing")
        #expect(machine.chunk([4, 5], limit: 5).name == "nothing")
        #expect(machine.state.body == Data([1, 2, 3, 4, 5]))
        let action = machine.requestComplete()
        #expect(action.name == "suspendAndDispatch")
        #expect(action.body == Data([1, 2, 3, 4, 5]))
        #expect(machine.phase == "handling")
    }

    @Test func aBodyPastTheLimitIsDroppedAndRefusedOnceComplete() {
        var machine = Self.receiving([1, 2, 3])
        #expect(machine.chunk([4, 5, 6], limit: 5).name == "discardBody")
        #expect(machine.phase == "oversized")
        #expect(machine.chunk([7], limit: 5).name == "discardBody")
        #expect(machine.phase == "oversized")
        #expect(machine.requestComplete().name == "answerOversized")
        #expect(machine.phase == "refused")
    }

    /// Tolerated: the client's bytes after a refusal (a length libmicrohttpd reads and the edge did not) are dropped.
    @Test func bodyBytesAfterARefusalAreDiscarded() {
        for (phase, start) in [("oversized", Self.oversized()), ("refusedWithoutBody", Self.refusedWithoutBody()), ("refused", Self.refusedAtHead())] {
            var machine = start
            #expect(machine.chunk([1], limit: 1_000).name == "discardBody", "\(phase)")
            #expect(machine.phase == start.phase, "bodyChunk in \(phase)")
        }
    }

    @Test func anEmptyBodyIsDispatchedEmpty() {
        var machine = Self.receiving()
        let action = machine.requestComplete()
        #expect(action.name == "suspendAndDispatch")
        #expect(action.body == Data())
    }

    // MARK: - Which answer wins

    /// Tolerated: libmicrohttpd may call while the connection is still suspended.
    @Test func aCallWhileSuspendedWaitsForTheAnswer() {
        var machine = Self.handling()
        #expect(machine.requestComplete().name == "nothing")
        #expect(machine.phase == "handling")
    }

    /// Tolerated: libmicrohttpd may call again once the answer is queued (or the refusal was).
    @Test func aCallAfterTheAnswerDoesNothing() {
        for (phase, start) in [("answered", Self.answered()), ("refused", Self.refusedAtHead())] {
            var machine = start
            #expect(machine.requestComplete().name == "nothing", "\(phase)")
            #expect(machine.phase == start.phase, "\(phase)")
        }
    }

    @Test func theHandlersAnswerIsDeliveredAndQueuedAtTheNextCall() {
        var machine = Self.handling()
        let delivered = machine.answer(.text(200, "handler"), from: .handler)
        #expect(delivered.name == "deliver")
        #expect(delivered.cancelsHandler == false)
        #expect(delivered.response?.status == 200)
        #expect(machine.phase == "answerReady")
        let action = machine.requestComplete()
        #expect(action.name == "queueAnswer")
        #expect(action.response?.status == 200)
        #expect(machine.phase == "answered")
    }

    @Test(arguments: [Machine.AnswerSource.deadline, .shutdown])
    func aDeadlineOrShutdownAnswerIsDeliveredAndCancelsTheHandler(source: Machine.AnswerSource) {
        var machine = Self.handling()
        let delivered = machine.answer(.text(503, "\(source)"), from: source)
        #expect(delivered.name == "deliver")
        #expect(delivered.cancelsHandler == true)
        let action = machine.requestComplete()
        #expect(action.name == "queueAnswer")
        #expect(action.response?.status == 503)
    }

    @Test func aHangUpCancelsTheHandlerAndClosesWithoutAnAnswer() {
        var machine = Self.handling()
        let delivered = machine.answer(.text(499, "hangup"), from: .hangUp)
        #expect(delivered.name == "deliver")
        #expect(delivered.cancelsHandler == true)
        // What the log sees is marked as dropped too.
        #expect(delivered.response?.dropConnection == true)
        #expect(machine.phase == "answerReady")
        #expect(machine.requestComplete().name == "closeConnection")
        #expect(machine.phase == "answered")
    }

    @Test func anAnswerThatDropsTheConnectionClosesIt() {
        var machine = Self.handling()
        #expect(machine.answer(.dropped, from: .handler).name == "deliver")
        #expect(machine.requestComplete().name == "closeConnection")
    }

    /// The race: the deadline, a hang-up or shutdown answered, then the handler returns (before the answer is
    /// queued, after, or once the exchange completed): its answer is dropped and nothing changes.
    @Test func aHandlerReturningAfterAnotherAnswerIsDropped() {
        for (phase, start) in Self.answeredPhases {
            var machine = start
            #expect(machine.answer(.text(200, "late"), from: .handler).name == "dropLateAnswer", "\(phase)")
            #expect(machine.phase == start.phase, "\(phase)")
        }
    }

    @Test func theFirstAnswerIsTheOneQueued() {
        var machine = Self.handling()
        _ = machine.answer(.text(503, "deadline"), from: .deadline)
        #expect(machine.answer(.text(200, "handler"), from: .handler).name == "dropLateAnswer")
        let action = machine.requestComplete()
        #expect(action.name == "queueAnswer")
        #expect(action.response?.status == 503)
    }

    // MARK: - Completion

    /// Tolerated: the client may close, or libmicrohttpd time out, at any point before the handler runs.
    @Test func completionEndsEveryPhase() {
        for (phase, start) in [("awaitingHead", Self.awaitingHead()), ("receivingBody", Self.receiving([1])), ("oversized", Self.oversized()),
                               ("refusedWithoutBody", Self.refusedWithoutBody()), ("refused", Self.refusedAtHead()),
                               ("answerReady", Self.answerReady()), ("answered", Self.answered())] {
            var machine = start
            #expect(machine.completed().name == "nothing", "\(phase)")
            #expect(machine.phase == "completed", "\(phase)")
        }
    }

    /// Tolerated: a daemon that stops closes a connection dispatched in its last runs; its handler is cancelled,
    /// and its answer, when it comes, dropped.
    @Test func completionWhileHandlingAbandonsTheHandler() {
        var machine = Self.handling()
        #expect(machine.completed().name == "abandonHandler")
        #expect(machine.phase == "completed")
        #expect(machine.answer(.text(200, "late"), from: .handler).name == "dropLateAnswer")
    }
}

// MARK: - Impossible events trap (each in a child process: a Swift Testing exit test)

extension ConnectionStateMachineTests {
    @Test func aDeadlineAfterTheAnswerTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachineTests.answered()
            _ = machine.answer(.text(503, "deadline"), from: .deadline)
        }
    }

    @Test func aHangUpAfterTheExchangeCompletedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachineTests.completed(from: .deadline)
            _ = machine.answer(.text(499, "hangup"), from: .hangUp)
        }
    }

    @Test func anAnswerToARequestNeverDispatchedTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachineTests.refusedAtHead()
            _ = machine.answer(.text(200, "handler"), from: .handler)
        }
    }

    @Test func aSecondHeadTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachineTests.receiving()
            _ = machine.headAccepted()
        }
    }

    @Test func bodyBytesWhileSuspendedTrap() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachineTests.handling()
            _ = machine.chunk([1], limit: 10)
        }
    }

    @Test func aSecondCompletionTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = ConnectionStateMachineTests.completed()
            _ = machine.completed()
        }
    }
}

extension ConnectionStateMachine {
    /// The phase's name, for comparisons and messages.
    var phase: String {
        switch state {
        case .awaitingHead: "awaitingHead"
        case .receivingBody: "receivingBody"
        case .modifying: "modifying"
        case .oversized: "oversized"
        case .refusedWithoutBody: "refusedWithoutBody"
        case .refused: "refused"
        case .handling: "handling"
        case .answerReady: "answerReady"
        case .answered: "answered"
        case .completed: "completed"
        }
    }

    mutating func chunk(_ bytes: [UInt8], limit: Int) -> Action {
        bytes.withUnsafeBytes { bodyChunk($0, limit: limit) }
    }
}

extension ConnectionStateMachine.State {
    var body: Data? { if case .receivingBody(let body) = self { body } else { nil } }
}

extension ConnectionStateMachine.Action {
    var name: String {
        switch self {
        case .nothing: "nothing"
        case .discardBody: "discardBody"
        case .answerRefusal: "answerRefusal"
        case .answerOversized: "answerOversized"
        case .suspendAndDispatch: "suspendAndDispatch"
        case .deliver: "deliver"
        case .dropLateAnswer: "dropLateAnswer"
        case .queueAnswer: "queueAnswer"
        case .closeConnection: "closeConnection"
        case .abandonHandler: "abandonHandler"
        }
    }

    var response: ServerResponse? {
        switch self {
        case .answerRefusal(let response), .queueAnswer(let response), .deliver(let response, _): response
        default: nil
        }
    }

    var cancelsHandler: Bool? { if case .deliver(_, let cancel) = self { cancel } else { nil } }

    var body: Data? { if case .suspendAndDispatch(let body) = self { body } else { nil } }
}

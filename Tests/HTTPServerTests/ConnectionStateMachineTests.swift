import FoundationEssentials
@testable import HTTPServer
import Testing

/// The connection's phases alone, without libmicrohttpd or a loop: every event in every phase, the
/// illegal ones included (they change nothing).
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
    static func dispatched() -> Machine {
        var machine = receiving([1, 2])
        _ = machine.requestComplete()
        return machine
    }
    static func answerReady(from source: Machine.AnswerSource = .handler) -> Machine {
        var machine = dispatched()
        _ = machine.answer(.text(200, "handler"), from: source)
        return machine
    }
    static func answered() -> Machine {
        var machine = answerReady()
        _ = machine.requestComplete()
        return machine
    }
    static func refusedAtHead() -> Machine {
        var machine = Machine()
        _ = machine.headRefused(.text(400, "bad"))
        return machine
    }
    static func completed() -> Machine {
        var machine = answered()
        _ = machine.completed()
        return machine
    }

    /// A machine in every phase, each named (a head refusal ends in `answered`), for the illegal events of each.
    static var everyPhase: [(String, Machine)] {
        [("awaitingHead", awaitingHead()), ("receivingBody", receiving([1])), ("oversized", oversized()),
         ("refusedWithoutBody", refusedWithoutBody()), ("dispatched", dispatched()), ("answerReady", answerReady()),
         ("answered", answered()), ("refusedAtHead", refusedAtHead()), ("completed", completed())]
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
        #expect(machine.phase == "answered")
    }

    @Test func aRefusalWithoutBodyWaitsForTheFinalCall() {
        var machine = Machine()
        #expect(machine.headRefusedWithoutBody(.text(403, "refused")).name == "nothing")
        #expect(machine.phase == "refusedWithoutBody")
        let action = machine.requestComplete()
        #expect(action.name == "answerRefusal")
        #expect(action.response?.status == 403)
        #expect(machine.phase == "answered")
    }

    @Test func headEventsAfterTheHeadChangeNothing() {
        for (phase, start) in Self.everyPhase where phase != "awaitingHead" {
            var machine = start
            #expect(machine.headAccepted().name == "nothing", "\(phase)")
            #expect(machine.phase == start.phase, "headAccepted in \(phase)")
            #expect(machine.headRefused(.text(400, "late")).name == "nothing", "\(phase)")
            #expect(machine.phase == start.phase, "headRefused in \(phase)")
            #expect(machine.headRefusedWithoutBody(.text(403, "late")).name == "nothing", "\(phase)")
            #expect(machine.phase == start.phase, "headRefusedWithoutBody in \(phase)")
        }
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
        #expect(machine.phase == "dispatched")
    }

    @Test func aBodyPastTheLimitIsDroppedAndRefusedOnceComplete() {
        var machine = Self.receiving([1, 2, 3])
        #expect(machine.chunk([4, 5, 6], limit: 5).name == "discardBody")
        #expect(machine.phase == "oversized")
        #expect(machine.chunk([7], limit: 5).name == "discardBody")
        #expect(machine.phase == "oversized")
        #expect(machine.requestComplete().name == "answerOversized")
        #expect(machine.phase == "answered")
    }

    @Test func bodyBytesOutsideTheBodyPhaseAreDiscarded() {
        for (phase, start) in Self.everyPhase where phase != "receivingBody" {
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

    // MARK: - Dispatch and answers

    @Test func aDispatchedRequestWaitsForItsAnswer() {
        var machine = Self.dispatched()
        #expect(machine.requestComplete().name == "nothing")
        #expect(machine.phase == "dispatched")
    }

    @Test func theHandlersAnswerResumesAndIsQueuedAtTheNextCall() {
        var machine = Self.dispatched()
        #expect(machine.answer(.text(200, "handler"), from: .handler).name == "resume")
        #expect(machine.phase == "answerReady")
        let action = machine.requestComplete()
        #expect(action.name == "queueAnswer")
        #expect(action.response?.status == 200)
        #expect(machine.phase == "answered")
        #expect(machine.requestComplete().name == "nothing")
        #expect(machine.phase == "answered")
    }

    @Test func aDeadlineOrShutdownAnswerCancelsTheHandler() {
        var machine = Self.dispatched()
        #expect(machine.answer(.text(504, "deadline"), from: .replacingHandler).name == "resumeAndCancelHandler")
        let action = machine.requestComplete()
        #expect(action.name == "queueAnswer")
        #expect(action.response?.status == 504)
    }

    @Test func aHangUpCancelsTheHandlerAndClosesWithoutAnAnswer() {
        var machine = Self.dispatched()
        #expect(machine.answer(.text(499, "hangup"), from: .hangUp).name == "resumeAndCancelHandler")
        #expect(machine.phase == "answerReady")
        #expect(machine.requestComplete().name == "closeConnection")
        #expect(machine.phase == "answered")
    }

    @Test func anAnswerThatDropsTheConnectionClosesIt() {
        var machine = Self.dispatched()
        #expect(machine.answer(.dropped, from: .handler).name == "resume")
        #expect(machine.requestComplete().name == "closeConnection")
    }

    /// Only the first answer counts: a handler finishing after its deadline, a hang-up after the answer,
    /// an answer twice, an answer to a request never dispatched.
    @Test func answersOutsideTheDispatchedPhaseChangeNothing() {
        for (phase, start) in Self.everyPhase where phase != "dispatched" {
            for source in [Machine.AnswerSource.handler, .replacingHandler, .hangUp] {
                var machine = start
                #expect(machine.answer(.text(200, "late"), from: source).name == "nothing", "\(source) in \(phase)")
                #expect(machine.phase == start.phase, "\(source) in \(phase)")
            }
        }
    }

    @Test func theFirstAnswerIsTheOneQueued() {
        var machine = Self.dispatched()
        _ = machine.answer(.text(504, "deadline"), from: .replacingHandler)
        #expect(machine.answer(.text(200, "handler"), from: .handler).name == "nothing")
        #expect(machine.answer(.text(499, "hangup"), from: .hangUp).name == "nothing")
        let action = machine.requestComplete()
        #expect(action.name == "queueAnswer")
        #expect(action.response?.status == 504)
    }

    // MARK: - Completion

    @Test func completionEndsEveryPhaseAndNothingFollows() {
        for (phase, start) in Self.everyPhase {
            var machine = start
            #expect(machine.completed().name == "nothing", "\(phase)")
            #expect(machine.phase == "completed", "\(phase)")
            #expect(machine.headAccepted().name == "nothing")
            #expect(machine.chunk([1], limit: 10).name == "discardBody")
            #expect(machine.requestComplete().name == "nothing")
            #expect(machine.answer(.text(200, "late"), from: .handler).name == "nothing")
            #expect(machine.phase == "completed", "\(phase)")
        }
    }

    @Test func theFinalCallBeforeTheHeadDoesNothing() {
        var machine = Machine()
        #expect(machine.requestComplete().name == "nothing")
        #expect(machine.phase == "awaitingHead")
    }
}

extension ConnectionStateMachine {
    /// The phase's name, for comparisons and messages.
    var phase: String {
        switch state {
        case .awaitingHead: "awaitingHead"
        case .receivingBody: "receivingBody"
        case .oversized: "oversized"
        case .refusedWithoutBody: "refusedWithoutBody"
        case .dispatched: "dispatched"
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
        case .resume: "resume"
        case .resumeAndCancelHandler: "resumeAndCancelHandler"
        case .queueAnswer: "queueAnswer"
        case .closeConnection: "closeConnection"
        }
    }

    var response: ServerResponse? {
        switch self {
        case .answerRefusal(let response), .queueAnswer(let response): response
        default: nil
        }
    }

    var body: Data? { if case .suspendAndDispatch(let body) = self { body } else { nil } }
}

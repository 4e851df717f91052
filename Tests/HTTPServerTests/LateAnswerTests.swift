import EventLoops
import Foundation
import HTTPServer
import Locking
import Testing

/// A handler that returns after its request was already answered (by a hang-up or the deadline) has its
/// answer dropped, and never given to a later request: that request may be another client's, on an
/// exchange allocated where the first one was freed (the stop-39 benchmark saw a `/metrics` read answered
/// with a hung-up fallback's 503).
@Suite(.serialized) struct LateAnswerTests {
    /// The handlers started and the gates opened, by request name.
    final class Gates: Sendable {
        let started = Lock<Set<String>>([])
        let open = Lock<Set<String>>([])
        let answered = Lock<Int>(0)

        func waitStarted(_ name: String) async throws -> Bool {
            for _ in 0..<500 where !started.withLock({ $0.contains(name) }) { try await Task.sleep(for: .milliseconds(10)) }
            return started.withLock { $0.contains(name) }
        }

        func waitAnswered(_ count: Int) async throws -> Bool {
            for _ in 0..<500 where answered.withLock({ $0 }) < count { try await Task.sleep(for: .milliseconds(10)) }
            return answered.withLock { $0 } >= count
        }
    }

    /// Each round: client A's handler ignores cancellation and waits for its gate; A hangs up (answered as a
    /// hang-up, its exchange completed and freed); client B's request is dispatched; then A's handler returns.
    /// B must get B's answer. Several rounds (the old code mixed every one up), so that an exchange reusing a freed one's address shows.
    @Test(arguments: [false, true])
    func aHandlerFinishingAfterItsRequestWasAnsweredNeverAnswersAnotherRequest(byDeadline: Bool) async throws {
        let gates = Gates()
        let group = EventLoopGroup(count: 1, name: "late-answer-test")
        var configuration = HTTPServerConfiguration(threads: 1, requestDeadlineMilliseconds: byDeadline ? 800 : 60_000)
        configuration.cancelsOnHangUp = true
        let server = HTTPServer(configuration: configuration, group: group,
                                edge: TestEdge(onAnswered: { _, _, _ in gates.answered.withLock { $0 += 1 } })) { request in
            let name = String(request.path.dropFirst())
            gates.started.withLock { _ = $0.insert(name) }
            // Deaf to cancellation, as a handler past its last suspension point is.
            for _ in 0..<2_000 where !gates.open.withLock({ $0.contains(name) }) {
                await withCheckedContinuation { done in DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) { done.resume() } }
            }
            return .text(200, "answer \(name)")
        }
        try server.start()
        defer { group.shutdown() }
        var mixedUp: [String] = []
        var ownAnswers = 0
        let rounds = byDeadline ? 8 : 12
        for round in 1...rounds {
            let first = "a\(round)", second = "b\(round)"
            var client: RawClient? = try RawClient(port: server.port)
            client?.send("GET /\(first) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try await gates.waitStarted(first))
            if byDeadline {
                // The deadline answers A (503); A reads it and the connection closes.
                _ = client?.readAll()
            }
            client = nil
            #expect(try await gates.waitAnswered(2 * round - 1), "A of round \(round) answered by the \(byDeadline ? "deadline" : "hang-up")")
            try await Task.sleep(for: .milliseconds(20)) // MHD completes A's exchange on its next run

            let other = try RawClient(port: server.port)
            other.send("GET /\(second) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try await gates.waitStarted(second))
            gates.open.withLock { _ = $0.insert(first) }
            try await Task.sleep(for: .milliseconds(30)) // A's handler returns, late
            gates.open.withLock { _ = $0.insert(second) }
            let answer = other.readAll()
            if answer.hasSuffix("answer \(first)") { mixedUp.append("round \(round)") }
            // B's own deadline may pass on a loaded machine: that is B's answer, not A's.
            if answer.hasSuffix("answer \(second)") { ownAnswers += 1 }
        }
        #expect(mixedUp.isEmpty, "B was given A's late answer: \(mixedUp)")
        #expect(ownAnswers * 2 >= rounds, "B got its own answer in \(ownAnswers) of \(rounds) rounds")
        await server.shutdown(graceMilliseconds: 500)
    }
}

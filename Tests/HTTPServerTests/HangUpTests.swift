@testable import EventLoops
import Foundation
import HTTPServer
import Locking
import Testing

/// A client that hangs up while its request is handled has the handler's task cancelled at once, not at
/// the deadline: libmicrohttpd neither reads nor notifies a suspended connection, so the server watches
/// its socket (EPOLLRDHUP) and deregisters it before the connection is resumed.
@Suite(.serialized) struct HangUpTests {
    /// What the handlers and `onAnswered` saw, shared with the test.
    final class Seen: Sendable {
        let started = Lock<Int>(0)
        let cancelled = Lock<Int>(0)
        let finished = Lock<Int>(0)
        let statuses = Lock<[Int]>([])

        /// Waits (polling, at most about 10 s: far below the 60 s deadline) until `lock` holds at least `count`.
        func wait(for lock: Lock<Int>, _ count: Int) async throws -> Bool {
            for _ in 0..<500 where lock.withLock({ $0 }) < count { try await Task.sleep(for: .milliseconds(20)) }
            return lock.withLock { $0 } >= count
        }
    }

    /// A server on a loop of the test's own (so the test can count the loop's watches), whose `/slow`
    /// handler waits a minute unless cancelled and whose other paths answer after a short wait (so they
    /// are suspended, and watched, too).
    func withServer(_ seen: Seen, cancelsOnHangUp: Bool = true, slowSeconds: Int = 60,
                    _ body: (HTTPServer<Void>, EventLoop) async throws -> Void) async throws {
        let group = EventLoopGroup(count: 1, name: "hangup-test")
        var configuration = HTTPServerConfiguration(threads: 1, requestDeadlineMilliseconds: 60_000)
        configuration.cancelsOnHangUp = cancelsOnHangUp
        let server = HTTPServer(configuration: configuration, group: group,
                                edge: TestEdge(onAnswered: { _, response, _ in seen.statuses.withLock { $0.append(response.status) } })) { request in
            seen.started.withLock { $0 += 1 }
            guard request.path == "/slow" else {
                try? await Task.sleep(for: .milliseconds(5))
                return .text(200, "ok")
            }
            do { try await Task.sleep(for: .seconds(slowSeconds)) } catch { seen.cancelled.withLock { $0 += 1 } }
            seen.finished.withLock { $0 += 1 }
            return .text(200, "late")
        }
        try server.start()
        try await body(server, group.loops[0])
        await server.shutdown(graceMilliseconds: 500)
        group.shutdown()
    }

    /// Hung up by closing the socket, or by closing only its sending side (`shutdown(SHUT_WR)`, which the
    /// server takes as a hang-up too: docs/architecture.md, "The request path").
    @Test(arguments: [false, true])
    func aClientThatHangsUpHasItsHandlerCancelled(halfClose: Bool) async throws {
        let seen = Seen()
        try await withServer(seen) { server, _ in
            var client: RawClient? = try RawClient(port: server.port)
            client?.send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            #expect(try await seen.wait(for: seen.started, 1))
            if halfClose, let fd = client?.fd {
                shutdown(fd, Int32(SHUT_WR))
                #expect(client?.closedByServer == true, "closed without an answer")
            }
            client = nil
            #expect(try await seen.wait(for: seen.cancelled, 1), "the handler saw its cancellation before the deadline")
            #expect(seen.statuses.withLock { $0 } == [499], "counted once, as a hang-up")
        }
    }

    /// Many hang-ups in a row, then normal requests on the reused socket numbers: every watch ended with
    /// its request (the loop watches only the daemon's epoll set again), and every later request is answered.
    @Test func hangUpsLeaveNoWatchBehindAndReusedSocketsAreServed() async throws {
        let seen = Seen()
        try await withServer(seen) { server, loop in
            let idle = loop.submitAndWait { loop.watchedDescriptorCount }
            for round in 1...30 {
                var client: RawClient? = try RawClient(port: server.port)
                client?.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try await seen.wait(for: seen.started, round))
                client = nil
                #expect(try await seen.wait(for: seen.cancelled, round), "hang-up \(round) cancelled its handler")
            }
            for _ in 1...30 {
                let client = try RawClient(port: server.port)
                client.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let answer = client.readAll()
                #expect(answer.hasPrefix("HTTP/1.1 200") && answer.hasSuffix("ok"), "\(answer)")
            }
            // A kept-alive client pipelines its next request while the first is handled: bytes arriving on a
            // suspended connection are not a hang-up, and both are answered.
            let keeper = try RawClient(port: server.port)
            keeper.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
            keeper.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let both = keeper.readAll()
            #expect(both.components(separatedBy: "HTTP/1.1 200").count == 3, "\(both)")
            #expect(loop.submitAndWait { loop.watchedDescriptorCount } == idle, "a watch outlived its request")
            #expect(seen.cancelled.withLock { $0 } == 30)
            #expect(seen.statuses.withLock { $0 }.filter { $0 == 499 }.count == 30)
        }
    }

    /// A server told not to cancel on hang-ups (the Apple sandbox: Apple finishes what it was asked) lets the
    /// handler of a client that hung up run to its end, and watches nothing.
    @Test func aServerThatDoesNotCancelOnHangUpFinishesTheWork() async throws {
        let seen = Seen()
        try await withServer(seen, cancelsOnHangUp: false, slowSeconds: 1) { server, loop in
            let idle = loop.submitAndWait { loop.watchedDescriptorCount }
            var client: RawClient? = try RawClient(port: server.port)
            client?.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await seen.wait(for: seen.started, 1))
            #expect(loop.submitAndWait { loop.watchedDescriptorCount } == idle)
            client = nil
            #expect(try await seen.wait(for: seen.finished, 1))
            #expect(seen.cancelled.withLock { $0 } == 0)
        }
    }
}

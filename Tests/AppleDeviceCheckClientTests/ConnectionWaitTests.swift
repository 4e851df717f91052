import DeviceCheckModel
import Foundation
import TestSupport
import Testing

/// Over plain http a call needs a connection of its own: beyond `maxConnections` calls wait in the
/// client's queue, and one still waiting at its deadline is `overloaded`, not a timeout of Apple.
@Suite("Waiting for a connection")
struct ConnectionWaitTests {
    @Test func callsWaitingForOneOfTheConnectionsFailAsOverloadedNotTimedOut() async throws {
        try await withSandbox { h in
            let timeout = 400
            let client = try h.client(timeoutMilliseconds: timeout, maxInFlight: 1_024, maxConnections: 2)
            let warmUp = try h.token(h.device())
            _ = try? await client.validate(warmUp)
            h.sandbox.setLatency(milliseconds: 300)
            var tokens: [DeviceToken] = []
            for _ in 0..<6 { tokens.append(try h.token(h.device())) }
            let failures = await withTaskGroup(of: DeviceCheckError?.self) { group in
                for token in tokens {
                    group.addTask {
                        do throws(DeviceCheckError) { try await client.validate(token); return nil } catch { return error }
                    }
                }
                return await group.reduce(into: [DeviceCheckError?]()) { $0.append($1) }
            }
            let failed = failures.compactMap { $0 }
            // Two connections, 300 ms an answer, 400 ms deadline: at most two succeed, the rest waited. The two
            // with a connection may time out too, on a starved scheduler (a parallel `swift test`): Apple's
            // answer then comes too late, which is a timeout; a call that never had a connection never is.
            let overloaded = failed.filter { $0 == .unavailable(.overloaded) }.count
            let timedOut = failed.filter { $0 == .unavailable(.timedOut) }.count
            #expect(overloaded >= 4, "\(failures)")
            #expect(overloaded + timedOut == failed.count && timedOut <= 2, "\(failures)")
        }
    }
}

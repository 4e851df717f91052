import DeviceCheck
import Foundation
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
            // Two connections, 300 ms an answer, 400 ms deadline: at most two succeed, the rest waited.
            #expect(failed.count >= 4, "\(failures)")
            #expect(failed.allSatisfy { $0 == .unavailable(.overloaded) }, "\(failures)")
        }
    }
}

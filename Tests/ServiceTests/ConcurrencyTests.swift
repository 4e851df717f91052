import Foundation
import OutboundHTTP
import Locking
import TestSupport
import Testing

/// Requests that await Apple hold no thread: 1,000 at once need no more threads than one.
@Suite struct ConcurrencyTests {
    @Test func thousandConcurrentValidationsOnAFixedNumberOfThreads() async throws {
        // Apple's timeout well above the 100 ms the sandbox takes: under the sanitizers (5-10 times slower)
        // on 2 busy cores, 1,000 calls queue for seconds; what this test checks is threads, not speed.
        try await withService(.init(apple: ["timeout_ms": "6000"], sandboxLatencyMilliseconds: 100)) { h async throws in
            let device = h.freshDevice()
            let body = #"{"device_token":"\#(device.token)"}"#
            // Warm up: every component has started its threads.
            #expect(try await h.post("/v1/devices/validate", body).status == 200)
            // The thread count is the whole process's. In a parallel `swift test` other suites start and stop their own
            // servers meanwhile, so a wave that grew by more than a handful is measured again (up to three times):
            // threads that grew with concurrency (hundreds, here) would show in every wave.
            var grew = Int.max
            for wave in 1...3 where grew > 6 {
                let idleThreads = currentThreadCount()
                let peak = Lock(0)
                let sampling = Lock(true)
                let sampler = Thread {
                    while sampling.withLock({ $0 }) {
                        let n = currentThreadCount()
                        peak.withLock { $0 = max($0, n) }
                        usleep(5_000)
                    }
                }
                sampler.start()
                let started = ContinuousClock.now
                let statuses = await withTaskGroup(of: Int.self) { group in
                    for _ in 0..<1_000 {
                        group.addTask { (try? await h.post("/v1/devices/validate", body))?.status ?? -1 }
                    }
                    return await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
                }
                let elapsed = ContinuousClock.now - started
                sampling.withLock { $0 = false }
                let peakThreads = peak.withLock { $0 }
                let calls = h.sandbox.counters.calls["query_two_bits"] ?? 0
                print("concurrency, wave \(wave): 1000 validations, sandbox 100 ms: statuses \(statuses), elapsed \(elapsed), threads idle \(idleThreads) peak \(peakThreads) (sampler +1), sandbox queries \(calls)")
                #expect(statuses == [200: 1_000])
                grew = peakThreads - idleThreads
            }
            // The process (test runner, sandbox, service, client, sampler) gained at most a handful of
            // threads while 1,000 requests were in flight: threads do not grow with concurrency.
            #expect(grew <= 6)
        }
    }

    @Test func shutdownLetsInFlightRequestsFinish() async throws {
        let h = try await ServiceHarness(sandboxLatencyMilliseconds: 300)
        let device = h.freshDevice()
        let body = #"{"device_token":"\#(device.token)"}"#
        let queriesBefore = h.sandbox.counters.calls["query_two_bits"] ?? 0
        async let inFlight = h.post("/v1/devices/validate", body)
        // Shut down once the request is in flight (its Apple call has reached the sandbox, which holds it 300 ms),
        // not after a fixed pause: on a loaded machine the request may not have arrived yet, and a connection
        // with no request in progress is closed by shutdown.
        let deadline = ContinuousClock.now + .seconds(10)
        while (h.sandbox.counters.calls["query_two_bits"] ?? 0) == queriesBefore, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        await h.service.shutdown()
        let answer = try await inFlight
        #expect(answer.status == 200)
        // After shutdown nothing listens.
        await #expect(throws: OutboundError.self) { _ = try await h.request("GET", "/healthz", key: nil) }
        await h.sandbox.shutdown()
        h.client.shutdown()
    }
}

import Foundation
import Locking
@testable import SQLiteLedger
import Testing

/// The ledger thread on its own: while the job it runs has taken longer than the stall limit (a frozen disk),
/// a new job is refused at once and never runs, whatever path submits it (a read, or a write outside the group
/// commit, which checks the stall itself first); once the held job returns, jobs are taken again.
@Suite struct LedgerThreadTests {
    @Test func aJobSubmittedWhileTheRunningOneIsStalledIsRefusedAndNeverRuns() async throws {
        let thread = LedgerThread(name: "ledger-thread-test", stallLimit: .milliseconds(200))
        defer { thread.stop() }
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let ran = Lock(0)
        #expect(thread.submit { started.signal(); release.wait() } == nil)
        #expect(started.wait(timeout: .now() + 5) == .success)
        try await Task.sleep(for: .milliseconds(400))
        #expect(thread.submit { ran.withLock { $0 += 1 } } != nil, "queued behind a job the stalled disk holds")
        release.signal()

        let done = DispatchSemaphore(value: 0)
        var accepted = false
        for _ in 0..<500 where !accepted {
            accepted = thread.submit { done.signal() } == nil
            if !accepted { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(accepted, "jobs are taken again once the held one returned")
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(ran.withLock { $0 } == 0, "the refused job never ran")
    }
}

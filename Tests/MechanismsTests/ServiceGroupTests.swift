import Locking
import Mechanisms
import Testing

/// The service group alone: start order, one graceful shutdown in reverse order, a failing service, cancellation.
@Suite struct ServiceGroupTests {
    struct Broken: Error, CustomStringConvertible { var description: String { "broken" } }

    /// Records the group's events and what the services themselves did, in one order.
    final class Journal: Sendable {
        private let lines = Lock<[String]>([])
        func note(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
        func event(_ event: ServiceGroup.Event) {
            switch event {
            case .started(let name): note("started \(name)")
            case .failed(let name, let error): note("failed \(name): \(error)")
            case .stopped(let name): note("stopped \(name)")
            case .finished(let name): note("finished \(name)")
            }
        }
    }

    /// A service that runs until cancelled, noting when it begins and ends, and finishing with a note.
    static func looping(_ name: String, _ journal: Journal) -> BackgroundService {
        BackgroundService(name: name, run: {
            journal.note("run \(name)")
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3_600)) }
            journal.note("cancelled \(name)")
        }, finish: { journal.note("finish \(name)") })
    }

    @Test func servicesStartInOrderAndStopInReverseEachFinishedBeforeTheNextStops() async {
        let journal = Journal()
        let group = ServiceGroup(["a", "b", "c"].map { Self.looping($0, journal) }, onEvent: journal.event)
        await group.start()
        let started = journal.all.filter { $0.hasPrefix("started") }
        #expect(started == ["started a", "started b", "started c"])
        await group.shutdown()
        let stopping = journal.all.filter { !$0.hasPrefix("started") && !$0.hasPrefix("run") }
        #expect(stopping == ["cancelled c", "stopped c", "finish c", "finished c",
                             "cancelled b", "stopped b", "finish b", "finished b",
                             "cancelled a", "stopped a", "finish a", "finished a"])
        #expect(Set(journal.all.filter { $0.hasPrefix("run") }) == ["run a", "run b", "run c"], "each ran")
    }

    @Test func aFailingServiceIsReportedAndTheOthersRunOnAndStillStop() async {
        let journal = Journal()
        let broken = BackgroundService(name: "broken", run: { throw Broken() }, finish: { journal.note("finish broken") })
        let group = ServiceGroup([Self.looping("a", journal), broken, Self.looping("c", journal)], onEvent: journal.event)
        await group.start()
        for _ in 0..<1_000 where !journal.all.contains("failed broken: broken") { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(journal.all.contains("failed broken: broken"))
        #expect(!journal.all.contains { $0.hasPrefix("cancelled") }, "the others run on")
        await group.shutdown()
        let stopping = journal.all.filter { $0.hasPrefix("stopped") || $0.hasPrefix("finish ") }
        #expect(stopping == ["stopped c", "finish c", "stopped broken", "finish broken", "stopped a", "finish a"],
                "the failed one is finished in its turn")
    }

    @Test func cancellationWakesASleepingServiceAndASlowStopHoldsBackTheNext() async {
        let journal = Journal()
        // b takes a while to stop after its cancellation (a last write): a is stopped only after it.
        let slow = BackgroundService(name: "b", run: {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3_600)) }
            let until = ContinuousClock.now + .milliseconds(50)
            while ContinuousClock.now < until { await Task.yield() }
            journal.note("b done")
        })
        let group = ServiceGroup([Self.looping("a", journal), slow], onEvent: journal.event)
        await group.start()
        let began = ContinuousClock.now
        await group.shutdown()
        let took = ContinuousClock.now - began
        #expect(took < .seconds(10), "an hour's sleep is cut short by the cancellation (\(took))")
        #expect(took >= .milliseconds(50), "b's stop was awaited")
        let order = journal.all.filter { $0 == "b done" || $0 == "cancelled a" }
        #expect(order == ["b done", "cancelled a"])
    }

    @Test func aPeriodicServiceStopsBetweenTicksAndDoesNotTickAfterCancellation() async {
        let ticks = Lock(0)
        let group = ServiceGroup([.periodic(name: "tick", every: .milliseconds(5), { ticks.withLock { $0 += 1 } })])
        await group.start()
        for _ in 0..<2_000 where ticks.withLock({ $0 }) < 3 { try? await Task.sleep(for: .milliseconds(1)) }
        await group.shutdown()
        let after = ticks.withLock { $0 }
        #expect(after >= 3)
        try? await Task.sleep(for: .milliseconds(30))
        #expect(ticks.withLock { $0 } == after, "no tick once stopped")
    }

    @Test func aGroupLetGoWithoutAShutdownCancelsItsServices() async {
        let journal = Journal()
        var group: ServiceGroup? = ServiceGroup([Self.looping("a", journal)])
        await group?.start()
        group = nil
        for _ in 0..<2_000 where !journal.all.contains("cancelled a") { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(journal.all.contains("cancelled a"), "its loops do not outlive their owner")
        #expect(!journal.all.contains("finish a"), "no graceful finish without a shutdown")
        _ = group
    }

    @Test func aShutdownBeforeStartOnlyFinishesAndBothAreOnceOnly() async {
        let journal = Journal()
        let group = ServiceGroup([Self.looping("a", journal), Self.looping("b", journal)], onEvent: journal.event)
        await group.shutdown()
        #expect(journal.all == ["finish b", "finished b", "finish a", "finished a"])
        await group.start()
        await group.shutdown()
        #expect(journal.all.count == 4, "nothing starts after a shutdown, and a second shutdown does nothing")
    }
}

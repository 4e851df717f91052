import DeviceCheckModel
@testable import Policy
import Testing

/// The reinstall counter's next value, and the ban it reaches.
@Suite struct InstallRulesTests {
    func decision(_ rules: BitRules, _ result: QueryResult) throws -> InstallDecision {
        BitRules.install(on: rules.meaning(of: result, in: now), banAt: try rules.reinstallCounterBanAt())
    }

    func counted(_ count: Int, at offset: Int = 0) -> QueryResult { .state(BitState(bits: Bits(counter: count), lastUpdated: month(offset))) }

    @Test func aNeverSetDeviceStartsAtZeroAndEachRegistrationAddsOne() throws {
        let rules = counter(banAt: 3)
        #expect(try decision(rules, .neverSet) == InstallDecision(reinstalls: 0, banned: false, result: .ok, reason: nil))
        #expect(try decision(rules, counted(0)).reinstalls == 1)
        #expect(try decision(rules, counted(1)).reinstalls == 2)
        #expect(try decision(rules, counted(0)).bits == Bits(counter: 1))
    }

    @Test func theRegistrationThatReachesBanAtBans() throws {
        let rules = counter(banAt: 2)
        let reached = try decision(rules, counted(1))
        #expect(reached.banned)
        #expect(reached.result == .banned)
        #expect(reached.reason == "automatic ban: 2 reinstalls reached ban_at 2")
        #expect(try decision(rules, counted(0)).banned == false)
    }

    @Test func theCountNeverPassesThree() {
        #expect(BitRules.install(on: counter(banAt: 3).meaning(of: counted(3), in: now), banAt: 3).reinstalls == 3)
    }

    @Test func aStaleCounterRestartsAtZero() throws {
        let rules = counter(banAt: 3, stale: 2)
        #expect(try decision(rules, counted(2, at: -3)).reinstalls == 0)
        #expect(try decision(rules, counted(2, at: -2)).reinstalls == 3)
    }

    @Test func onlyTheCounterLayoutRegistersInstalls() {
        #expect(refusal { try roles().reinstallCounterBanAt() }?.hasPrefix("notEnabled") == true)
        #expect(refusal { try counter(banAt: 2).reinstallCounterBanAt() } == nil)
    }
}

import DeviceDomain
import Testing

/// The texts the ledger and the configuration store the domain's values as: a change here changes stored rows.
@Suite struct DomainTextTests {
    @Test func aStateReadsAsItsBitsAtItsMonth() {
        let state = BitState(bits: Bits(bit0: true, bit1: false), lastUpdated: YearMonth(year: 2026, month: 11)!)
        #expect(state.description == "(1,0)@2026-11")
        #expect(state.bit0 && !state.bit1)
    }

    @Test func environmentsAreNamedAsTheConfigurationAndTheLedgerNameThem() {
        #expect(AppleEnvironment.allCases.map(\.rawValue) == ["production", "development"])
        #expect(AppleEnvironment(rawValue: "sandbox") == nil && AppleEnvironment(rawValue: "Production") == nil)
    }
}

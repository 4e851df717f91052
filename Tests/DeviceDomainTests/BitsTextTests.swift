import DeviceDomain
import Testing

/// `Bits` as the text a write intent stores, "(b0,b1)": read back exactly, anything else refused.
@Suite struct BitsTextTests {
    @Test func everyBitsValueReadsBackFromItsDescription() {
        let all = (0...3).map { Bits(counter: $0) }
        #expect(all.map(\.description) == ["(0,0)", "(1,0)", "(0,1)", "(1,1)"])
        for bits in all { #expect(Bits(bits.description) == bits) }
    }

    @Test func refusesAnyOtherText() {
        for bad in ["", "(1,0", "1,0)", "(1, 0)", "(2,0)", "(1;0)", "[1,0]", "(1,0)@2026-11", " (1,0)", "(١,0)"] {
            #expect(Bits(bad) == nil, "\(bad)")
        }
    }
}

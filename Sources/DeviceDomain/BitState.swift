/// A device's stored state: the bits and the month of the last update.
public struct BitState: Sendable, Hashable, CustomStringConvertible {
    public var bits: Bits
    public var lastUpdated: YearMonth

    public init(bits: Bits, lastUpdated: YearMonth) {
        self.bits = bits
        self.lastUpdated = lastUpdated
    }

    public var bit0: Bool { bits.bit0 }
    public var bit1: Bool { bits.bit1 }

    public var description: String { "\(bits)@\(lastUpdated)" }
}

/// The two bits Apple keeps for one device and one developer team.
public struct Bits: Sendable, Hashable, Codable, CustomStringConvertible {
    public var bit0: Bool
    public var bit1: Bool

    public init(bit0: Bool, bit1: Bool) {
        self.bit0 = bit0
        self.bit1 = bit1
    }

    public static let clear = Bits(bit0: false, bit1: false)

    /// Read or write one bit by index (0 or 1).
    public subscript(index: Int) -> Bool {
        get { index == 0 ? bit0 : bit1 }
        set { if index == 0 { bit0 = newValue } else { bit1 = newValue } }
    }

    /// The bits as a 2-bit counter: bit1 high, bit0 low.
    public var counter: Int { (bit1 ? 2 : 0) + (bit0 ? 1 : 0) }

    public init(counter: Int) {
        let value = min(max(counter, 0), 3)
        self.init(bit0: value & 1 == 1, bit1: value & 2 == 2)
    }

    public var description: String { "(\(bit0 ? 1 : 0),\(bit1 ? 1 : 0))" }

    /// Parses exactly the description, "(b0,b1)" with each bit 0 or 1 (as a write intent stores its bits).
    public init?(_ text: String) {
        let characters = Array(text.utf8)
        guard characters.count == 5, characters[0] == UInt8(ascii: "("), characters[2] == UInt8(ascii: ","),
              characters[4] == UInt8(ascii: ")") else { return nil }
        func bit(_ c: UInt8) -> Bool? { c == UInt8(ascii: "0") ? false : c == UInt8(ascii: "1") ? true : nil }
        guard let bit0 = bit(characters[1]), let bit1 = bit(characters[3]) else { return nil }
        self.init(bit0: bit0, bit1: bit1)
    }
}

import AppAttestFixtures
import AppAttestFormats
import Foundation
import SeededRandom
import Testing

@Suite struct CBORDecoderTests {
    func decode(_ bytes: [UInt8], limits: CBORLimits = .appAttest) throws(CBORError) -> CBORValue {
        try CBORDecoder(limits: limits).decode(Data(bytes))
    }

    func kind(_ bytes: [UInt8], limits: CBORLimits = .appAttest) -> CBORError.Kind? {
        do { _ = try decode(bytes, limits: limits); return nil } catch { return error.kind }
    }

    @Test func theSubsetDecodes() throws {
        #expect(try decode([0x00]) == .unsigned(0))
        #expect(try decode([0x17]) == .unsigned(23))
        #expect(try decode([0x18, 0x18]) == .unsigned(24))
        #expect(try decode([0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .unsigned(.max))
        #expect(try decode([0x20]).intValue == -1)
        #expect(try decode([0x26]).intValue == -7)
        #expect(try decode([0x3B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .negative(.max))
        #expect(try decode([0x3B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).intValue == nil)
        #expect(try decode([0x43, 1, 2, 3]) == .bytes(Data([1, 2, 3])))
        #expect(try decode([0x63, 0x66, 0x6D, 0x74]) == .text("fmt"))
        #expect(try decode([0x82, 0x01, 0x40]) == .array([.unsigned(1), .bytes(Data())]))
        #expect(try decode([0xF4]) == .bool(false))
        #expect(try decode([0xF5]) == .bool(true))
        #expect(try decode([0xF6]) == .null)
        let map = try decode([0xA2, 0x01, 0x02, 0x61, 0x61, 0x80])
        #expect(map[int: 1] == .unsigned(2))
        #expect(map["a"] == .array([]))
        #expect(map["b"] == nil)
    }

    @Test func lengthsBeyondTheInputAreTruncatedBeforeAnyAllocation() {
        #expect(kind([]) == .truncated)
        #expect(kind([0x18]) == .truncated)
        #expect(kind([0x19, 0x01]) == .truncated)
        #expect(kind([0x43, 1, 2]) == .truncated)
        #expect(kind([0x82, 0x01]) == .truncated)
        #expect(kind([0xA1, 0x01]) == .truncated)
        // Declared counts far beyond the input: refused from the count alone (the limit first, then the input).
        #expect(kind([0x5A, 0x00, 0x00, 0xFF, 0xFF]) == .truncated)
        #expect(kind([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .tooLarge)
        #expect(kind([0x9B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .tooLarge)
        #expect(kind([0xBB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .tooLarge)
        #expect(kind([0x98, 0xFF] + [UInt8](repeating: 0, count: 100)) == .truncated)
        #expect(kind([0xB8, 0x80] + [UInt8](repeating: 0, count: 200)) == .truncated)
    }

    @Test func configuredLimitsHold() {
        let small = CBORLimits(maxDepth: 2, maxContainerCount: 3, maxStringLength: 4)
        #expect(kind([0x81, 0x81, 0x00], limits: small) == nil)
        #expect(kind([0x81, 0x81, 0x81, 0x00], limits: small) == .tooDeep)
        #expect(kind([0x83, 0, 0, 0], limits: small) == nil)
        #expect(kind([0x84, 0, 0, 0, 0], limits: small) == .tooLarge)
        #expect(kind([0x44, 1, 2, 3, 4], limits: small) == nil)
        #expect(kind([0x45, 1, 2, 3, 4, 5], limits: small) == .tooLarge)
        #expect(kind([0x65, 0x61, 0x61, 0x61, 0x61, 0x61], limits: small) == .tooLarge)
        // The default depth: a thousand nested arrays never reach the stack.
        #expect(kind([UInt8](repeating: 0x81, count: 1000) + [0x00]) == .tooDeep)
        #expect(kind([UInt8](repeating: 0xA1, count: 1000)) == .tooDeep)
    }

    @Test func indefiniteLengthsAndReservedEncodingsAreRefused() {
        #expect(kind([0x5F, 0x41, 0x00, 0xFF]) == .indefiniteLength)
        #expect(kind([0x7F, 0xFF]) == .indefiniteLength)
        #expect(kind([0x9F, 0xFF]) == .indefiniteLength)
        #expect(kind([0xBF, 0xFF]) == .indefiniteLength)
        #expect(kind([0xFF]) == .indefiniteLength)
        #expect(kind([0x1C]) == .reservedEncoding)
        #expect(kind([0x3E]) == .reservedEncoding)
    }

    @Test func whatAppAttestNeverSendsIsRefused() {
        #expect(kind([0xC0, 0x00]) == .unsupportedType, "tags")
        #expect(kind([0xF9, 0x3C, 0x00]) == .unsupportedType, "half float")
        #expect(kind([0xFB, 0, 0, 0, 0, 0, 0, 0, 0]) == .unsupportedType, "double")
        #expect(kind([0xF7]) == .unsupportedType, "undefined")
        #expect(kind([0xE0]) == .unsupportedType, "simple value")
        #expect(kind([0x62, 0xC3, 0x28]) == .invalidUTF8)
        #expect(kind([0xA2, 0x01, 0x00, 0x01, 0x00]) == .duplicateKey)
        #expect(kind([0x00, 0x00]) == .trailingBytes)
    }

    @Test func aPrefixLeavesWhatFollows() throws {
        let (value, end) = try CBORDecoder().decodePrefix(Data([0xFF, 0x82, 0x01, 0x02, 0xAA]), from: 1)
        #expect(value == .array([.unsigned(1), .unsigned(2)]))
        #expect(end == 4)
        #expect(throws: CBORError.self) { try CBORDecoder().decodePrefix(Data([0x00]), from: 5) }
    }

    /// Random bytes, and real attestation objects and assertions mutated: always a value or a CBORError.
    @Test func randomAndMutatedInputNeverCrash() {
        var random = SeededRandom(seed: 0xA77E57)
        var decoded = 0
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if (try? decode(bytes)) != nil { decoded += 1 }
        }
        let corpus = AppAttestFixture.names.map(AppAttestFixture.load).flatMap { [$0.attestation].compactMap { $0 } + $0.assertions.map(\.assertion) }
        for _ in 0..<3_000 {
            var bytes = [UInt8](random.pick(corpus))
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let i = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[i] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...16, using: &random)))
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: i)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            if (try? decode(bytes)) != nil { decoded += 1 }
        }
        #expect(decoded > 0, "some inputs decode, so the loop exercised more than the first byte")
    }
}

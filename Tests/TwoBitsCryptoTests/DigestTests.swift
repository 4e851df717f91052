import Foundation
import Testing
import TwoBitsCrypto

@Suite struct ConstantTimeTests {
    @Test func equalBytesAreEqual() {
        let a = SecureRandom.bytes(32)
        #expect(ConstantTime.equal(a, Data(a)))
        #expect(ConstantTime.equal(Data(), Data()))
    }

    @Test func anyDifferenceIsUnequal() {
        let a = SecureRandom.bytes(32)
        for index in [0, 15, 31] {
            var b = a
            b[index] ^= 0x01
            #expect(!ConstantTime.equal(a, b), "differs at \(index)")
        }
        #expect(!ConstantTime.equal(a, a.prefix(31)))
        #expect(!ConstantTime.equal(a, a + Data([0])))
        #expect(!ConstantTime.equal(Data(), Data([0])))
        #expect(!ConstantTime.equal(Data([0]), Data()))
    }

    @Test func worksOnSlicesWithNonZeroStartIndex() {
        let base = Data([9, 9, 1, 2, 3])
        let slice = base[2...]
        #expect(ConstantTime.equal(slice, Data([1, 2, 3])))
        #expect(!ConstantTime.equal(slice, Data([1, 2, 4])))
    }
}

@Suite struct SecureRandomTests {
    @Test func uuidIsLowercaseVersion4() throws {
        let pattern = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
        var seen = Set<String>()
        for _ in 0..<2_000 {
            let uuid = SecureRandom.uuid()
            #expect(uuid.count == 36)
            #expect(uuid.wholeMatch(of: pattern) != nil, "\(uuid)")
            #expect(UUID(uuidString: uuid) != nil)
            seen.insert(uuid)
        }
        #expect(seen.count == 2_000)
    }

    @Test func uuidV7CarriesItsMillisecondsFirstAndSortsByThem() throws {
        let pattern = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
        let ms: UInt64 = 1_764_072_000_123   // 2025-11-25T12:00:00.123Z
        let uuid = SecureRandom.uuidV7(milliseconds: ms)
        #expect(uuid.wholeMatch(of: pattern) != nil, "\(uuid)")
        #expect(UUID(uuidString: uuid) != nil)
        let hex = uuid.replacingOccurrences(of: "-", with: "")
        #expect(UInt64(hex.prefix(12), radix: 16) == ms)
        let later = (0..<100).map { SecureRandom.uuidV7(milliseconds: ms + 1 + UInt64($0)) }
        #expect(later.allSatisfy { $0 > uuid } && later == later.sorted())
        #expect(Set((0..<1_000).map { _ in SecureRandom.uuidV7(milliseconds: ms) }).count == 1_000)
    }

    @Test func bytesHaveTheRequestedLengthAndDiffer() {
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(48).count == 48)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }
}

@Suite struct SHA256Tests {
    @Test func knownVectors() {
        #expect(SHA256Digest.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.hash(Data("abc".utf8)).count == 32)
    }
}

import Foundation
import Testing
import TwoBitsCrypto
import WireFormats

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

    /// Identifiers (16 bytes at most) come from a per-thread pool of 512 bytes: across dozens of refills,
    /// and with sizes that straddle a refill, no value comes back twice and none is the wiped (zero) part
    /// of the pool.
    @Test func smallRequestsNeverRepeatAcrossPoolRefills() {
        var seen = Set<Data>()
        for i in 0..<3_000 {
            let bytes = SecureRandom.bytes(9 + i % 8)
            #expect(bytes.count == 9 + i % 8)
            #expect(bytes.contains { $0 != 0 })
            seen.insert(bytes)
        }
        #expect(seen.count == 3_000)
        #expect(Set((0..<1_000).map { _ in SecureRandom.base64URL(bytes: 16) }).count == 1_000)
    }

    @Test func threadsDrawDifferentBytes() async {
        let drawn = await withTaskGroup(of: [Data].self) { group in
            for _ in 0..<8 { group.addTask { (0..<300).map { _ in SecureRandom.bytes(16) } } }
            return await group.reduce(into: [Data]()) { $0 += $1 }
        }
        #expect(drawn.count == 2_400)
        #expect(Set(drawn).count == 2_400)
    }

    #if !TSAN_PROBE // ThreadSanitizer does not support fork in a multithreaded process
    /// A forked child must not hand out the bytes left in its parent's pool: both would use them.
    @Test func aForkedChildDoesNotRepeatItsParentsBytes() throws {
        _ = SecureRandom.uuid()  // this thread's pool now holds unused bytes
        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        let child = fork()
        if child == 0 {
            let uuid = Array(SecureRandom.uuid().utf8)
            _ = write(pipeEnds[1], uuid, uuid.count)
            _exit(0)
        }
        try #require(child > 0)
        close(pipeEnds[1])
        let parentUUID = SecureRandom.uuid()
        var buffer = [UInt8](repeating: 0, count: 64)
        var descriptor = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 20_000)
        let count = ready == 1 ? read(pipeEnds[0], &buffer, buffer.count) : -1
        close(pipeEnds[0])
        var status: Int32 = 0
        if ready != 1 { kill(child, SIGKILL) }
        waitpid(child, &status, 0)
        try #require(count == 36, "the child did not answer")
        let childUUID = String(decoding: buffer.prefix(36), as: UTF8.self)
        #expect(childUUID != parentUUID)
    }
    #endif
}

@Suite struct SHA256Tests {
    @Test func knownVectors() {
        #expect(SHA256Digest.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.hash(Data("abc".utf8)).count == 32)
    }
}

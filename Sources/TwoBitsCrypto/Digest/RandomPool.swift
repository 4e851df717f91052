import COpenSSL
import Glibc
import Synchronization

/// Bumped in a forked child, so no pool the parent filled is handed out twice.
private let forkGeneration = Atomic<Int>(0)

/// OpenSSL's DRBG output, fetched `capacity` bytes at a time per thread and handed out in slices.
///
/// Every `RAND_bytes` call costs about a microsecond whatever its size (a lock, a `getpid` fork check, and
/// the CTR-DRBG re-keying its AES after each call), and a request made four or five small ones: its
/// request id, the token id, the Apple transaction id, a subject. One call per 512 bytes does the same work
/// for about a tenth of the cost. The bytes are the DRBG's own output, unchanged; a slice is wiped as it is
/// handed out, so the pool never holds bytes that were used. Bytes not yet handed out reveal no more than
/// the DRBG state beside them in the same memory.
final class RandomPool {
    static let capacity = 512
    /// Identifiers (request ids, token ids, UUIDs: 16 bytes at most) come from the pool; anything larger
    /// (API keys, debug secrets, App Attest challenges: 32 bytes) is drawn from OpenSSL directly.
    static let largestPooled = 16

    private let storage: UnsafeMutableRawPointer
    private var next = RandomPool.capacity
    private var generation = forkGeneration.load(ordering: .relaxed)

    private init() {
        storage = UnsafeMutableRawPointer.allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit {
        OPENSSL_cleanse(storage, Self.capacity)
        storage.deallocate()
    }

    /// Fills `out` with random bytes: from this thread's pool when small, from OpenSSL directly otherwise.
    static func fill(_ out: UnsafeMutableRawBufferPointer) {
        guard let base = out.baseAddress, out.count > 0 else { return }
        guard out.count <= largestPooled else {
            precondition(RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(out.count)) == 1, "RAND_bytes failed")
            return
        }
        current.take(into: base, count: out.count)
    }

    private func take(into out: UnsafeMutableRawPointer, count: Int) {
        let now = forkGeneration.load(ordering: .relaxed)
        if now != generation {
            generation = now
            next = Self.capacity  // a forked child refills instead of repeating its parent's bytes
        }
        if next + count > Self.capacity {
            precondition(RAND_bytes(storage.assumingMemoryBound(to: UInt8.self), Int32(Self.capacity)) == 1, "RAND_bytes failed")
            next = 0
        }
        let slice = storage + next
        out.copyMemory(from: slice, byteCount: count)
        OPENSSL_cleanse(slice, count)
        next += count
    }

    /// The calling thread's pool, made on first use and freed (wiped) when the thread ends.
    private static var current: RandomPool {
        if let raw = pthread_getspecific(key) { return Unmanaged<RandomPool>.fromOpaque(raw).takeUnretainedValue() }
        let pool = RandomPool()
        pthread_setspecific(key, Unmanaged.passRetained(pool).toOpaque())
        return pool
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, { raw in
            if let raw { Unmanaged<RandomPool>.fromOpaque(raw).release() }
        }) == 0, "pthread_key_create failed")
        pthread_atfork(nil, nil, { forkGeneration.add(1, ordering: .relaxed) })
        return key
    }()
}

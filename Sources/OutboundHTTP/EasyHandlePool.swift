import CCurl
import Locking

/// Finished easy handles, reset and kept for the next transfer instead of freed.
///
/// `curl_easy_init` allocates and zeroes curl's per-transfer state and its buffers (4 KiB down, 16 KiB up
/// here) for every Apple call; a reset handle keeps them (`curl_easy_reset` clears every option, so no
/// header, body or callback of one call reaches the next). Bounded: past `capacity` idle handles, a
/// finished one is freed as before.
// Unchecked: the raw handles are only moved in and out of `idle` under its lock, and an idle handle belongs to no one.
final class EasyHandlePool: @unchecked Sendable {
    /// One pool for the process: transfers are made on any loop (or off the loops) and finish on theirs.
    static let shared = EasyHandlePool(capacity: 1_024)

    private let idle = Lock<[UnsafeMutableRawPointer]>([])
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// An idle handle, or a new one; nil when curl cannot allocate one.
    func take() -> UnsafeMutableRawPointer? {
        if let handle = idle.withLock({ $0.popLast() }) { return handle }
        return curl_easy_init()
    }

    /// Takes back a handle curl is done with (out of its multi).
    func give(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = idle.withLock { handles -> Bool in
            guard handles.count < capacity else { return false }
            handles.append(handle)
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }

    /// Idle handles now (for tests).
    var idleCount: Int { idle.withLock { $0.count } }
}

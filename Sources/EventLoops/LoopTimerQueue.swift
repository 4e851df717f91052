import CEventLoop

/// An event loop's timers: a binary min-heap of deadlines. Cancelling removes the callback at once and
/// leaves the heap entry, which is dropped when its deadline comes (every timer here is short-lived:
/// request deadlines, curl's and libmicrohttpd's timeouts).
struct LoopTimerQueue {
    private struct Entry {
        let deadline: UInt64
        let id: UInt64
    }

    private var heap: [Entry] = []
    private var callbacks: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 0

    mutating func add(at deadline: UInt64, _ body: @escaping () -> Void) -> LoopTimer {
        nextID &+= 1
        callbacks[nextID] = body
        heap.append(Entry(deadline: deadline, id: nextID))
        siftUp(heap.count - 1)
        return LoopTimer(id: nextID)
    }

    mutating func cancel(_ timer: LoopTimer) {
        callbacks.removeValue(forKey: timer.id)
    }

    /// How long epoll may sleep: until the earliest deadline, at most a second, -1 never (no timers).
    mutating func waitMilliseconds(now: UInt64) -> Int32 {
        while let first = heap.first, callbacks[first.id] == nil { popFirst() }
        guard let first = heap.first else { return 1_000 }
        if first.deadline <= now { return 0 }
        // Round up, so the loop never wakes just before the deadline and spins.
        return Int32(min(1_000, (first.deadline - now + 999_999) / 1_000_000))
    }

    /// The earliest timer whose deadline has passed, taken out of the queue; nil when none is due.
    mutating func popExpired(now: UInt64) -> (() -> Void)? {
        while let first = heap.first, first.deadline <= now {
            popFirst()
            if let body = callbacks.removeValue(forKey: first.id) { return body }
        }
        return nil
    }

    private mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

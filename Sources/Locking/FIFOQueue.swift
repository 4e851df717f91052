/// A first-in first-out queue over an array with a moving head: appending and taking the first element
/// are O(1) amortised, and the taken prefix is dropped once it is most of the storage. The waiters of a
/// limiter and the jobs of a connection pool keep their queue in one of these, guarded by their `Lock`.
public struct FIFOQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    public init() {}

    /// True when no element waits.
    public var isEmpty: Bool { head == storage.count }

    /// How many elements wait.
    public var count: Int { storage.count - head }

    /// The element that has waited longest, left in place.
    public var first: Element? { head < storage.count ? storage[head] : nil }

    /// Adds `element` at the back.
    public mutating func append(_ element: Element) { storage.append(element) }

    /// Takes the element that has waited longest.
    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head > 64, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Takes the longest-waiting element that matches, wherever it waits (a waiter that gave up).
    public mutating func remove(firstWhere matches: (Element) -> Bool) -> Element? {
        guard let index = storage[head...].firstIndex(where: matches) else { return nil }
        return storage.remove(at: index)
    }
}

// Sendable exactly when its elements are: a queue is moved between threads only inside a `Lock`.
extension FIFOQueue: Sendable where Element: Sendable {}

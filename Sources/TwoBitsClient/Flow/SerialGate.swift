/// Runs one operation at a time, in arrival order, across suspension points. An actor alone does not: its
/// methods interleave at every `await`, and two assertions in flight may reach TwoBits out of counter order
/// (the later-counted one wins, the other is refused `counter_not_increasing`).
actor SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable, E: Error>(_ operation: @Sendable () async throws(E) -> T) async throws(E) -> T {
        await enter()
        defer { leave() }
        return try await operation()
    }

    private func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            // The gate passes straight to the next in line: busy stays true.
            waiting.removeFirst().resume()
        }
    }
}

import DeviceDomain
import Foundation
import Ledger
import SQLiteLedger

// LedgerBench: per-call latency of the SQLite ledger's hot-path writes, to decide whether the event
// loop may call the ledger inline (docs/architecture.md, "Where ledger calls run").
//
// usage: LedgerBench [--ops N] [--checkpoints inline|background|both] [--dir DIR]
//
// For each checkpoint mode, on a fresh file in DIR (default: a temporary directory), runs N of each:
//   remember      rememberDeviceToken (a fresh digest each time: one INSERT)
//   intent        recordWriteIntent + resolveWriteIntent (two transactions, timed together)
//   idempotency   beginIdempotent + completeIdempotent (a transaction and an UPDATE, timed together)
// and prints one JSON object per mode and operation with p50, p99, p99.9 and max in microseconds,
// how many calls took over 1 ms, and the calls per second; `blocked` counts the calls during which the
// thread slept (voluntary context switches: fsync, I/O, a lock), with how many of those took over 1 ms
// and the longest. Calls slow without blocking were preempted (a busy machine), not stalled by SQLite.
//   inline:     SQLite's automatic checkpoint, run by the commit that crosses 1000 WAL pages (fsync included)
//   background: `SQLiteLedger`'s default: checkpoints by a thread with its own connection

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("LedgerBench: \(message)\nusage: LedgerBench [--ops N] [--checkpoints inline|background|both] [--dir DIR]\n".utf8))
    exit(2)
}

var ops = 100_000
var modes = ["inline", "background"]
var directory: String?
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    guard let value = arguments.first else { fail("\(flag) needs a value") }
    arguments.removeFirst()
    switch flag {
    case "--ops":
        guard let n = Int(value), (1_000...10_000_000).contains(n) else { fail("--ops must be 1000-10000000") }
        ops = n
    case "--checkpoints":
        guard ["inline", "background", "both"].contains(value) else { fail("--checkpoints must be inline, background or both") }
        modes = value == "both" ? ["inline", "background"] : [value]
    case "--dir": directory = value
    default: fail("unknown option \(flag)")
    }
}

/// Nanoseconds on the monotonic clock.
@inline(__always) func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// This thread's voluntary context switches so far: it went to sleep waiting (an fsync, a read, a
/// lock). Preemption by other processes on a busy machine counts as involuntary and is left out, so a
/// call that blocked is told apart from one that was merely descheduled.
@inline(__always) func voluntarySwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage) // RUSAGE_THREAD (glibc declares it only under _GNU_SOURCE)
    return usage.ru_nvcsw
}

func report(mode: String, operation: String, _ samples: inout [UInt64], blocked: [UInt64], wallNanoseconds: UInt64) {
    let blockedMax = blocked.max().map { Double($0) / 1000 } ?? 0
    let blockedOverMillisecond = blocked.filter { $0 > 1_000_000 }.count
    samples.sort()
    func percentile(_ p: Double) -> Double {
        Double(samples[min(samples.count - 1, Int((Double(samples.count) * p).rounded(.up)) - 1)]) / 1000
    }
    let overMillisecond = samples.count - (samples.firstIndex { $0 > 1_000_000 } ?? samples.count)
    let fields: [(String, String)] = [
        ("checkpoints", "\"\(mode)\""), ("operation", "\"\(operation)\""), ("ops", "\(samples.count)"),
        ("p50_us", String(format: "%.1f", percentile(0.5))), ("p99_us", String(format: "%.1f", percentile(0.99))),
        ("p999_us", String(format: "%.1f", percentile(0.999))), ("max_us", String(format: "%.1f", Double(samples.last!) / 1000)),
        ("over_1ms", "\(overMillisecond)"), ("blocked", "\(blocked.count)"), ("blocked_over_1ms", "\(blockedOverMillisecond)"),
        ("blocked_max_us", String(format: "%.1f", blockedMax)), ("ops_per_second", String(format: "%.0f", Double(samples.count) / (Double(wallNanoseconds) / 1e9))),
    ]
    print("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
}

func measure(mode: String, operation: String, ops: Int, _ body: (Int) async throws(StorageError) -> Void) async throws(StorageError) {
    var samples = [UInt64](repeating: 0, count: ops)
    var blocked: [UInt64] = []
    let start = nanoseconds()
    for i in 0..<ops {
        let switches = voluntarySwitches()
        let t0 = nanoseconds()
        try await body(i)
        samples[i] = nanoseconds() - t0
        if voluntarySwitches() != switches { blocked.append(samples[i]) }
    }
    report(mode: mode, operation: operation, &samples, blocked: blocked, wallNanoseconds: nanoseconds() - start)
}

let root = directory ?? NSTemporaryDirectory() + "ledgerbench-" + UUID().uuidString
do {
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
} catch { fail("cannot create \(root): \(error)") }
defer { if directory == nil { try? FileManager.default.removeItem(atPath: root) } }

let body = Data(#"{"promotion":"spring","claimed":true,"claimed_month":"2026-11"}"#.utf8)
do throws(StorageError) {
    for mode in modes {
        let path = root + "/\(mode).sqlite"
        let ledger = try SQLiteLedger(path: path, checkpointInterval: mode == "inline" ? nil : .seconds(1))
        let now = Date()
        let until = now.addingTimeInterval(600)
        let run = UUID().uuidString.prefix(8)
        try await measure(mode: mode, operation: "remember", ops: ops) { i throws(StorageError) in
            _ = try await ledger.rememberDeviceToken(digest: "\(run)-digest-\(i)-0123456789abcdef0123456789abcdef", until: until, now: now)
        }
        try await measure(mode: mode, operation: "intent", ops: ops) { i throws(StorageError) in
            let id = "\(run)-intent-\(i)"
            let written = BitState(bits: Bits(bit0: true, bit1: false), lastUpdated: YearMonth(year: 2026, month: 11)!)
            let event = AuditEvent(client: "marketing", action: .promotionClaim, subject: "spring", bitsBefore: .neverSet,
                                   bitsAfter: .state(written), result: .pending, tokenPrefix: "0123456789ab")
            try await ledger.recordWriteIntent(WriteIntent(id: id, tokenPrefix: "0123456789ab", bits: written.bits, month: written.lastUpdated,
                                                     successResult: .ok, event: event))
            try await ledger.resolveWriteIntent(id: id, result: .ok, bitsAfter: .state(written), reason: nil, transactionID: "tx-\(i)")
        }
        try await measure(mode: mode, operation: "idempotency", ops: ops) { i throws(StorageError) in
            let key = "\(run)-key-\(i)"
            _ = try await ledger.beginIdempotent(client: "marketing", key: key, requestHash: "hash-\(i)", owner: "bench", now: now)
            try await ledger.completeIdempotent(client: "marketing", key: key, status: 200, body: body)
        }
    }
} catch { fail("\(error)") }

import DeviceCheckModel
import Foundation
import SeededRandom
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// The real use cases over the bits (over the real sandbox, client and SQLite ledger) against `PolicyModel`, on random
/// sequences of a few hundred operations over a handful of devices, install ids and months, compared after
/// every step: each outcome, every device's bits and month, the pending orders. A failing sequence is
/// shrunk (operations dropped while it still fails) and printed with its seed.
///
/// Moving the clock: the sandbox refuses request timestamps more than an hour from its own clock, and the
/// client stamps requests with the wall clock, so the sandbox cannot be sent months ahead. Everything the
/// policy decides depends only on differences of months, so time moves the other way: when `k` months
/// pass, every device's month stamp and every campaign's months are moved `k` months into the past (the
/// sandbox's devices re-seeded, the policy rebuilt over the same client and ledger). Virtual month `v`
/// is real month `R + (v − V)`, with `R` the frozen month and `V` the virtual month now.
///
/// `TWOBITS_MODEL_RUNS=N` runs seeds 1...N instead of the fixed set; `TWOBITS_MODEL_SEED=S` runs one seed;
/// `TWOBITS_MODEL_STEPS` changes the sequence length (default 300).
@Suite("Bit policy against a model")
struct PolicyModelTests {
    static let fixedSeeds: [UInt64] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]

    static var seeds: [UInt64] {
        let env = ProcessInfo.processInfo.environment
        if let one = env["TWOBITS_MODEL_SEED"].flatMap(UInt64.init) { return [one] }
        if let runs = env["TWOBITS_MODEL_RUNS"].flatMap(UInt64.init), runs > 0 { return Array(1...runs) }
        return fixedSeeds
    }

    static var steps: Int { ProcessInfo.processInfo.environment["TWOBITS_MODEL_STEPS"].flatMap(Int.init) ?? 300 }

    @Test(arguments: seeds) func randomSequencesAgreeWithTheModel(seed: UInt64) async throws {
        let plan = Plan.random(seed: seed, steps: Self.steps)
        guard let mismatch = try await Self.run(plan, summary: true) else { return }
        let shrunk = try await Self.shrink(plan, mismatch)
        Issue.record(Comment(rawValue: """
            policy and model disagree (seed \(seed), \(plan.ops.count) operations, shrunk to \(shrunk.plan.ops.count)):
            \(shrunk.plan.header)
            \(shrunk.mismatch.trace.joined(separator: "\n"))
            first difference at step \(shrunk.mismatch.step): \(shrunk.mismatch.difference)
            replay: TWOBITS_MODEL_SEED=\(seed) swift test --skip-build --filter PolicyModelTests
            """))
    }

    /// The model must be able to fail: a policy built with another stale limit than the model's disagrees.
    @Test func theComparisonNoticesADifferentPolicy() async throws {
        var plan = Plan.random(seed: 3, steps: 150)
        plan.staleAfter = 2
        plan.realStaleAfterDelta = 1
        let mismatch = try await Self.run(plan)
        #expect(mismatch != nil, "a policy whose stale limit differs by one month must disagree with the model somewhere")
        if let mismatch {
            let shrunk = try await Self.shrink(plan, mismatch)
            print("model self-check (expected): \(shrunk.plan.header)\n\(shrunk.mismatch.trace.joined(separator: "\n"))\n\(shrunk.mismatch.difference)")
            #expect(shrunk.plan.ops.count < plan.ops.count)
            #expect(try await Self.run(shrunk.plan) != nil, "the shrunk sequence still fails")
        }
    }

    // MARK: Plans

    enum Op: CustomStringConvertible {
        case claim(device: Int, promotion: String)
        case eligibility(device: Int, promotion: String)
        case ban(device: Int, ban: Bool)
        case order(install: String, ban: Bool)
        case admit(device: Int, install: String?)
        case register(device: Int, install: String?)
        case advance(months: Int)

        var description: String {
            switch self {
            case .claim(let d, let p): return "claim(d\(d), \(p))"
            case .eligibility(let d, let p): return "eligibility(d\(d), \(p))"
            case .ban(let d, let b): return b ? "ban(d\(d))" : "unban(d\(d))"
            case .order(let i, let b): return b ? "orderBan(\(i))" : "orderUnban(\(i))"
            case .admit(let d, let i): return "admit(d\(d), \(i ?? "no install"))"
            case .register(let d, let i): return "register(d\(d), \(i ?? "no install"))"
            case .advance(let k): return "advance(\(k) month\(k == 1 ? "" : "s"))"
            }
        }
    }

    struct Plan {
        let seed: UInt64
        let layout: PolicyModel.Layout
        var staleAfter: Int?
        let campaigns: [PolicyModel.Campaign]
        let devices: Int
        var ops: [Op]
        /// Test-only: the real policy's stale limit differs from the model's by this much (proves a mismatch is seen).
        var realStaleAfterDelta = 0

        var header: String {
            "seed \(seed): layout \(layout), stale_after_months \(staleAfter.map(String.init) ?? "none"), \(devices) devices, campaigns \(campaigns)"
        }

        static func random(seed: UInt64, steps: Int) -> Plan {
            var rng = SeededRandom(seed: seed)
            // Every seed modulo 5 picks a layout, so the fixed seeds cover them all.
            let layout: PolicyModel.Layout
            switch seed % 5 {
            case 0: layout = .roles(bit0: "promotion", bit1: "ban")
            case 1: layout = .roles(bit0: "ban", bit1: "promotion")
            case 2: layout = .roles(bit0: "promotion", bit1: "promotion")
            case 3: layout = .counter(banAt: Int.random(in: 1...3, using: &rng))
            default: layout = .roles(bit0: "promotion", bit1: "unused")
            }
            let staleAfter: Int? = Int.random(in: 0..<3, using: &rng) > 0 ? Int.random(in: 1...6, using: &rng) : nil
            var campaigns: [PolicyModel.Campaign] = []
            let promotionBits: [Int]
            if case .roles(let b0, let b1) = layout { promotionBits = (b0 == "promotion" ? [0] : []) + (b1 == "promotion" ? [1] : []) } else { promotionBits = [] }
            for bit in promotionBits {
                // Back-to-back or gapped campaigns on the bit; the last one open-ended or not.
                var start = Int.random(in: -2...1, using: &rng)
                for n in 0..<Int.random(in: 2...5, using: &rng) {
                    let open = n == 4 || (n >= 2 && Int.random(in: 0..<3, using: &rng) == 0)
                    let end: Int? = open ? nil : start + Int.random(in: 0...6, using: &rng)
                    campaigns.append(.init(id: "p\(bit)-\(n)", starts: start, ends: end, bit: bit))
                    guard let end else { break }
                    start = end + 1 + Int.random(in: 0...2, using: &rng)
                }
            }
            let devices = 4
            let installs = ["inst-0", "inst-1", "inst-2", "inst-3", "inst-4"]
            // An unknown promotion id now and then.
            func promotionID(_ rng: inout SeededRandom) -> String {
                campaigns.isEmpty || Int.random(in: 0..<10, using: &rng) == 0 ? "unknown-promo" : campaigns.randomElement(using: &rng)!.id
            }
            var ops: [Op] = []
            // Weights per layout, so most operations mean something under it (a few still probe notEnabled).
            let counter: Bool
            if case .counter = layout { counter = true } else { counter = false }
            let weights: [(Int, String)] = counter
                ? [(3, "claim"), (2, "eligibility"), (8, "ban"), (12, "order"), (15, "admit"), (54, "register"), (6, "advance")]
                : [(36, "claim"), (10, "eligibility"), (8, "ban"), (10, "order"), (25, "admit"), (3, "register"), (8, "advance")]
            let total = weights.reduce(0) { $0 + $1.0 }
            for _ in 0..<steps {
                let d = Int.random(in: 0..<devices, using: &rng)
                let install: String? = Int.random(in: 0..<5, using: &rng) == 0 ? nil : installs.randomElement(using: &rng)!
                var pick = Int.random(in: 0..<total, using: &rng)
                var kind = ""
                for (weight, name) in weights {
                    if pick < weight { kind = name; break }
                    pick -= weight
                }
                switch kind {
                case "claim": ops.append(.claim(device: d, promotion: promotionID(&rng)))
                case "eligibility": ops.append(.eligibility(device: d, promotion: promotionID(&rng)))
                case "ban": ops.append(.ban(device: d, ban: Bool.random(using: &rng)))
                case "order": ops.append(.order(install: installs.randomElement(using: &rng)!, ban: Bool.random(using: &rng)))
                case "admit": ops.append(.admit(device: d, install: install))
                case "register": ops.append(.register(device: d, install: install))
                default: ops.append(.advance(months: Int.random(in: 1...2, using: &rng)))
                }
            }
            return Plan(seed: seed, layout: layout, staleAfter: staleAfter, campaigns: campaigns, devices: devices, ops: ops)
        }
    }

    struct Mismatch {
        let step: Int
        let difference: String
        /// Every operation up to the failing one, with the model's and the policy's outcomes.
        let trace: [String]
    }

    // MARK: Running a plan

    /// Runs the plan against a fresh sandbox and ledger and the model; the first difference, or nil.
    static func run(_ plan: Plan, summary: Bool = false) async throws -> Mismatch? {
        var result: Mismatch?
        try await withPolicy({ _ in .standard }) { h in
            var runner = try Runner(plan: plan, harness: h)
            result = try await runner.run()
            if summary {
                // What the sequence exercised, so a reader can see the seeds reach the interesting cases.
                let kinds = runner.outcomeKinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                print("policy model: seed \(plan.seed), \(plan.layout), stale \(plan.staleAfter.map(String.init) ?? "none"), months 0...\(runner.model.month): \(kinds)")
            }
        }
        return result
    }

    /// Drops operations (halves, then quarters, … then single ones) while the plan still fails.
    static func shrink(_ plan: Plan, _ mismatch: Mismatch) async throws -> (plan: Plan, mismatch: Mismatch) {
        var best = plan
        best.ops = Array(plan.ops.prefix(mismatch.step + 1))
        var bestMismatch = mismatch
        var chunk = max(1, best.ops.count / 2)
        var runs = 0
        while runs < 400 {
            var start = 0
            var removedAny = false
            while start < best.ops.count, runs < 400 {
                var candidate = best
                candidate.ops.removeSubrange(start..<min(start + chunk, candidate.ops.count))
                runs += 1
                if !candidate.ops.isEmpty, let m = try await run(candidate) {
                    candidate.ops = Array(candidate.ops.prefix(m.step + 1))
                    best = candidate
                    bestMismatch = m
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if chunk > 1 { chunk /= 2 } else if !removedAny { break }
        }
        return (best, bestMismatch)
    }

    struct Runner {
        let plan: Plan
        let h: PolicyHarness
        var model: PolicyModel
        var policy: BitUseCases
        var ids: [String]
        var trace: [String] = []
        /// How many outcomes of each kind (the text before the first parenthesis) the run saw.
        var outcomeKinds: [String: Int] = [:]

        init(plan: Plan, harness: PolicyHarness) throws {
            self.plan = plan
            h = harness
            model = PolicyModel(layout: plan.layout, staleAfter: plan.staleAfter, campaigns: plan.campaigns, deviceCount: plan.devices)
            ids = (0..<plan.devices).map { _ in harness.device() }
            policy = BitUseCases(configuration: .standard, apple: harness.client, ledger: harness.ledger, now: { harness.date })
            policy = makePolicy()
        }

        /// Real month of virtual month `v` now.
        func real(_ v: Int) -> YearMonth { h.month.adding(months: v - model.month) }
        func virtual(_ m: YearMonth) -> Int { model.month + m.months(since: h.month) }

        /// The policy for the current virtual month: campaigns placed at their real months.
        func makePolicy() -> BitUseCases {
            let layout: BitLayout
            switch plan.layout {
            case .counter(let banAt): layout = .reinstallCounter(banAt: banAt)
            case .roles(let b0, let b1): layout = .roles(bit0: BitRole(rawValue: b0)!, bit1: BitRole(rawValue: b1)!)
            }
            let promotions = plan.campaigns.map { Promotion(id: $0.id, starts: real($0.starts), ends: $0.ends.map(real), bit: $0.bit) }
            let configuration = PolicyConfiguration(layout: layout, staleAfterMonths: plan.staleAfter.map { $0 + plan.realStaleAfterDelta },
                                                    promotions: promotions)
            let date = h.date
            return BitUseCases(configuration: configuration, apple: h.client, ledger: h.ledger, now: { date })
        }

        func token(_ d: Int) throws -> DeviceToken { try h.token(ids[d]) }

        mutating func run() async throws -> Mismatch? {
            for (step, op) in plan.ops.enumerated() {
                let expected = apply(op)
                let actual = try await perform(op)
                outcomeKinds[String(actual.prefix { $0 != "(" }) + (actual.hasPrefix("install") && actual.contains("banned: true") ? "(banned)" : ""), default: 0] += 1
                trace.append("  \(step): \(op) -> model \(expected)\(actual == expected ? "" : ", policy \(actual)")")
                if actual != expected {
                    return Mismatch(step: step, difference: "outcome: model \(expected), policy \(actual)", trace: trace)
                }
                if let difference = try await compareState() {
                    trace.append("     state: \(difference)")
                    return Mismatch(step: step, difference: difference, trace: trace)
                }
            }
            return nil
        }

        mutating func apply(_ op: Op) -> String {
            switch op {
            case .claim(let d, let p): return model.claim(d, p)
            case .eligibility(let d, let p): return model.eligibility(d, p)
            case .ban(let d, let b): return model.setBanned(d, b)
            case .order(let i, let b): return model.order(i, ban: b)
            case .admit(let d, let i): return model.admit(d, i).outcome
            case .register(let d, let i): return model.register(d, i)
            case .advance(let k):
                model.month += k
                return "advanced(v\(model.month))"
            }
        }

        mutating func perform(_ op: Op) async throws -> String {
            // A fresh token for every call, as Apple's are.
            var device = 0
            switch op {
            case .claim(let d, _), .eligibility(let d, _), .ban(let d, _), .admit(let d, _), .register(let d, _): device = d
            case .order, .advance: break
            }
            let token = try token(device)
            do throws(PolicyError) {
                switch op {
                case .claim(_, let p):
                    let outcome = try await policy.claim(p, token: token, client: "model")
                    return "claimed(v\(virtual(outcome.claimedMonth)))"
                case .eligibility(_, let p):
                    let e = try await policy.eligibility(p, token: token)
                    return "eligible(\(e.eligible), \(e.reason.rawValue), \(e.claimedMonth.map { "v\(virtual($0))" } ?? "nil"))"
                case .ban(_, let b):
                    let outcome = try await policy.setBanned(b, token: token, reason: "model", client: "model")
                    return "ban(\(outcome.banned), applied: \(outcome.applied))"
                case .order(let i, let b):
                    let outcome = try await policy.orderPending(b ? .ban : .unban, installID: i, reason: "model", client: "model")
                    return "ban(\(outcome.banned), applied: \(outcome.applied))"
                case .admit(_, let i):
                    let admission = try await policy.admit(token: token, installID: i, client: "model")
                    guard admission.meaning != nil else { return "admitted(validated only)" }
                    return "admitted(\(admission.appliedPending?.rawValue ?? "nil"))"
                case .register(_, let i):
                    let o = try await policy.registerInstall(token: token, installID: i, client: "model")
                    return "install(\(o.reinstalls), banned: \(o.banned), applied: \(o.appliedPending?.rawValue ?? "nil"))"
                case .advance(let k):
                    // `apply` already moved the model's month; move every stamp k months back instead.
                    for id in ids {
                        guard let d = h.sandbox.device(id), let stamp = d.lastUpdated else { continue }
                        h.sandbox.seed(id, bits: d.bits, lastUpdated: stamp.adding(months: -k))
                    }
                    policy = makePolicy()
                    return "advanced(v\(model.month))"
                }
            } catch {
                switch error {
                case .notEnabled: return "notEnabled"
                case .unknownPromotion(let id): return "unknownPromotion(\(id))"
                case .promotionNotActive(let id, _, _): return "promotionNotActive(\(id))"
                case .alreadyClaimed(let m): return "alreadyClaimed(v\(virtual(m)))"
                case .deviceBanned(let applied): return "deviceBanned(\(applied?.rawValue ?? "nil"))"
                case .apple(let e): return "apple(\(e))"
                case .storage(let e): return "storage(\(e.message))"
                case .cancelled: return "cancelled"
                }
            }
        }

        /// Every device's bits and month, and the pending orders, as the model has them; nil when equal.
        func compareState() async throws -> String? {
            for (d, id) in ids.enumerated() {
                let real = try h.state(id)
                let seen = PolicyModel.Device(bits: [real.bits.bit0, real.bits.bit1], stamp: real.lastUpdated.map(virtual))
                if seen != model.devices[d] { return "device d\(d): model \(model.devices[d]), sandbox \(seen)" }
            }
            var pending: [String: Bool] = [:]
            for action in try await h.ledger.pendingActions() { pending[action.installID] = action.kind == .ban }
            if pending != model.pending { return "pending orders: model \(model.pending.sorted { $0.key < $1.key }), ledger \(pending.sorted { $0.key < $1.key })" }
            return nil
        }
    }
}

import FoundationEssentials
import Locking

/// Counters, gauges and histograms in Prometheus's text format, labelled, in memory.
public final class MetricsRegistry: Sendable {
    private struct Family {
        let help: String
        let type: String
        var samples: [String: Double] = [:] // rendered label set → value
    }

    private struct Histogram {
        var buckets: [Int]
        var sum: Double = 0
        var count = 0

        mutating func record(_ value: Double, bounds: [Double]) {
            for (i, bound) in bounds.enumerated() where value <= bound { buckets[i] += 1 }
            sum += value
            count += 1
        }
    }

    private let families = Lock<[String: Family]>([:])
    private let histograms = Lock<[String: [String: Histogram]]>([:])
    private let histogramFamilies = Lock<[String: MetricFamily]>([:])

    public init() {}

    /// Adds `value` to a counter; `values` are the family's label values, in the order of its label names.
    public func increment(_ family: MetricFamily, _ values: String..., by value: Double = 1) {
        assert(family.kind == .counter && values.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = Self.render(family.labels, values)
        families.withLock { f in
            f[family.name, default: Family(help: family.help, type: family.kind.rawValue)].samples[key, default: 0] += value
        }
    }

    /// Sets a gauge to `value`; `values` are the family's label values.
    public func set(_ family: MetricFamily, _ values: String..., to value: Double) {
        assert(family.kind == .gauge && values.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = Self.render(family.labels, values)
        families.withLock { f in
            f[family.name, default: Family(help: family.help, type: family.kind.rawValue)].samples[key] = value
        }
    }

    /// Records one observation in a histogram with its family's buckets.
    public func observe(_ family: MetricFamily, _ values: String..., value: Double) {
        assert(family.kind == .histogram && values.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = Self.render(family.labels, values)
        histogramFamilies.withLock { declared in
            if declared[family.name] == nil { declared[family.name] = family }
        }
        // Updated in place: copying a histogram out and back would copy its buckets on every observation.
        histograms.withLock { h in
            h[family.name, default: [:]][key, default: Histogram(buckets: Array(repeating: 0, count: family.buckets.count))]
                .record(value, bounds: family.buckets)
        }
    }

    /// The exposition text.
    public func render() -> String {
        var out = ""
        for (name, family) in families.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.type)\n"
            for (labels, value) in family.samples.sorted(by: { $0.key < $1.key }) {
                out += "\(name)\(labels.isEmpty ? "" : "{\(labels)}") \(Self.format(value))\n"
            }
        }
        let declared = histogramFamilies.withLock { $0 }
        for (name, series) in histograms.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            guard let family = declared[name] else { continue }
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) histogram\n"
            for (labels, hist) in series.sorted(by: { $0.key < $1.key }) {
                let prefix = labels.isEmpty ? "" : labels + ","
                for (i, bound) in family.buckets.enumerated() {
                    out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(hist.buckets[i])\n"
                }
                out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(hist.count)\n"
                out += "\(name)_sum\(labels.isEmpty ? "" : "{\(labels)}") \(hist.sum)\n"
                out += "\(name)_count\(labels.isEmpty ? "" : "{\(labels)}") \(hist.count)\n"
            }
        }
        return out
    }

    /// `name="value",…` in one allocation (it is made for every update).
    private static func render(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        let escaped = values.map(escape)
        var capacity = 0
        for (name, value) in zip(names, escaped) { capacity += name.utf8.count + value.utf8.count + 4 }
        var out = ""
        out.reserveCapacity(capacity)
        for (i, (name, value)) in zip(names, escaped).enumerated() {
            if i > 0 { out.append(",") }
            out.append(name)
            out.append("=\"")
            out.append(value)
            out.append("\"")
        }
        return out
    }

    /// Prometheus label escaping; most values need none, so check before building a new string.
    private static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return value }
        var out = ""
        for ch in value {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }

    private static func format(_ v: Double) -> String {
        v.rounded() == v && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}

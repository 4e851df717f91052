import FoundationEssentials
import Locking

/// Counters, gauges and histograms in Prometheus's text format, labelled, in memory.
public final class MetricsRegistry: Sendable {
    /// One series: its family's number and its label values, as the call site gave them. Updates hash this
    /// (an integer and a few short strings); the `name="value"` text is made only when `/metrics` is read.
    private struct SeriesKey: Hashable {
        let family: Int
        let values: [String]
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

    private struct Store {
        /// The families with at least one series, by number.
        var families: [Int: MetricFamily] = [:]
        /// Counters and gauges.
        var samples: [SeriesKey: Double] = [:]
        var histograms: [SeriesKey: Histogram] = [:]
    }

    private let store = Lock(Store())

    public init() {}

    /// Adds `value` to a counter; `values` are the family's label values, in the order of its label names.
    public func increment(_ family: MetricFamily, _ values: String..., by value: Double = 1) {
        assert(family.kind == .counter && values.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = SeriesKey(family: family.number, values: values)
        store.withLock { s in
            if let i = s.samples.index(forKey: key) {
                s.samples.values[i] += value
            } else {
                s.samples[key] = value
                s.families[family.number] = family
            }
        }
    }

    /// Sets a gauge to `value`; `values` are the family's label values.
    public func set(_ family: MetricFamily, _ values: String..., to value: Double) {
        assert(family.kind == .gauge && values.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = SeriesKey(family: family.number, values: values)
        store.withLock { s in
            if s.samples.updateValue(value, forKey: key) == nil { s.families[family.number] = family }
        }
    }

    /// Records one observation in a histogram with its family's buckets.
    public func observe(_ family: MetricFamily, _ values: String..., value: Double) {
        assert(family.kind == .histogram && values.count == family.labels.count, "\(family.name) takes \(family.labels)")
        let key = SeriesKey(family: family.number, values: values)
        // Updated in place: copying a histogram out and back would copy its buckets on every observation.
        store.withLock { s in
            if let i = s.histograms.index(forKey: key) {
                s.histograms.values[i].record(value, bounds: family.buckets)
            } else {
                var histogram = Histogram(buckets: Array(repeating: 0, count: family.buckets.count))
                histogram.record(value, bounds: family.buckets)
                s.histograms[key] = histogram
                s.families[family.number] = family
            }
        }
    }

    /// The exposition text: counters and gauges, then histograms, each by family name and label text.
    public func render() -> String {
        let s = store.withLock { $0 }
        var out = ""
        for (family, series) in Self.grouped(s.samples, s.families) {
            out += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.kind.rawValue)\n"
            for (labels, value) in series {
                out += "\(family.name)\(labels.isEmpty ? "" : "{\(labels)}") \(Self.format(value))\n"
            }
        }
        for (family, series) in Self.grouped(s.histograms, s.families) {
            let name = family.name
            out += "# HELP \(name) \(family.help)\n# TYPE \(name) histogram\n"
            for (labels, hist) in series {
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

    /// Series by family, families sorted by name, each family's series by their label text.
    private static func grouped<Value>(_ series: [SeriesKey: Value], _ families: [Int: MetricFamily])
        -> [(family: MetricFamily, series: [(labels: String, value: Value)])] {
        var byFamily: [Int: [(labels: String, value: Value)]] = [:]
        for (key, value) in series {
            guard let family = families[key.family] else { continue }
            byFamily[key.family, default: []].append((render(family.labels, key.values), value))
        }
        return byFamily.compactMap { number, series in
            families[number].map { ($0, series.sorted { $0.labels < $1.labels }) }
        }.sorted { $0.family.name < $1.family.name }
    }

    /// `name="value",…`, escaped, for the exposition text.
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

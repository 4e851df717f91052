import Foundation
import Testing
import TwoBitsService

/// The registry's exposition text: series summed per label set, escaped label values, histograms with
/// cumulative buckets, families and series in a stable order, and no update lost across threads.
@Suite struct MetricsRegistryTests {
    @Test func seriesAreKeptApartByLabelValuesAndRenderedInOrder() {
        let registry = MetricsRegistry()
        registry.increment(.rateLimited, "b", "global")
        registry.increment(.rateLimited, "a", "global", by: 2)
        registry.increment(.rateLimited, "b", "global")
        registry.increment(.automaticBans)
        registry.set(.httpRequestsInFlight, to: 7)
        registry.set(.httpRequestsInFlight, to: 3)
        let text = registry.render()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"twobits_rate_limited_total{client="a",scope="global"} 2"#))
        #expect(lines.contains(#"twobits_rate_limited_total{client="b",scope="global"} 2"#))
        #expect(lines.contains("twobits_automatic_bans_total 1"))
        #expect(lines.contains("twobits_http_requests_in_flight 3"))
        #expect(lines.contains("# TYPE twobits_http_requests_in_flight gauge"))
        // Families by name, each with its HELP and TYPE once; series by label text.
        let families = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(families == ["twobits_automatic_bans_total", "twobits_http_requests_in_flight", "twobits_rate_limited_total"])
        let a = lines.firstIndex(of: #"twobits_rate_limited_total{client="a",scope="global"} 2"#)!
        let b = lines.firstIndex(of: #"twobits_rate_limited_total{client="b",scope="global"} 2"#)!
        #expect(a < b)
    }

    @Test func labelValuesAreEscaped() {
        let registry = MetricsRegistry()
        registry.increment(.rateLimited, "say \"hi\"\\\nbye", "global")
        #expect(registry.render().contains(#"twobits_rate_limited_total{client="say \"hi\"\\\nbye",scope="global"} 1"#))
    }

    @Test func histogramsCountEachObservationInEveryBucketItFits() {
        let registry = MetricsRegistry()
        registry.observe(.appleCallSeconds, "query_two_bits", value: 0.007)
        registry.observe(.appleCallSeconds, "query_two_bits", value: 3)
        registry.observe(.appleCallSeconds, "update_two_bits", value: 0.001)
        let text = registry.render()
        #expect(text.contains(#"twobits_apple_call_seconds_bucket{endpoint="query_two_bits",le="0.005"} 0"#))
        #expect(text.contains(#"twobits_apple_call_seconds_bucket{endpoint="query_two_bits",le="0.01"} 1"#))
        #expect(text.contains(#"twobits_apple_call_seconds_bucket{endpoint="query_two_bits",le="5.0"} 2"#))
        #expect(text.contains(#"twobits_apple_call_seconds_bucket{endpoint="query_two_bits",le="+Inf"} 2"#))
        #expect(text.contains(#"twobits_apple_call_seconds_count{endpoint="query_two_bits"} 2"#))
        #expect(text.contains(#"twobits_apple_call_seconds_sum{endpoint="query_two_bits"} 3.007"#))
        #expect(text.contains(#"twobits_apple_call_seconds_bucket{endpoint="update_two_bits",le="0.005"} 1"#))
        #expect(text.components(separatedBy: "# TYPE twobits_apple_call_seconds histogram").count == 2)
    }

    @Test func noUpdateIsLostAcrossThreads() async {
        let registry = MetricsRegistry()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<1_000 {
                        registry.increment(.rateLimited, "client\(task % 2)", "global")
                        registry.observe(.ledgerCallSeconds, value: Double(i % 3) / 1_000)
                    }
                }
            }
        }
        let text = registry.render()
        #expect(text.contains(#"twobits_rate_limited_total{client="client0",scope="global"} 4000"#))
        #expect(text.contains(#"twobits_rate_limited_total{client="client1",scope="global"} 4000"#))
        #expect(text.contains("twobits_ledger_call_seconds_count 8000"))
    }
}

-- Shared by the wrk scripts: prints one line "BENCH_JSON {...}" that bench.py parses.
function report(summary, latency, wraps, loaded)
    local e = summary.errors
    io.write(string.format(
        'BENCH_JSON {"duration_us":%d,"requests":%d,"bytes":%d,' ..
        '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
        '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},"token_wraps":%d,"tokens_loaded":%d}\n',
        summary.duration, summary.requests, summary.bytes,
        e.connect, e.read, e.write, e.status, e.timeout,
        latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
        wraps, loaded))
end

-- wrk script: GET /.well-known/jwks.json (no Apple call, no API key).
-- done() prints one line "BENCH_JSON {...}" that bench.py parses.

wrk.method = "GET"
wrk.path = "/.well-known/jwks.json"

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        'BENCH_JSON {"duration_us":%d,"requests":%d,"bytes":%d,' ..
        '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
        '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f},"token_wraps":0,"tokens_loaded":0}\n',
        summary.duration, summary.requests, summary.bytes,
        e.connect, e.read, e.write, e.status, e.timeout,
        latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end

-- wrk script: GET /.well-known/jwks.json (no Apple call, no API key).
-- done() prints one line "BENCH_JSON {...}" that bench.py parses.

wrk.method = "GET"
wrk.path = "/.well-known/jwks.json"

-- report() lives beside this script.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "report.lua")

function done(summary, latency, requests)
    report(summary, latency, 0, 0)
end

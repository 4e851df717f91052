-- wrk script: GET /.well-known/jwks.json (no Apple call, no API key).
-- done() prints one line "BENCH_JSON {...}" that bench.py parses.

wrk.method = "GET"
wrk.path = "/.well-known/jwks.json"

-- spread() and report() live beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "spread.lua")
dofile(here .. "report.lua")

local next_id = 0

function setup(thread)
    spread(thread, next_id)
    next_id = next_id + 1
end

function done(summary, latency, requests)
    report(summary, latency, 0, 0)
end

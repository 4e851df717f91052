-- wrk script: POSTs {"device_token": ...} to one TwoBits route, a fresh pre-minted sandbox token per request.
--
-- Arguments (after `--` on wrk's command line):
--   1  token file (one device token per line)
--   2  API key (sent as Authorization: Bearer ...)
--   3  number of wrk threads (each thread takes every Nth line: disjoint slices)
--   4  request path, e.g. /v1/fallback-tokens
--
-- When a thread runs out of tokens it starts again at its first one and counts a wrap; bench.py
-- reports wraps because reused tokens are refused (409) and would then be what is measured.
-- done() prints one line "BENCH_JSON {...}" that bench.py parses.

local threads = {}
local next_id = 0

-- spread() and report() live beside this script.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "spread.lua")
dofile(here .. "report.lua")

function setup(thread)
    thread:set("thread_id", next_id)
    spread(thread, next_id)
    next_id = next_id + 1
    table.insert(threads, thread)
end

local tokens = {}
local index = 0
local path, headers

function init(args)
    local file, key, nthreads = args[1], args[2], tonumber(args[3])
    path = args[4]
    local line_number = 0
    for line in io.lines(file) do
        if line_number % nthreads == thread_id and #line > 0 then tokens[#tokens + 1] = line end
        line_number = line_number + 1
    end
    if #tokens == 0 then error("thread " .. thread_id .. ": no tokens in " .. file) end
    headers = { ["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json" }
    wraps = 0
    tokens_loaded = #tokens
end

function request()
    index = index + 1
    if index > #tokens then
        index = 1
        wraps = wraps + 1
    end
    return wrk.format("POST", path, headers, '{"device_token":"' .. tokens[index] .. '"}')
end

function done(summary, latency, requests)
    local wrapped, loaded = 0, 0
    for _, thread in ipairs(threads) do
        wrapped = wrapped + (thread:get("wraps") or 0)
        loaded = loaded + (thread:get("tokens_loaded") or 0)
    end
    report(summary, latency, wrapped, loaded)
end

#!/bin/bash
# Allocations (libc malloc calls) and a CPU profile of the server under one bench.py load.
#   Benchmarks/allocs.sh [scenario] [latency_ms]      e.g. Benchmarks/allocs.sh fallback 0
# Prints mallocs per request (a uprobe on libc's malloc counted over 6 s, divided by the requests
# /metrics counted meanwhile) and writes a CPU profile to .build/profile-<scenario>.data
# (`perf report -i … --sort dso` for the split by library). Needs perf (Debian: linux-perf) and root
# for the uprobe. Uses the release binary bench.py uses; run it on an otherwise quiet machine.
set -euo pipefail
scenario=${1:-fallback}
latency=${2:-0}
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 2; }
libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
perf probe -q -x "$libc" malloc 2>/dev/null || true
log=$(mktemp)
python3 Benchmarks/bench.py --scenarios "$scenario" --latencies "$latency" --concurrency 256 --duration 20 \
    --no-es256 --no-peer >"$log" 2>&1 &
bench=$!
# Wait until the run starts (after the sandbox tokens are minted; jwks mints none).
for _ in $(seq 1 120); do sleep 1; grep -qE "minted|jwks latency=" "$log" && break; done
sleep 2
pid=$(pgrep -f "twobits serve" | head -1)
port=$(ss -ltnpH | grep "pid=$pid," | grep -o "127.0.0.1:[0-9]*" | head -1 | cut -d: -f2)
requests() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^twobits_http_requests_total/ {s += $2} END {print s}'; }
before=$(requests)
mallocs=$(perf stat -x, -e probe_libc:malloc -p "$pid" -- sleep 6 2>&1 >/dev/null | awk -F, '/probe_libc:malloc/ {print $1}')
after=$(requests)
perf record -q -F 1999 -g -p "$pid" -o ".build/profile-$scenario.data" -- sleep 5 >/dev/null 2>&1 || true
wait "$bench" || true
rm -f "$log"
python3 -c "r = $after - $before; print('$scenario at $latency ms: %d requests, %d mallocs, %.0f per request' % (r, $mallocs, $mallocs / max(1, r)))"
echo "CPU profile: perf report -i .build/profile-$scenario.data --no-children --sort dso"

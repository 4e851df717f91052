#!/usr/bin/env python3
"""TwoBits load benchmark: is the service bounded by Apple's latency, or by its own threads and CPU?

Starts `twobits sandbox` (Apple, emulated, with a settable latency) and `twobits serve` on loopback,
pre-mints sandbox device tokens, and drives each scenario with wrk (Lua scripts in Benchmarks/wrk/)
at every sandbox latency x concurrency. Per run it reports throughput against the ideal
concurrency / (latency x Apple calls per request), latency percentiles, errors, the server's CPU per
request, peak RSS, thread count, and how many distinct developer JWTs the sandbox saw. It also runs an
ES256 micro-benchmark (TwoBits' signer against `openssl speed ecdsap256`).

Each run of fallback, claim and JWKS is raced against a comparison peer: the same routes written in Go with only
its standard library (Benchmarks/GoPeer/, built here with `go build`, offline), behind the same sandbox, under the
same wrk load with its own fresh tokens. Each row reports both, and TwoBits/Go ratios of CPU per request and of
throughput. --no-peer skips it; --smoke never runs it (and so never needs Go).

--apple-link picks the link both servers reach the sandbox by: plaintext HTTP/1.1 (the default), or the TLS fake
Apple of the TLS suites (Tests/tls/fake_apple.py: Debian's nginx with TLS 1.3 and Apple's host names, HTTP/2 by ALPN
with a stream limit per connection, or HTTP/1.1 only), certificates verified, and the terminator's count of
connections per run (benchlib/link.py).

Standard library only. Usage:

    python3 Benchmarks/bench.py                      # the full matrix with the Go peer, ~25 minutes
    python3 Benchmarks/bench.py --smoke              # one 3 s run per scenario; non-zero exit on any problem
    python3 Benchmarks/bench.py --scenarios fallback,jwks --latencies 50 --concurrency 512 --duration 5
    python3 Benchmarks/bench.py --write-readme       # also replace the results section of Benchmarks/README.md
    python3 Benchmarks/bench.py --apple-link tls-h2  # Apple reached over TLS + HTTP/2 through nginx (tls-h1: HTTP/1.1 only)

The binary is $TWOBITS_BIN or .build/release/twobits; the peer $GOPEER_BIN or .build/gopeer/gopeer (built from
Benchmarks/GoPeer when $GOPEER_BIN is unset). Results go to Benchmarks/results/latest.json and
Benchmarks/results/latest.md. Every process started is stopped on exit (process groups), and every wait
is bounded.

This file is the entry point; the harness is the package beside it, Benchmarks/benchlib/ (its __init__ lists the
modules), which Benchmarks/receipts.py uses too.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.cli import main  # noqa: E402  (the harness: Benchmarks/benchlib/)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

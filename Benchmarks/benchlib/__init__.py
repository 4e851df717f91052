"""The pieces of Benchmarks/bench.py (and Benchmarks/receipts.py): standard library only.

common      paths, log, BenchError
processes   child processes in their own process groups, bounded commands, log-file waits
procfs      /proc readings: CPU, RSS, threads, the machine
httpclient  a small keep-alive JSON client (the sandbox's control API, readiness, /metrics)
scenarios   the routes under load and the fixed identities of the bench's configuration
peers       the Go peer's build and the PostgreSQL cluster
link        the link to Apple: plaintext, or the TLS fake Apple (nginx, HTTP/2 or HTTP/1.1) and what it counted
harness     Bench: the sandbox, the servers under load (Target), token pools
load        one wrk run and what it measured
metrics     the server's /metrics and log, read around a run
micro       the ES256 and App Attest micro-benchmarks
targets     the targets and their verdicts
report      the Markdown tables, results/*.json and *.md, the README's generated sections
cli         bench.py's command line
"""

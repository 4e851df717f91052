"""Issue 8's targets in `Benchmarks/bench.py` decide pass and fail from the rows they name: at 256
connections, TwoBits against the Go peer (CPU per request <= 0.8 x Go's, throughput >= Go's) and CPU per
request in absolute terms. Synthetic rows, no processes: what is measured is the verdict logic, not timing.
"""
import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "Benchmarks" / "bench.py"
spec = importlib.util.spec_from_file_location("bench", BENCH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def run(scenario, latency, concurrency, rps, cpu_us, server="twobits", errors=0):
    return {"server": server, "scenario": scenario, "route": bench.SCENARIO_LABELS[scenario], "latency_ms": latency,
            "concurrency": concurrency, "requests_per_second": rps, "server_cpu_us_per_request": cpu_us,
            "server_peak_rss_mb": 50.0, "non_2xx": errors, "socket_errors": 0, "token_wraps": 0}


def paired(scenario, latency, ours, theirs, concurrency=256):
    r = run(scenario, latency, concurrency, *ours)
    bench.compare_with_peer(r, run(scenario, latency, concurrency, *theirs, server="go"))
    return r


def verdicts(runs):
    return {c["target"]: c["met"] for c in bench.issue8_targets(runs)}


def test_ratios_are_twobits_over_go():
    r = paired("fallback", 0, (2000, 80.0), (1000, 160.0))
    assert r["vs_peer"]["cpu_per_request_ratio"] == 0.5
    assert r["vs_peer"]["throughput_ratio"] == 2.0
    assert r["peer"]["server"] == "go"


def test_met_when_cheaper_and_faster_than_go():
    v = verdicts([paired("fallback", 0, (2000, 100.0), (1500, 130.0)), paired("claim", 50, (900, 150.0), (900, 190.0)),
                  paired("claim", 0, (1500, 190.0), (1400, 250.0))])
    assert v["server CPU per request <= 0.8 x Go's (fallback, 0 ms)"] is True   # 100/130 = 0.77
    assert v["throughput >= Go's (fallback, 0 ms)"] is True
    assert v["server CPU per request <= 0.8 x Go's (claim, 50 ms)"] is True    # 150/190 = 0.79
    assert v["throughput >= Go's (claim, 50 ms)"] is True                      # equal counts
    assert v["server CPU per request at 0 ms <= 120 us (fallback, c=256)"] is True
    assert v["server CPU per request at 0 ms <= 200 us (claim, c=256)"] is True


def test_missed_when_not_enough_cheaper_or_slower():
    v = verdicts([paired("fallback", 0, (1499, 121.0), (1500, 150.0)), paired("claim", 0, (1000, 201.0), (1000, 300.0))])
    assert v["server CPU per request <= 0.8 x Go's (fallback, 0 ms)"] is False  # 121/150 = 0.81
    assert v["throughput >= Go's (fallback, 0 ms)"] is False
    assert v["server CPU per request at 0 ms <= 120 us (fallback, c=256)"] is False
    assert v["server CPU per request at 0 ms <= 200 us (claim, c=256)"] is False
    # No claim row at 50 ms in this run: its comparison is not listed at all.
    assert not any("claim, 50 ms" in t for t in v)


def test_only_rows_at_256_connections_count():
    v = verdicts([paired("fallback", 0, (100, 1000.0), (9000, 50.0), concurrency=512)])
    assert v == {}


def test_without_the_peer_the_comparisons_are_not_applicable():
    v = verdicts([run("fallback", 0, 256, 2000, 100.0)])
    assert v["server CPU per request <= 0.8 x Go's (fallback, 0 ms)"] is None
    assert v["throughput >= Go's (fallback, 0 ms)"] is None
    assert v["server CPU per request at 0 ms <= 120 us (fallback, c=256)"] is True


def test_errors_on_either_side_are_named_beside_the_verdict():
    r = run("fallback", 0, 256, 2000, 100.0)
    bench.compare_with_peer(r, run("fallback", 0, 256, 1000, 200.0, server="go", errors=7))
    notes = {c["target"]: c["note"] for c in bench.issue8_targets([r])}
    assert "Go: 7 non-2xx" in notes["throughput >= Go's (fallback, 0 ms)"]

"""Issue 8's targets in `Benchmarks/bench.py` decide pass and fail from the rows they name: at 256
connections, TwoBits against the Go peer (CPU per request <= 0.8 x Go's, throughput >= Go's) and CPU per
request in absolute terms. Synthetic rows, no processes: what is measured is the verdict logic, not timing.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Benchmarks"))
from benchlib import common, scenarios, targets  # noqa: E402


def run(scenario, latency, concurrency, rps, cpu_us, server="twobits", errors=0):
    return {"server": server, "scenario": scenario, "route": scenarios.SCENARIO_LABELS[scenario], "latency_ms": latency,
            "concurrency": concurrency, "requests_per_second": rps, "server_cpu_us_per_request": cpu_us,
            "server_peak_rss_mb": 50.0, "non_2xx": errors, "socket_errors": 0, "token_wraps": 0}


def paired(scenario, latency, ours, theirs, concurrency=256):
    r = run(scenario, latency, concurrency, *ours)
    targets.compare_with_peer(r, run(scenario, latency, concurrency, *theirs, server="go"))
    return r


def verdicts(runs):
    return {c["target"]: c["met"] for c in targets.peer_targets(runs)}


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
    targets.compare_with_peer(r, run("fallback", 0, 256, 1000, 200.0, server="go", errors=7))
    notes = {c["target"]: c["note"] for c in targets.peer_targets([r])}
    assert "Go: 7 non-2xx" in notes["throughput >= Go's (fallback, 0 ms)"]


def test_a_row_raced_several_times_is_judged_on_its_median_race():
    # Three claim races at 50 ms: CPU ratios 0.70, 0.86, 0.90 (median 0.86); throughput ratios 1.10, 0.98, 0.99.
    races = [paired("claim", 50, (1100, 70.0), (1000, 100.0)), paired("claim", 50, (980, 86.0), (1000, 100.0)),
             paired("claim", 50, (990, 90.0), (1000, 100.0))]
    checks = {c["target"]: c for c in targets.peer_targets(races)}
    cpu = checks["server CPU per request <= 0.8 x Go's (claim, 50 ms)"]
    rps = checks["throughput >= Go's (claim, 50 ms)"]
    # One race met both targets; the median race met neither.
    assert cpu["met"] is False and rps["met"] is False
    assert "median 0.86 x of 3 races (0.70-0.90)" in cpu["measured"]
    assert "median 0.99 x of 3 races (0.98-1.10)" in rps["measured"]
    # Two of the three under the limit: the median is under it too.
    races[2] = paired("claim", 50, (1010, 79.0), (1000, 100.0))
    v = verdicts(races)
    assert v["server CPU per request <= 0.8 x Go's (claim, 50 ms)"] is True
    assert v["throughput >= Go's (claim, 50 ms)"] is True


def test_absolute_cpu_over_several_runs_is_the_median_run():
    def absolute(cpus):
        runs = [paired("fallback", 0, (2000, cpu), (1500, 160.0)) for cpu in cpus]
        return {c["target"]: c for c in targets.peer_targets(runs)}["server CPU per request at 0 ms <= 120 us (fallback, c=256)"]
    # An even count: the mean of the middle two, (118 + 125) / 2 = 121.5, misses although two runs are under 120.
    check = absolute((110.0, 125.0, 140.0, 118.0))
    assert check["met"] is False
    assert "median 122 us of 4 runs (110-140)" in check["measured"]
    assert absolute((110.0, 119.0, 140.0, 118.0))["met"] is True   # (118 + 119) / 2 = 118.5
    assert common.median([3, None, 1]) == 2 and common.median([]) is None

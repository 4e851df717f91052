"""Issue 9's targets in `Benchmarks/bench.py --compare-ledgers` decide pass and fail from the three runs of a
row: PostgreSQL against SQLite (throughput >= 0.85 x, TwoBits CPU per request <= 1.3 x) and two replicas on
one PostgreSQL against one (throughput >= 1 x). Synthetic rows, no processes: the verdict logic, not timing.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Benchmarks"))
from benchlib import scenarios, targets  # noqa: E402
from benchlib.report import ledger_markdown  # noqa: E402

PG_RPS = "PostgreSQL throughput >= 85% of SQLite's"
PG_CPU = "PostgreSQL CPU per request (TwoBits process) <= 1.3 x SQLite's"
TWO = "two replicas on one PostgreSQL serve at least as much as one"


def run(server, rps, cpu_us, errors=0, replicas=1):
    return {"server": server, "replicas": replicas, "scenario": "claim", "route": scenarios.SCENARIO_LABELS["claim"],
            "latency_ms": 50, "concurrency": 512, "requests_per_second": rps, "server_cpu_us_per_request": cpu_us,
            "postgres_cpu_us_per_request": 100.0, "machine_cpu_busy_pct": 95.0, "non_2xx": errors, "socket_errors": 0}


def verdicts(sqlite, postgres, two):
    row = {"scenario": "claim", "latency_ms": 50, "concurrency": 512,
           "results": {"sqlite": run("sqlite", *sqlite), "postgres": run("postgres", *postgres),
                       "postgres-x2": run("postgres-x2", *two, replicas=2)}}
    return {c["target"]: c["met"] for c in targets.ledger_targets([row])}


def test_each_target_is_met_at_its_bound_and_missed_past_it():
    assert verdicts((1000, 100.0), (850, 130.0), (850, 200.0)) == {PG_RPS: True, PG_CPU: True, TWO: True}
    assert verdicts((1000, 100.0), (849, 131.0), (848, 200.0)) == {PG_RPS: False, PG_CPU: False, TWO: False}


def test_ratios_are_postgres_over_sqlite_and_two_over_one():
    # PostgreSQL faster and cheaper than SQLite meets both; two replicas slower than one misses.
    assert verdicts((500, 200.0), (1000, 100.0), (900, 100.0)) == {PG_RPS: True, PG_CPU: True, TWO: False}


def test_errors_are_named_beside_the_verdict():
    row = {"scenario": "claim", "latency_ms": 50, "concurrency": 512,
           "results": {"sqlite": run("sqlite", 1000, 100.0), "postgres": run("postgres", 900, 100.0, errors=3)}}
    checks = targets.ledger_targets([row])
    assert [c["target"] for c in checks] == [PG_RPS, PG_CPU]
    assert "postgres: 3 non-2xx" in checks[0]["note"]


def test_the_table_has_a_row_per_target_with_ratios_to_sqlite():
    results = {"sqlite": run("sqlite", 1000, 100.0), "postgres": run("postgres", 900, 120.0),
               "postgres-x2": run("postgres-x2", 950, 150.0, replicas=2)}
    for r in results.values():
        r.update({"latency_p50_ms": 1.0, "latency_p99_ms": 2.0, "cpu_share_pct": {"postgres": 30.0},
                  "server_peak_rss_mb": 50.0, "server_threads_max": 8, "developer_jwts_total": r["replicas"]})
    results["sqlite"]["cpu_share_pct"] = {"postgres": None}
    report = {"machine": {"cpu_model": "x", "nproc": 2, "nproc_available": 2, "os": "y", "loadavg_at_start": 0.0},
              "finished_at": "now", "duration_s": 3, "failure": None,
              "ledger_comparison": [{"scenario": "claim", "latency_ms": 50, "concurrency": 512, "results": results}]}
    report["targets"] = targets.ledger_targets(report["ledger_comparison"])
    table = ledger_markdown(report)
    assert "| 2 replicas, one PostgreSQL | 950 | 0.95 |" in table
    assert "| PostgreSQL | 900 | 0.90 |" in table and "| 120 | 1.20 |" in table

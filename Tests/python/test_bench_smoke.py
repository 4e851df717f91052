"""The benchmark harness must not rot: `Benchmarks/bench.py --smoke` runs one short wrk run per scenario
(sandbox latency 50 ms, concurrency 64) and exits non-zero on any error, on running out of pre-minted
tokens, or when the sandbox saw more than one developer JWT; over the TLS fake Apple (`--apple-link`), also when
a call did not go through the terminator over the link's HTTP version.

Needs wrk (`.ci/install-deps.sh` installs it) and TWOBITS_BIN pointing at a release build; the TLS runs also need
nginx and root (Tests/tls/fake_apple.py).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "Benchmarks", "bench.py")


def twobits_bin():
    return os.environ.get("TWOBITS_BIN") or os.path.join(ROOT, ".build", "release", "twobits")


def run_smoke(args, timeout):
    """Runs `bench.py --smoke ARGS`; returns (the JSON report, the output)."""
    binary = twobits_bin()
    if not os.access(binary, os.X_OK):
        pytest.skip("no twobits binary at %s (set TWOBITS_BIN)" % binary)
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, TWOBITS_BIN=binary)
        # bench.py runs each child in its own process group and kills them on exit; a new session here
        # lets the test kill bench.py and everything under it should bench.py itself hang.
        proc = subprocess.Popen(
            [sys.executable, BENCH, "--smoke", "--output", os.path.join(out, "smoke.json")] + args,
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 15)
            try:
                output, _ = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                output, _ = proc.communicate(timeout=10)
            pytest.fail("bench.py --smoke did not finish within %d s:\n%s" % (timeout, output[-4000:]))
        assert proc.returncode == 0, "bench.py --smoke exited %d:\n%s" % (proc.returncode, output[-4000:])
        assert "smoke OK" in output
        with open(os.path.join(out, "smoke.json")) as f:
            return json.load(f), output


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install -y wrk)")
def test_bench_smoke_runs_clean():
    run_smoke([], 40)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install -y wrk)")
def test_a_repeated_bench_runs_each_race_from_a_fresh_sandbox():
    """`--repeat 2`: the row twice, each race a bench of its own (its own work directory, sandbox and server)."""
    report, output = run_smoke(["--scenarios", "jwks", "--repeat", "2"], 40)
    assert [(r["scenario"], r["race"]) for r in report["runs"]] == [("jwks", 1), ("jwks", 2)]
    directories = [line.split("work directory ")[1] for line in output.splitlines() if "work directory " in line]
    sandboxes = [line.split("(pid ")[1] for line in output.splitlines() if "] sandbox http://" in line]
    assert len(directories) == 2 and directories[0] != directories[1], output[-3000:]
    assert len(sandboxes) == 2 and sandboxes[0] != sandboxes[1], output[-3000:]


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install -y wrk)")
def test_bench_smoke_runs_clean_on_two_replicas_sharing_postgres():
    """Issue 9's bench setup: two `twobits serve` on one PostgreSQL, wrk's threads split between them."""
    uri = os.environ.get("TWOBITS_TEST_POSTGRES")
    if not uri and not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        if os.environ.get("TWOBITS_REQUIRE_POSTGRES") == "1":
            pytest.fail("TWOBITS_REQUIRE_POSTGRES=1 but no PostgreSQL server is installed")
        pytest.skip("no PostgreSQL server (apt-get install postgresql)")
    args = ["--ledger", "postgres", "--replicas", "2", "--scenarios", "fallback,claim"] + (["--postgres", uri] if uri else [])
    report, _ = run_smoke(args, 60)
    assert [(r["scenario"], r["ledger"], r["replicas"]) for r in report["runs"]] == [("fallback", "postgres", 2), ("claim", "postgres", 2)]
    for r in report["runs"]:
        # Both replicas called Apple: each signed its own developer JWT.
        assert r["developer_jwts_total"] == 2, r
        assert r["server_statuses"], r


@pytest.mark.skipif(shutil.which("wrk") is None or shutil.which("nginx") is None, reason="wrk and nginx are needed (.ci/install-deps.sh --test)")
@pytest.mark.skipif(os.geteuid() != 0, reason="the TLS link runs the server in a private mount namespace: root only")
@pytest.mark.parametrize("link, protocol", [("tls-h2", "HTTP/2.0"), ("tls-h1", "HTTP/1.1")])
def test_bench_smoke_runs_over_the_tls_fake_apple(link, protocol):
    """`--apple-link tls-h2|tls-h1`: the fallback's Apple calls went to Apple's development host name through nginx,
    over TLS and the link's HTTP version, with the certificate verified (a refused one would fail every request),
    and the terminator's count of calls and connections is in the report."""
    report, _ = run_smoke(["--apple-link", link, "--scenarios", "fallback"], 60)
    assert report["apple_link"] == link
    [run] = report["runs"]
    figures = run["link"]
    assert run["apple_link"] == link and figures["link"] == link, run
    # Every Apple call the sandbox saw came through the terminator (a few may still be in flight at either count).
    assert figures["calls"] > 0 and abs(figures["calls"] - run["apple_calls_seen"]) <= run["concurrency"], (figures, run["apple_calls_seen"])
    assert figures["protocols"] == {protocol: figures["calls"]}, figures
    # 499: calls abandoned by the server when wrk stopped and their requests went away (at most one per connection).
    statuses = dict(figures["statuses"])
    assert statuses.pop("499", 0) <= run["concurrency"] and set(statuses) == {"200"}, figures
    assert set(figures["tls_versions"]) <= {"TLSv1.2", "TLSv1.3"}, figures
    # Connections are kept: many calls per connection, over HTTP/1.1 too.
    assert 1 <= figures["connections_used"] <= run["concurrency"] and figures["calls_per_connection"] > 5, figures
    assert figures["new_connections_per_10k_calls"] is not None and figures["terminator_cpu_us_per_request"] > 0, figures

"""Issue 35's benchmark must not rot: `Benchmarks/receipts.py` at the smallest scale renews every attested key in
each wave (the sandbox and the server agree on the count), and runs the fallback load with the refresher off and
on, renewals happening only when it is on. Counts only, never timings.

Needs wrk and TWOBITS_BIN (a debug build will do).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECEIPTS = os.path.join(ROOT, "Benchmarks", "receipts.py")


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install -y wrk)")
def test_the_receipt_bench_renews_every_key_and_runs_the_load_with_the_refresher_off_and_on():
    binary = os.environ.get("TWOBITS_BIN") or os.path.join(ROOT, ".build", "release", "twobits")
    if not os.access(binary, os.X_OK):
        pytest.skip("no twobits binary at %s (set TWOBITS_BIN)" % binary)
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "receipts.json")
        # A new session: receipts.py and its children can be killed as one should it hang.
        proc = subprocess.Popen([sys.executable, RECEIPTS, "--keys", "10", "--repeat", "1", "--duration", "1", "--rates", "5",
                                 "--concurrency", "16", "--settle", "0.2", "--no-split", "--output", path],
                                cwd=ROOT, env=dict(os.environ, TWOBITS_BIN=binary), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            output, _ = proc.communicate(timeout=10)
            pytest.fail("receipts.py did not finish within 120 s:\n%s" % output[-4000:])
        assert proc.returncode == 0, "receipts.py exited %d:\n%s" % (proc.returncode, output[-4000:])
        with open(path) as f:
            report = json.load(f)
    keys = report["args"]["keys"]
    assert keys >= 10 and report["failure"] is None
    (wave,) = report["waves"]
    assert wave["renewals_answered"] == keys and wave["outcomes"]["renewed"] == keys, wave
    assert wave["server_cpu_seconds"] > 0 and wave["server_cpu_us_per_refresh_raw"] is not None, wave
    runs = {r["condition"]: r for r in report["latency_runs"]}
    assert sorted(runs) == ["5/s", "off"], runs.keys()
    assert runs["off"]["renewals_during_run"] == 0 and runs["5/s"]["renewals_during_run"] > 0, runs
    for r in runs.values():
        assert r["requests"] > 0 and r["non_2xx"] == 0 and r["socket_errors"] == 0, r

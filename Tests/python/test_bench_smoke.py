"""The benchmark harness must not rot: `Benchmarks/bench.py --smoke` runs one short wrk run per scenario
(sandbox latency 50 ms, concurrency 64) and exits non-zero on any error, on running out of pre-minted
tokens, or when the sandbox saw more than one developer JWT.

Needs wrk (`.ci/install-deps.sh` installs it) and TWOBITS_BIN pointing at a release build.
"""
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


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install -y wrk)")
def test_bench_smoke_runs_clean():
    binary = twobits_bin()
    if not os.access(binary, os.X_OK):
        pytest.skip("no twobits binary at %s (set TWOBITS_BIN)" % binary)
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, TWOBITS_BIN=binary)
        # bench.py runs each child in its own process group and kills them on exit; a new session here
        # lets the test kill bench.py and everything under it should bench.py itself hang.
        proc = subprocess.Popen(
            [sys.executable, BENCH, "--smoke", "--output", os.path.join(out, "smoke.json")],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 15)
            try:
                output, _ = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                output, _ = proc.communicate(timeout=10)
            pytest.fail("bench.py --smoke did not finish within 40 s:\n" + output[-4000:])
        assert proc.returncode == 0, "bench.py --smoke exited %d:\n%s" % (proc.returncode, output[-4000:])
        assert "smoke OK" in output
        assert os.path.exists(os.path.join(out, "smoke.json"))

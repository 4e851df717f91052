"""Issue 44's fault campaign, short and seeded, so that the harness cannot rot: 75 s of the mixed workload under
every kind of fault once (kill, pause, a replica cut from PostgreSQL, the primary cut from everything, failover
to the standby, Apple slow, failing and cut off), then the checker must find no anomaly. About two minutes.
Needs root and `ip netns` (network namespaces) and a PostgreSQL server; skipped otherwise. `make nemesis` runs
the long campaign (docs/testing.md)."""
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import twobits_binary

NEMESIS = Path(__file__).resolve().parents[1] / "nemesis"
sys.path.insert(0, str(NEMESIS))
import cluster  # noqa: E402

SECONDS = 75
SEED = 1


def test_a_short_seeded_campaign_finds_no_anomaly(tmp_path):
    missing = cluster.why_unavailable()
    if missing:
        pytest.skip(f"fault campaign not run: {missing}")
    process = subprocess.Popen([sys.executable, str(NEMESIS / "campaign.py"), "--seconds", str(SECONDS), "--seed", str(SEED),
                                "--clients", "4", "--out", str(tmp_path / "run"), "--binary", twobits_binary()],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=SECONDS + 180)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)  # the campaign tears its namespaces and processes down on SIGTERM
        output, _ = process.communicate(timeout=60)
        pytest.fail(f"the campaign did not finish in {SECONDS + 180} s:\n{output[-5000:]}")
    print(output[-3000:])
    assert process.returncode == 0, output[-8000:]
    assert "| 0 |" in output.splitlines()[-2], output[-3000:]
    # Nothing left behind: no namespace and no address of the run's network.
    octet = re.search(r"net 10\.213\.(\d+)\.0/24", output).group(1)
    assert f"tbn{octet}-" not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"10.213.{octet}." not in subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout

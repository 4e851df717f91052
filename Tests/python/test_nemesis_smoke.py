"""Issue 44's fault campaign, short and seeded, so that the harness cannot rot: 75 s of the mixed workload under
every kind of fault once (kill, pause, a replica cut from PostgreSQL, the primary cut from everything, failover
to the standby, Apple slow, failing and cut off), and beside it 70 s of the SQLite layout (kill, pause, its ledger
disk full and frozen, the Apple faults); the checker must find no anomaly in either. About two minutes.
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
SQLITE_SECONDS = 70  # seed 1 plays each of the SQLite layout's seven kinds in 70 s
SEED = 1


def test_a_short_seeded_campaign_finds_no_anomaly(tmp_path):
    """The roles layout (three replicas, PostgreSQL) and the SQLite layout (one replica, its ledger disk filled
    and frozen) side by side: the two together take as long as the longer one."""
    missing = cluster.why_unavailable() or cluster.why_unavailable("sqlite")
    if missing:
        pytest.skip(f"fault campaign not run: {missing}")
    runs = {layout: subprocess.Popen([sys.executable, str(NEMESIS / "campaign.py"), "--seconds", str(seconds), "--seed", str(SEED),
                                      "--clients", "4", "--layout", layout, "--out", str(tmp_path / layout), "--binary", twobits_binary()],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for layout, seconds in (("roles", SECONDS), ("sqlite", SQLITE_SECONDS))}
    outputs = {}
    try:
        for layout, process in runs.items():
            try:
                outputs[layout], _ = process.communicate(timeout=SECONDS + 180)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the {layout} campaign did not finish in {SECONDS + 180} s")
    finally:
        for process in runs.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)  # the campaign tears its namespaces and processes down on SIGTERM
                process.communicate(timeout=60)
    for layout, output in outputs.items():
        print(output[-3000:])
        assert runs[layout].returncode == 0, output[-8000:]
        assert "| 0 |" in output.splitlines()[-2], output[-3000:]
        # Nothing left behind: no namespace and no address of the run's network.
        octet = re.search(r"net 10\.213\.(\d+)\.0/24", output).group(1)
        assert f"tbn{octet}-" not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert f"10.213.{octet}." not in subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout

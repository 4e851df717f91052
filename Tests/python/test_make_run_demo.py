"""`make run` prints curl commands; this runs every one of them (.ci/demo.sh --check) so they cannot rot."""
import os
import socket
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_printed_demo_command_works():
    with tempfile.TemporaryDirectory() as run_dir:
        env = dict(os.environ, TWOBITS_DEMO_DIR=run_dir, TWOBITS_DEMO_PORT=str(free_port()),
                   TWOBITS_DEMO_SANDBOX_PORT=str(free_port()))
        result = subprocess.run([str(ROOT / ".ci/demo.sh"), "--check"], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
        assert "demo check: every command answered as documented" in result.stdout

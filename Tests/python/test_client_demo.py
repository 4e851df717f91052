"""The client library from outside the package: docs/examples/ClientDemo depends on TwoBitsClient by path, as an app
would (docs/client.md), and runs the whole flow against `twobits serve` and `twobits sandbox` through
`make run`'s printed step 11 (.ci/demo.sh --check with the demo built)."""
import os
import subprocess
import tempfile
from pathlib import Path

from test_make_run_demo import free_port

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "docs" / "examples" / "ClientDemo"


def test_the_client_demo_attests_asserts_and_falls_back_against_the_demo_server():
    build = subprocess.run(["swift", "build", "--package-path", str(DEMO)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-2000:]
    binary = subprocess.run(["swift", "build", "--package-path", str(DEMO), "--show-bin-path"], capture_output=True, text=True,
                            timeout=120).stdout.strip() + "/client-demo"
    with tempfile.TemporaryDirectory() as run_dir:
        env = dict(os.environ, TWOBITS_DEMO_DIR=run_dir, TWOBITS_DEMO_PORT=str(free_port()),
                   TWOBITS_DEMO_SANDBOX_PORT=str(free_port()), TWOBITS_CLIENT_DEMO_BIN=binary)
        result = subprocess.run([str(ROOT / ".ci/demo.sh"), "--check"], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "iPhone 1 attests its key: tier appattest" in result.stdout
    assert "demo check: every command answered as documented" in result.stdout

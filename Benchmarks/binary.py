#!/usr/bin/env python3
"""The shipped binary: stripped size, start-up time and idle memory.

Usage: python3 Benchmarks/binary.py [--binary PATH] [--runs 7]
Default binary: the one inside the package `make package` built (.build-package/twobits_*/usr/bin/twobits).
Start-up time is from spawning `twobits serve` (SQLite ledger, fallback tokens on, the sandbox as Apple)
until /readyz answers 200, the median of --runs starts; idle RSS is VmRSS one second after ready.
"""
import argparse
import glob
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "Tests" / "python"))
os.environ.setdefault("TWOBITS_BIN", str(REPO / ".build" / "debug" / "twobits"))
from conftest import Deployment, http  # noqa: E402


def rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    binary = args.binary or (sorted(glob.glob(str(REPO / ".build-package" / "twobits_*" / "usr" / "bin" / "twobits"))) or [None])[-1]
    if not binary:
        sys.exit("no packaged binary: run `make package` first, or give --binary")
    os.environ["TWOBITS_BIN"] = binary
    with tempfile.TemporaryDirectory() as directory:
        deployment = Deployment(Path(directory) / "d")
        deployment.start_sandbox()
        starts, rss = [], []
        try:
            for _ in range(args.runs):
                begun = time.monotonic()
                process = deployment._spawn("server", ["serve", "--config", str(deployment.config_path)])
                while True:
                    try:
                        if http("GET", deployment.url + "/readyz", timeout=1).status == 200:
                            break
                    except OSError:
                        pass
                    time.sleep(0.002)
                starts.append((time.monotonic() - begun) * 1000)
                time.sleep(1)
                rss.append(rss_kib(process.pid) / 1024)
                process.terminate()
                process.wait(timeout=15)
        finally:
            deployment.stop()
    size = Path(binary).stat().st_size / (1024 * 1024)
    print(f"binary            {binary}")
    print(f"size (stripped)   {size:.1f} MiB")
    print(f"start-up to ready median {statistics.median(starts):.0f} ms (min {min(starts):.0f}, max {max(starts):.0f}, {args.runs} runs)")
    print(f"idle RSS          median {statistics.median(rss):.1f} MiB")


if __name__ == "__main__":
    main()

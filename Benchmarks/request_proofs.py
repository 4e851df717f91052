#!/usr/bin/env python3
"""What one request proof's verdict costs the server: CPU per proof and latency at a given concurrency.

Starts a sandbox and `twobits serve` (SQLite, the test suites' Deployment from Tests/python/conftest.py), attests
`--concurrency` keys, and has each key sign `--proofs` requests in advance (a `request_proof` challenge from the
server, the sandbox's simulated iPhone signing the client data). Then `--concurrency` threads, one per key, each
with a keep-alive connection, send their key's proofs to `POST /v1/app-attest/request-proofs/verify` in counter
order (a key's proofs must arrive in order, as an app sends them one at a time). Measured: the server's CPU
(utime + stime from /proc/PID/stat) over the run divided by the proofs, and the verdicts' latency percentiles as
the client saw them (a Python client: its own scheduling is in the figures). Every verdict must be valid.

Usage: TWOBITS_BIN=$PWD/.build/release/twobits python3 Benchmarks/request_proofs.py [--concurrency 64] [--proofs 40]
"""
import argparse
import base64
import hashlib
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "python"))
from conftest import Deployment  # noqa: E402

APP_ID = "TEAMID1234.com.example.strong"
APP_ATTEST = {"apps": [APP_ID], "environment": "production", "root_ca_file": "appattest-root.pem",
              "receipts": {"root_ca_file": "receipt-root.pem", "enabled": False}}
PATH = "/v1/payouts?x=1"
BODY = json.dumps({"amount": 100, "currency": "EUR", "to": "acct-42"}, separators=(",", ":")).encode()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def attest(deployment):
    key_id = deployment.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "production"}).json["key_id"]
    value = deployment.post("/v1/app-attest/challenges", {}, client="main").json["challenge"]
    digest = hashlib.sha256(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))).digest()
    obj = deployment.sandbox("POST", "/sandbox/v1/app-attest/attestations",
                             {"key_id": key_id, "client_data_hash": base64.b64encode(digest).decode()}).json["attestation_object"]
    answer = deployment.post("/v1/app-attest/attestations", {"key_id": key_id, "attestation_object": obj, "challenge": value}, client="main")
    assert answer.status == 201, answer
    return key_id, answer.json["artifact"]


def proof(deployment, key_id, artifact):
    value = deployment.post("/v1/app-attest/challenges", {"purpose": "request_proof"}, client="main").json["challenge"]
    body_sha256 = b64url(hashlib.sha256(BODY).digest())
    client_data = json.dumps({"challenge": value, "method": "POST", "path": PATH, "body_sha256": body_sha256}, separators=(",", ":")).encode()
    signed = deployment.sandbox("POST", "/sandbox/v1/app-attest/assertions",
                                {"key_id": key_id, "client_data_hash": base64.b64encode(hashlib.sha256(client_data).digest()).decode()})
    return json.dumps({"artifact": artifact, "client_data": b64url(client_data), "assertion": b64url(base64.b64decode(signed.json["assertion"])),
                       "method": "POST", "path": PATH, "body_sha256": body_sha256}).encode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--proofs", type=int, default=40, help="proofs per key (one key per connection)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="twobits-proof-bench-") as directory:
        deployment = Deployment(directory, extra={"app_attest": APP_ATTEST})
        deployment.start()
        try:
            keys = [attest(deployment) for _ in range(args.concurrency)]
            bodies = [[proof(deployment, k, a) for _ in range(args.proofs)] for k, a in keys]
            key = deployment.api_keys["main"]
            latencies, failures = [], []
            lock = threading.Lock()
            barrier = threading.Barrier(args.concurrency + 1)

            def run(mine):
                connection = http.client.HTTPConnection("127.0.0.1", deployment.port, timeout=30)
                headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
                barrier.wait()
                for body in mine:
                    start = time.perf_counter()
                    connection.request("POST", "/v1/app-attest/request-proofs/verify", body, headers)
                    response = connection.getresponse()
                    answer = response.read()
                    elapsed = time.perf_counter() - start
                    with lock:
                        latencies.append(elapsed)
                        if response.status != 200 or not json.loads(answer).get("valid"):
                            failures.append(answer[:200])
                connection.close()

            threads = [threading.Thread(target=run, args=(mine,)) for mine in bodies]
            for thread in threads:
                thread.start()
            pid = deployment.processes["server"].pid
            before, wall = cpu_seconds(pid), time.perf_counter()
            barrier.wait()
            for thread in threads:
                thread.join()
            cpu, wall = cpu_seconds(pid) - before, time.perf_counter() - wall
        finally:
            deployment.stop()
    total = len(latencies)
    ordered = sorted(latencies)
    print(json.dumps({
        "proofs": total, "concurrency": args.concurrency, "invalid": len(failures),
        "server_cpu_us_per_proof": round(cpu / total * 1e6, 1), "proofs_per_second": round(total / wall, 1),
        "p50_ms": round(statistics.median(ordered) * 1000, 2), "p99_ms": round(ordered[int(0.99 * (total - 1))] * 1000, 2),
    }))
    if failures:
        print("first failures:", failures[:3], file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the App Attest receipt refresher costs. Two measurements, on bench.py's harness (Benchmarks/benchlib: its
sandbox, server, wrk and /proc helpers; Benchmarks/README.md, "Receipt refreshes"):

1. CPU per refresh. `--keys` keys are attested through the sandbox's simulated keys with the refresher off
   (`app_attest.receipts.enabled: false`); each attestation stores an ATTEST receipt, which is due for renewal at
   once. The server is stopped and its SQLite ledger copied. Each repeat restores that copy, starts the server with
   the refresher on at `--refresh-rate` a second (the sandbox answering at 0 ms), and measures the server's CPU
   (utime + stime from /proc/PID/stat) from the process's birth (the refresher leases its first keys as the
   server turns ready) until the sandbox has answered every renewal (`calls.attestation_data` of
   `GET /sandbox/v1/counters`) and the last is stored, less a control: the server started on the same copy with
   the refresher off, for as long. Also the sandbox's CPU per renewal, and when an
   AppAttestBench binary is at hand, its receipt verification for the split verification / the rest.

2. Effect on request latency. bench.py's fallback scenario (POST /v1/fallback-tokens) at `--latency` ms of Apple
   latency and `--concurrency` connections, with the refresher off, and on at each of `--rates` a second with a
   wave running (every run restores the same ledger copy, so enough keys are due throughout), the conditions in
   alternating order per repeat. Per condition: the median and range over repeats of p50, p99 and req/s, and the
   renewals the sandbox answered during the run. The sandbox's latency applies to renewals too, and a replica
   renews one key at a time: at 50 ms no replica renews more than ~20 a second, whatever the setting.

Standard library only. Usage:

    python3 Benchmarks/receipts.py                                    # 500 keys, 3 repeats, 8 s runs
    TWOBITS_BIN=$PWD/.build/debug/twobits python3 Benchmarks/receipts.py --keys 100 --repeat 2 --duration 3
    python3 Benchmarks/receipts.py --only cpu --repeat 5 --write-readme

Results go to Benchmarks/results/receipts.json and .md; --write-readme replaces the results part of the README's
section. Every process started is stopped on exit.
"""

import argparse
import base64
import datetime
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import common, procfs  # noqa: E402
from benchlib.cli import parse_list  # noqa: E402
from benchlib.common import BenchError, fmt, log, median  # noqa: E402
from benchlib.harness import Bench  # noqa: E402
from benchlib.httpclient import Http  # noqa: E402
from benchlib.processes import run_bounded, tail  # noqa: E402
from benchlib.report import write_readme, write_report  # noqa: E402
from benchlib.scenarios import TEAM_ID  # noqa: E402

APP_ID = TEAM_ID + ".com.example.bench"
README_START = "<!-- bench:receipts:start (written by receipts.py --write-readme) -->"
README_END = "<!-- bench:receipts:end -->"
LEDGER_FILES = ("twobits.sqlite", "twobits.sqlite-wal", "twobits.sqlite-shm")
OFF = "off"


def median_range(values, digits=1):
    """"12.3 (11.9-13.0)", or the one value; "n/a" for none."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    if len(values) == 1:
        return fmt(float(values[0]), digits)
    return "%s (%s-%s)" % (fmt(float(median(values)), digits), fmt(float(min(values)), digits), fmt(float(max(values)), digits))


class ReceiptBench:
    def __init__(self, args, binary):
        self.args = args
        self.bench = Bench(args, binary)
        w = self.bench.work
        self.app_attest_root = os.path.join(w, "appattest-root.pem")
        self.receipt_root = os.path.join(w, "receipt-root.pem")
        self.bench.sandbox_args = ["--app-attest-root", self.app_attest_root, "--receipt-root", self.receipt_root]
        # The bench's sandbox and server run in Apple's development environment: development keys, whose receipts
        # the sandbox (a development one) renews.
        self.bench.extra_config = {"app_attest": {
            "apps": [APP_ID], "root_ca_file": self.app_attest_root,
            "receipts": {"enabled": False, "root_ca_file": self.receipt_root},
        }}
        self.snapshot = os.path.join(w, "ledger-snapshot")
        self.keys = 0

    # ---- the server

    @property
    def target(self):
        return self.bench.twobits

    def stop_server(self):
        for proc in self.target.procs:
            self.bench.procs.stop(proc, grace=15)
            self.bench.procs.children = [c for c in self.bench.procs.children if c[1] is not proc]
        self.target.procs = []

    def start_server(self, rate, restore):
        """(Re)starts `twobits serve` with the refresher off (rate None) or on at `rate` a second, on the ledger
        copy when `restore`; zeroes the sandbox's counters first."""
        self.stop_server()
        config_path = self.target.argv[-1]
        with open(config_path) as f:
            config = json.load(f)
        receipts = config["app_attest"]["receipts"]
        receipts["enabled"] = rate is not None
        receipts.pop("max_refreshes_per_second", None)
        if rate is not None:
            receipts["max_refreshes_per_second"] = rate
        with open(config_path, "w") as f:
            json.dump(config, f, indent=2)
        if restore:
            for name in LEDGER_FILES:
                live = os.path.join(self.bench.work, name)
                if os.path.exists(live):
                    os.remove(live)
                if os.path.exists(os.path.join(self.snapshot, name)):
                    shutil.copy2(os.path.join(self.snapshot, name), live)
        self.bench.sandbox_http.json("DELETE", "/sandbox/v1/counters")
        self.bench.start_target(self.target)

    def server_http(self):
        return Http(self.target.host, self.target.port)

    def renewals_answered(self):
        return self.bench.counters().get("calls", {}).get("attestation_data", 0)

    def refresh_outcomes(self):
        """twobits_app_attest_receipt_refreshes_total by outcome, from /metrics. Not retried: a scrape that is not
        200 once was another request's late answer (fixed in LoopDaemon), and must fail the run."""
        h = self.server_http()
        try:
            status, payload = h.request("GET", "/metrics")
            if status != 200:
                raise SystemExit("receipts.py: GET /metrics answered %d: %s" % (status, payload[:200]))
        finally:
            h.close()
        outcomes = {}
        if status == 200:
            for line in payload.decode(errors="replace").splitlines():
                m = re.match(r'^twobits_app_attest_receipt_refreshes_total\{outcome="([^"]*)"\}\s+([0-9.eE+-]+)$', line)
                if m:
                    outcomes[m.group(1)] = int(float(m.group(2)))
        return outcomes

    # ---- keys

    def attest_keys(self, count):
        """Attests `count` new sandbox keys through the server (the refresher off), then stops the server and copies
        its ledger: the keys' ATTEST receipts are all due in that copy."""
        self.start_server(None, restore=False)
        sandbox = self.bench.sandbox_http
        server = self.server_http()
        auth = {"Authorization": "Bearer " + self.bench.api_key}
        started = time.monotonic()
        try:
            for i in range(count):
                key_id = sandbox.json("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "development"})["key_id"]
                status, payload = server.request("POST", "/v1/app-attest/challenges", {}, auth)
                if status != 201:
                    raise BenchError("challenge: %d %s" % (status, payload[:300]))
                challenge = json.loads(payload)["challenge"]
                raw = base64.urlsafe_b64decode(challenge + "=" * (-len(challenge) % 4))
                attestation = sandbox.json("POST", "/sandbox/v1/app-attest/attestations", {
                    "key_id": key_id, "client_data_hash": base64.b64encode(hashlib.sha256(raw).digest()).decode()})["attestation_object"]
                status, payload = server.request("POST", "/v1/app-attest/attestations",
                                                 {"key_id": key_id, "attestation_object": attestation, "challenge": challenge}, auth)
                if status != 201:
                    raise BenchError("attestation %d: %d %s" % (i, status, payload[:300]))
        finally:
            server.close()
        self.stop_server()
        os.makedirs(self.snapshot, exist_ok=True)
        for name in LEDGER_FILES:
            live = os.path.join(self.bench.work, name)
            if os.path.exists(live):
                shutil.copy2(live, os.path.join(self.snapshot, name))
        self.keys = count
        log("attested %d keys in %.1f s; ledger copied" % (count, time.monotonic() - started))

    # ---- 1. CPU per refresh

    def refresh_wave(self, rate):
        """One wave: every key renewed once at `rate` a second, the sandbox at 0 ms; then a control start, the
        refresher off on the same ledger copy, for as long. The refresher leases its first keys as the server
        turns ready, so CPU is counted from the process's birth in both; their difference is the
        wave's (start-up, timers and idle turns cancel). Returns the measurements."""
        self.bench.set_latency(0)
        sandbox_pid = self.bench.sandbox.pid
        sandbox0, t0 = procfs.proc_cpu_seconds(sandbox_pid), time.monotonic()
        self.start_server(rate, restore=True)
        pid = self.target.proc.pid
        timeout = max(60.0, 10.0 * self.keys / rate + 30)
        answered = 0
        while answered < self.keys:
            if time.monotonic() - t0 > timeout:
                raise BenchError("only %d of %d renewals in %.0f s" % (answered, self.keys, timeout))
            if self.target.exited() is not None:
                raise BenchError("twobits serve exited during the wave:\n%s" % tail(self.target.err_path))
            time.sleep(0.05)
            answered = self.renewals_answered()
        # The last answer is still to be verified and stored: a short pause (the control waits as long).
        time.sleep(0.3)
        cpu, sandbox1, t1 = procfs.proc_cpu_seconds(pid), procfs.proc_cpu_seconds(sandbox_pid), time.monotonic()
        outcomes = self.refresh_outcomes()
        answered = self.renewals_answered()
        window = t1 - t0

        # The control: the same ledger, the refresher off, the same time from before its start.
        self.stop_server()
        c0 = time.monotonic()
        self.start_server(None, restore=True)
        time.sleep(max(0.0, c0 + window - time.monotonic()))
        control = procfs.proc_cpu_seconds(self.target.proc.pid)
        self.stop_server()

        renewed = outcomes.get("renewed", 0)
        net = cpu - control
        result = {
            "rate_setting": rate,
            "keys": self.keys,
            "renewals_answered": answered,
            "outcomes": outcomes,
            "wave_seconds": round(window, 2),
            "achieved_per_second": round(answered / window, 1) if window > 0 else None,
            "server_cpu_seconds": round(cpu, 3),
            "control_cpu_seconds": round(control, 3),
            "server_cpu_us_per_refresh": round(net / renewed * 1e6, 1) if renewed else None,
            "server_cpu_us_per_refresh_raw": round(cpu / renewed * 1e6, 1) if renewed else None,
            # Includes the counters this script polls every 50 ms.
            "sandbox_cpu_us_per_refresh": round((sandbox1 - sandbox0) / answered * 1e6, 1) if answered else None,
        }
        log("  wave: %d renewed (%s) in %.1f s (%.0f/s): server %s us CPU per refresh (%.3f s, control %.3f s), sandbox %s us" % (
            renewed, outcomes, window, result["achieved_per_second"] or 0, result["server_cpu_us_per_refresh"],
            cpu, control, result["sandbox_cpu_us_per_refresh"]))
        if renewed != self.keys or answered != self.keys:
            raise BenchError("expected %d renewals, the sandbox answered %d and the server renewed %d (%s)" % (
                self.keys, answered, renewed, outcomes))
        return result

    # ---- 2. latency under load

    def latency_run(self, condition):
        rate = None if condition == OFF else condition
        self.start_server(rate, restore=True)
        result = self.bench.run_one(self.target, "fallback", self.args.latency, self.args.concurrency, self.args.duration)
        # The renewals the sandbox answered while wrk ran (bench.py reads its counters just before and after).
        renewals = result["sandbox_calls"].get("attestation_data", 0)
        result["condition"] = OFF if rate is None else "%d/s" % rate
        result["refresh_rate_setting"] = rate
        result["renewals_during_run"] = renewals
        result["renewals_per_second"] = round(renewals / result["duration_s"], 1) if result["duration_s"] > 0 else None
        log("  %s: %d renewals while wrk ran (%.1f/s)" % (result["condition"], renewals, result["renewals_per_second"] or 0))
        if rate is not None and renewals == 0:
            raise BenchError("no renewal during the %s run" % result["condition"])
        if rate is not None and self.renewals_answered() >= self.keys:
            log("  WARNING: every key was renewed before the run ended (raise --keys)")
        return result

    def close(self):
        self.bench.close()


# --------------------------------------------------------------------------------------------------
# Report


def app_attest_receipt_us(binary, seconds):
    """AppAttestBench's receipt verification (µs CPU) when its binary is at hand: $APPATTESTBENCH_BIN or beside
    twobits. Never built here (a release build takes many minutes)."""
    for c in (os.environ.get("APPATTESTBENCH_BIN", ""), os.path.join(os.path.dirname(binary), "AppAttestBench")):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            try:
                _, out, _ = run_bounded([c, "--seconds", str(seconds)], seconds * 10 + 60)
                value = json.loads(out.strip().splitlines()[-1]).get("receipt_us")
                return {"binary": c, "receipt_us": value}
            except (BenchError, ValueError, IndexError) as error:
                return {"binary": c, "error": str(error)}
    return None


def markdown(report):
    m = report["machine"]
    a = report["args"]
    lines = ["Measured %s on %s (%s logical CPUs, `nproc` %s), %s; load average %.1f at start; binary `%s`%s. "
             "`python3 Benchmarks/receipts.py %s`." % (
                 report["finished_at"], m["cpu_model"], m["nproc"], m["nproc_available"], m["os"], m["loadavg_at_start"],
                 report["binary"], " (**debug build**)" if "/debug/" in report["binary"] else "", " ".join(report["argv"])), ""]
    waves = report["waves"]
    if waves:
        lines.append("**CPU per refresh** (%d keys, refresher at %d/s, sandbox at 0 ms; median of %d waves, range in brackets):" % (
            a["keys"], a["refresh_rate"], len(waves)))
        lines.append("")
        lines.append("| server CPU µs/refresh (less the control) | raw (start-up included) | sandbox CPU µs/refresh | renewals/s reached | wave s |")
        lines.append("|---:|---:|---:|---:|---:|")
        lines.append("| %s | %s | %s | %s | %s |" % (
            median_range([w["server_cpu_us_per_refresh"] for w in waves], 0),
            median_range([w["server_cpu_us_per_refresh_raw"] for w in waves], 0),
            median_range([w["sandbox_cpu_us_per_refresh"] for w in waves], 0),
            median_range([w["achieved_per_second"] for w in waves], 0),
            median_range([w["wave_seconds"] for w in waves], 1)))
        lines.append("")
        v = report.get("receipt_verification")
        if v and v.get("receipt_us") is not None:
            per = median([w["server_cpu_us_per_refresh"] for w in waves])
            lines.append("Of which the receipt's verification (AppAttestBench `receipt_us`, `%s`): %.0f µs; the rest (the call "
                         "through curl, base64 and JSON, the lease and the store in the ledger, the refresher's turns): %s µs." % (
                             os.path.basename(v["binary"]), v["receipt_us"], fmt(per - v["receipt_us"] if per is not None else None)))
            lines.append("")
    runs = report["latency_runs"]
    if runs:
        lines.append("**Request latency with a refresh wave running** (POST /v1/fallback-tokens, %d ms Apple latency, c=%d, "
                     "%d s runs, %d repeats in alternating order; median (range)):" % (
                         a["latency"], a["concurrency"], a["duration"], a["repeat"]))
        lines.append("")
        lines.append("| refresher | renewals/s while wrk ran | p50 ms | p99 ms | req/s | server CPU µs/req | non-2xx + socket err |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|")
        for condition in report["conditions"]:
            rs = [r for r in runs if r["condition"] == condition]
            lines.append("| %s | %s | %s | %s | %s | %s | %d |" % (
                condition, median_range([r["renewals_per_second"] for r in rs], 1),
                median_range([r["latency_p50_ms"] for r in rs], 1), median_range([r["latency_p99_ms"] for r in rs], 1),
                median_range([r["requests_per_second"] for r in rs], 0), median_range([r["server_cpu_us_per_request"] for r in rs], 0),
                sum(r["non_2xx"] + r["socket_errors"] for r in rs)))
        lines.append("")
    if report.get("failure"):
        lines.append("FAILED: %s" % report["failure"])
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# main


def main(argv):
    p = argparse.ArgumentParser(description="CPU per receipt refresh and the refresher's effect on latency "
                                            "(see Benchmarks/README.md)")
    p.add_argument("--keys", type=int, default=500, help="keys attested, each renewed once per wave (default 500; raised to "
                   "what the latency runs need)")
    p.add_argument("--refresh-rate", type=int, default=100, help="max_refreshes_per_second of the CPU waves (default 100)")
    p.add_argument("--rates", default="5,50", help="max_refreshes_per_second of the latency runs, besides off (default 5,50)")
    p.add_argument("--repeat", type=int, default=3, help="waves, and latency runs per condition (default 3)")
    p.add_argument("--duration", type=int, default=8, help="seconds per latency run (default 8)")
    p.add_argument("--latency", type=int, default=50, help="sandbox latency of the latency runs, ms (default 50)")
    p.add_argument("--concurrency", type=int, default=256, help="connections of the latency runs (default 256)")
    p.add_argument("--only", choices=["cpu", "latency"], help="one of the two measurements")
    p.add_argument("--settle", type=float, default=1.0, help="seconds to pause before each latency run")
    p.add_argument("--server-threads", type=int, default=2, help="server.threads (default 2)")
    p.add_argument("--wrk-threads", type=int, default=2)
    p.add_argument("--output", default=os.path.join(common.RESULTS_DIR, "receipts.json"))
    p.add_argument("--write-readme", action="store_true", help="replace the results part of the README's section")
    p.add_argument("--no-split", action="store_true", help="skip AppAttestBench (the split of a refresh's CPU into the "
                   "receipt's verification and the rest; about 20 s)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = p.parse_args(argv)
    rates = parse_list(args.rates, "rates")
    if not 1 <= args.repeat <= 20 or not 1 <= args.duration <= 600 or not 1 <= args.keys <= 100000:
        raise SystemExit("receipts.py: --repeat 1-20, --duration 1-600, --keys 1-100000")
    if any(not 1 <= r <= 100 for r in rates + [args.refresh_rate]):
        raise SystemExit("receipts.py: refresh rates are 1-100 (app_attest.receipts.max_refreshes_per_second)")
    # What benchlib's Bench reads of its arguments.
    for name, value in (("smoke", False), ("wake_coalescing_us", None), ("database_pool_size", None), ("database_pipelines", None),
                        ("compare_ledgers", False), ("ledger", "sqlite"), ("postgres", None), ("replicas", 1),
                        ("replica_threads", None), ("replica_pipelines", None)):
        setattr(args, name, value)
    binary = os.environ.get("TWOBITS_BIN") or os.path.join(common.ROOT, ".build", "release", "twobits")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise SystemExit("receipts.py: no twobits binary at %s (run `make release` or set TWOBITS_BIN)" % binary)
    if args.only != "cpu" and not shutil.which("wrk"):
        raise SystemExit("receipts.py: wrk is not installed (.ci/install-deps.sh --bench)")

    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    # Enough due keys that the fastest wave is still running when its run ends: the requested rate over the start,
    # the minting of tokens (about as long as the run), the settle pause and the run (at --latency ms a replica
    # reaches fewer: one renewal at a time).
    keys = args.keys
    if args.only != "cpu":
        keys = max(keys, int(max(rates) * (2 * args.duration + args.settle + 5)))
    conditions = [OFF] + ["%d/s" % r for r in rates]
    started = time.monotonic()
    machine = procfs.machine_description()
    waves, runs, failure = [], [], None
    verification = None
    rb = ReceiptBench(args, binary)
    try:
        rb.bench.setup()
        rb.attest_keys(keys)
        if args.only != "latency":
            for i in range(args.repeat):
                log("refresh wave %d of %d (%d keys at %d/s)" % (i + 1, args.repeat, keys, args.refresh_rate))
                waves.append(rb.refresh_wave(args.refresh_rate))
        if args.only != "cpu":
            plans = [None] + rates
            for i in range(args.repeat):
                order = plans if i % 2 == 0 else plans[::-1]
                for rate in order:
                    result = rb.latency_run(OFF if rate is None else rate)
                    result["repeat"] = i + 1
                    runs.append(result)
    except BenchError as error:
        failure = str(error)
        log("FAILED: %s" % failure)
    except KeyboardInterrupt as error:
        failure = "interrupted (%s)" % (error or "Ctrl-C")
        log(failure)
    finally:
        rb.close()
    if waves and not failure and not args.no_split:
        verification = app_attest_receipt_us(binary, 2)

    report = {
        "finished_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": round(time.monotonic() - started, 1),
        "argv": argv,
        "args": {"keys": keys, "refresh_rate": args.refresh_rate, "rates": rates, "repeat": args.repeat, "duration": args.duration,
                 "latency": args.latency, "concurrency": args.concurrency},
        "machine": machine,
        "binary": binary,
        "waves": waves,
        "receipt_verification": verification,
        "conditions": conditions,
        "latency_runs": runs,
        "failure": failure,
    }
    table = markdown(report)
    write_report(report, table, args.output)
    if args.write_readme and not failure:
        write_readme(table, README_START, README_END, "Receipt refreshes")
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""TwoBits load benchmark: is the service bounded by Apple's latency, or by its own threads and CPU?

Starts `twobits sandbox` (Apple, emulated, with a settable latency) and `twobits serve` on loopback,
pre-mints sandbox device tokens, and drives each scenario with wrk (Lua scripts in Benchmarks/wrk/)
at every sandbox latency x concurrency. Per run it reports throughput against the ideal
concurrency / (latency x Apple calls per request), latency percentiles, errors, the server's CPU per
request, peak RSS, thread count, and how many distinct developer JWTs the sandbox saw. It also runs an
ES256 micro-benchmark (TwoBits' signer against `openssl speed ecdsap256`).

Each run of fallback, claim and JWKS is raced against a comparison peer: the same routes written in Go with only
its standard library (Benchmarks/GoPeer/, built here with `go build`, offline), behind the same sandbox, under the
same wrk load with its own fresh tokens. Each row reports both, and TwoBits/Go ratios of CPU per request and of
throughput. --no-peer skips it; --smoke never runs it (and so never needs Go).

Standard library only. Usage:

    python3 Benchmarks/bench.py                      # the full matrix with the Go peer, ~25 minutes
    python3 Benchmarks/bench.py --smoke              # one 3 s run per scenario; non-zero exit on any problem
    python3 Benchmarks/bench.py --scenarios fallback,jwks --latencies 50 --concurrency 512 --duration 5
    python3 Benchmarks/bench.py --write-readme       # also replace the results section of Benchmarks/README.md

The binary is $TWOBITS_BIN or .build/release/twobits; the peer $GOPEER_BIN or .build/gopeer/gopeer (built from
Benchmarks/GoPeer when $GOPEER_BIN is unset). Results go to Benchmarks/results/latest.json and
Benchmarks/results/latest.md. Every process started is stopped on exit (process groups), and every wait
is bounded.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, "Benchmarks")
WRK_DIR = os.path.join(BENCH_DIR, "wrk")
GOPEER_DIR = os.path.join(BENCH_DIR, "GoPeer")
GOPEER_BUILD = os.path.join(ROOT, ".build", "gopeer")
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
README = os.path.join(BENCH_DIR, "README.md")
README_START = "<!-- bench:results:start (written by bench.py --write-readme) -->"
README_END = "<!-- bench:results:end -->"
LEDGERS_START = "<!-- bench:ledgers:start (written by bench.py --compare-ledgers --write-readme) -->"
LEDGERS_END = "<!-- bench:ledgers:end -->"

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024

PROMOTION_ID = "bench-promo"
TEAM_ID = "BENCHTEAM1"
KEY_ID = "BENCHKEY01"

# name -> (HTTP method, path, Apple calls per request, needs tokens, one device per token)
SCENARIOS = {
    "fallback": ("POST", "/v1/fallback-tokens", 1, True, False),
    "claim": ("POST", "/v1/promotions/%s/claim" % PROMOTION_ID, 2, True, True),
    "validate": ("POST", "/v1/devices/validate", 1, True, False),
    "jwks": ("GET", "/.well-known/jwks.json", 0, False, False),
}
SCENARIO_LABELS = {
    "fallback": "POST /v1/fallback-tokens",
    "claim": "POST /v1/promotions/{id}/claim",
    "validate": "POST /v1/devices/validate",
    "jwks": "GET /.well-known/jwks.json",
}

# Targets from issue 5.
CPU_TARGET_US = {"fallback": 150, "claim": 250, "jwks": 30}
THROUGHPUT_TARGET = 0.90
RSS_TARGET_MB = 150  # also issue 8's
ES256_TARGET = 0.80
ATTESTATION_TARGET_US = 1000
ASSERTION_TARGET_US = 150

# Targets from issue 8 (runtime), measured at 256 connections. Against the Go peer: TwoBits' CPU per request at
# most 0.8 x Go's and its throughput at least Go's, in these (scenario, sandbox latency ms) runs.
PEER_TARGET_CONCURRENCY = 256
PEER_TARGET_RUNS = [("fallback", 0), ("claim", 50)]
PEER_CPU_RATIO_TARGET = 0.8
PEER_THROUGHPUT_RATIO_TARGET = 1.0
# Absolute: server CPU per request at 0 ms latency, 256 connections.
CPU_TARGET_US_AT_256 = {"fallback": 120, "claim": 200}

# Targets from issue 9 (PostgreSQL ledger), fallback and claim at 50 ms, 512 connections: on PostgreSQL at least 85% of
# the SQLite run's throughput, at most 1.3 x its CPU per request (the TwoBits process); two replicas on one
# PostgreSQL serve at least as much as one.
LEDGER_THROUGHPUT_RATIO_TARGET = 0.85
LEDGER_CPU_RATIO_TARGET = 1.3
REPLICAS_THROUGHPUT_RATIO_TARGET = 1.0

# Routes the Go peer serves: the two issue 8 compares, and the JWKS since it costs nothing (no validate route).
PEER_SCENARIOS = ("fallback", "claim", "jwks")

# A run counts as CPU-saturated (throughput target not applicable) above this machine-wide busy share.
SATURATED_PCT = 90.0

# Before a scenario's first run has shown its CPU-bound rate, size token pools for this many req/s.
DEFAULT_RATE_GUESS = {"fallback": 8000, "claim": 2000, "validate": 8000}
MAX_TOKENS_PER_RUN = 400_000
TOKENS_PER_DEVICE = 200  # fallback/validate pools: many devices, a few hundred fresh tokens each
FRESH_DEVICES_PER_CALL = 2_000  # claim pools: one new device per token, this many per sandbox call


def log(message):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), message))
    sys.stderr.flush()


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------------------------------
# Processes


class Processes:
    """Every child process, each in its own process group; stop_all() kills the groups."""

    def __init__(self):
        self.children = []

    def start(self, name, argv, stdout, stderr, cwd=None, env=None):
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, cwd=cwd, env=env,
                                start_new_session=True)
        self.children.append((name, proc))
        return proc

    def stop(self, proc, grace=5.0):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def stop_all(self):
        for name, proc in reversed(self.children):
            self.stop(proc)
        self.children = []


def run_bounded(argv, timeout, cwd=None, env=None, check=True):
    """Runs a short command in its own process group; kills the group when it overruns."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            cwd=cwd, env=env, start_new_session=True, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate(timeout=5)
        raise BenchError("%s took longer than %d s" % (" ".join(argv[:3]), timeout))
    if check and proc.returncode != 0:
        raise BenchError("%s exited %d: %s" % (" ".join(argv[:3]), proc.returncode, (err or out).strip()[-2000:]))
    return proc.returncode, out, err


# --------------------------------------------------------------------------------------------------
# /proc


def proc_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status(pid):
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Threads", "VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0])
    return values


def procs_status(pids):
    """proc_status summed over processes (replicas): threads, RSS and peak RSS."""
    total = {}
    for pid in pids:
        for key, value in proc_status(pid).items():
            total[key] = total.get(key, 0) + value
    return total


def reset_peak_rss(pid):
    """Resets VmHWM so each run reports its own peak (Linux clear_refs 5). False when not permitted."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def machine_cpu():
    """(busy, total) jiffies over all CPUs."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    total = sum(parts[:8])
    return total - idle, total


def machine_description():
    model, mhz, flags = "unknown", None, ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == "unknown":
                    model = value.strip()
                elif key == "cpu MHz" and mhz is None:
                    mhz = value.strip()
    except OSError:
        pass
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    os_name = platform.platform()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    wrk_version = ""
    try:
        _, out, err = run_bounded(["wrk", "--version"], 10, check=False)
        wrk_version = (out + err).strip().splitlines()[0].split(" Copyright")[0].split(" [")[0]
    except Exception:
        pass
    return {
        "cpu_model": model,
        "cpu_mhz": mhz,
        "nproc": os.cpu_count(),
        "nproc_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_gb": mem_gb,
        "os": os_name,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": wrk_version,
        "loadavg_at_start": os.getloadavg()[0],
    }


# --------------------------------------------------------------------------------------------------
# HTTP helpers (control API of the sandbox, readiness of the server)


class Http:
    def __init__(self, host, port, timeout=30):
        self.host, self.port, self.timeout = host, port, timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        hdrs = dict(headers or {})
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                response = self.conn.getresponse()
                payload = response.read()
                return response.status, payload
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        raise BenchError("unreachable")

    def json(self, method, path, body=None, expect=(200, 201)):
        status, payload = self.request(method, path, body)
        if status not in expect:
            raise BenchError("%s %s -> %d %s" % (method, path, status, payload[:300]))
        return json.loads(payload) if payload else None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def wait_for_line(path, pattern, proc, timeout, what):
    """Polls a log file for a line matching `pattern`; returns the match."""
    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError("%s exited with status %s:\n%s" % (what, proc.returncode, tail(path)))
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = regex.search(line)
                    if m:
                        return m
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise BenchError("%s did not start within %d s:\n%s" % (what, timeout, tail(path)))


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------------
# The Go peer


def build_go_peer():
    """$GOPEER_BIN, or Benchmarks/GoPeer built into .build/gopeer with the local toolchain only: no module
    proxy, no checksum database, no toolchain download, a build cache of its own. Returns (binary, go version)."""
    explicit = os.environ.get("GOPEER_BIN")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise BenchError("GOPEER_BIN=%s is not an executable" % explicit)
        return explicit, "prebuilt ($GOPEER_BIN)"
    go = shutil.which("go")
    if not go:
        raise BenchError("the Go peer needs Go: `.ci/install-deps.sh --bench` installs golang-go (or pass --no-peer)")
    binary = os.path.join(GOPEER_BUILD, "gopeer")
    env = dict(os.environ,
               GOCACHE=os.path.join(GOPEER_BUILD, "cache"), GOPATH=os.path.join(GOPEER_BUILD, "gopath"),
               GOMODCACHE=os.path.join(GOPEER_BUILD, "gopath", "pkg", "mod"),
               GOENV="off", GOPROXY="off", GOSUMDB="off", GONOSUMDB="*", GOTOOLCHAIN="local", GOTELEMETRY="off",
               GOFLAGS="-mod=readonly", GOWORK="off", CGO_ENABLED="0")
    _, version, _ = run_bounded([go, "version"], 30, env=env)
    started = time.monotonic()
    run_bounded([go, "build", "-trimpath", "-o", binary, "."], 600, cwd=GOPEER_DIR, env=env)
    log("Go peer built in %.1f s (%s)" % (time.monotonic() - started, version.strip()))
    return binary, version.strip()


# --------------------------------------------------------------------------------------------------
# PostgreSQL


POSTGRES_SCRIPT = os.path.join(ROOT, ".ci", "postgres.sh")


class Postgres:
    """The PostgreSQL cluster the bench runs against: its own (`.ci/postgres.sh start`, destroyed at close),
    or the one of an explicit URI (--postgres). A fresh database per server target (CREATE DATABASE with psql,
    so the role needs CREATEDB; without it the URI's own database is used)."""

    def __init__(self, uri=None):
        self.dir = None
        if uri:
            self.uri = uri
        else:
            if not os.path.exists(POSTGRES_SCRIPT):
                raise BenchError("no %s" % POSTGRES_SCRIPT)
            _, out, _ = run_bounded([POSTGRES_SCRIPT, "start"], 180)
            exported = dict(re.findall(r"^export (\w+)='([^']*)'$", out, re.M))
            if "TWOBITS_TEST_POSTGRES" not in exported:
                raise BenchError(".ci/postgres.sh start printed no URI: %s" % out[-500:])
            self.uri, self.dir = exported["TWOBITS_TEST_POSTGRES"], exported["TWOBITS_TEST_POSTGRES_DIR"]
            log("PostgreSQL cluster in %s" % self.dir)
        self.databases = 0

    def create_database(self, name):
        if not shutil.which("psql"):
            log("no psql: every PostgreSQL target uses the URI's database")
            return self.uri
        self.databases += 1
        name = "%s_%d_%d" % (name, os.getpid(), self.databases)
        code, _, err = run_bounded(["psql", self.uri, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", 'CREATE DATABASE "%s"' % name],
                                   60, check=False)
        if code != 0:
            log("cannot create a database (%s): using the URI's own" % err.strip()[-200:].replace(self.password() or "\0", "***"))
            return self.uri
        base, _, query = self.uri.partition("?")
        return base.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")

    def password(self):
        m = re.match(r"^postgres(?:ql)?://[^:/@]+:([^@]+)@", self.uri)
        return m.group(1) if m else None

    def cpu_seconds(self):
        """CPU of the cluster's processes (postmaster and its children) when bench.py started it; None otherwise.
        Backends that exit during a run take their CPU with them: the pool keeps its connections open."""
        if not self.dir:
            return None
        try:
            with open(os.path.join(self.dir, "data", "postmaster.pid")) as f:
                postmaster = int(f.readline())
        except (OSError, ValueError):
            return None
        total = 0.0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry) as f:
                    text = f.read()
                fields = text[text.rindex(")") + 2:].split()
                if int(entry) == postmaster or int(fields[1]) == postmaster:
                    total += (int(fields[11]) + int(fields[12])) / CLK_TCK
            except (OSError, ValueError, IndexError):
                continue
        return total

    def close(self):
        if self.dir:
            run_bounded([POSTGRES_SCRIPT, "destroy", self.dir], 60, check=False)
            self.dir = None


# --------------------------------------------------------------------------------------------------
# The bench


class Target:
    """One server under load, `twobits serve` or the Go peer: its process, address and log files; or
    `replicas` `twobits serve` processes on one configuration (one PostgreSQL database), the load split
    between them by wrk thread (wrk/spread.lua), measured as one server (CPU, RSS and threads summed).

    Restarted per scenario, so peak RSS, threads and developer JWTs are each scenario's own."""

    def __init__(self, name, label, argv, work, has_metrics, replicas=1, ledger=None):
        self.name = name  # "twobits" or "go"; in a ledger comparison "sqlite", "postgres", "postgres-x2"
        self.label = label  # for messages
        self.argv = argv
        self.has_metrics = has_metrics  # serves TwoBits' /metrics
        self.replicas = replicas
        self.ledger = ledger  # "sqlite" or "postgres" (TwoBits only)
        suffixes = [""] + ["-%d" % (i + 1) for i in range(1, replicas)]
        self.log_paths = [os.path.join(work, "%s%s.log" % (name, x)) for x in suffixes]
        self.err_paths = [os.path.join(work, "%s%s.err" % (name, x)) for x in suffixes]
        self.log_path, self.err_path = self.log_paths[0], self.err_paths[0]
        self.procs = []
        self.addresses = []  # (host, port) of each replica
        self.host = self.port = self.url = None
        # Distinct developer JWTs the sandbox saw from this process: the sum of each of its runs' new ones
        # (runs never overlap, so the sandbox's one counter can be attributed run by run).
        self.jwts = 0

    @property
    def proc(self):
        return self.procs[0] if self.procs else None

    def pids(self):
        return [p.pid for p in self.procs]

    def exited(self):
        """The first replica that is no longer running, or None."""
        return next((p for p in self.procs if p.poll() is not None), None)


class Bench:
    def __init__(self, args, binary, peer_binary=None):
        self.args = args
        self.binary = binary
        # The sandbox is the same program unless told otherwise; an A/B of two builds pins it to one
        # (a change to the shared HTTP or event-loop layers would otherwise change the stand-in for Apple too).
        self.sandbox_binary = os.environ.get("TWOBITS_SANDBOX_BIN") or binary
        self.peer_binary = peer_binary
        self.procs = Processes()
        self.work = tempfile.mkdtemp(prefix="twobits-bench-")
        self.sandbox = None
        self.twobits = None
        self.peer = None
        self.postgres = None  # the cluster, when a target runs on PostgreSQL
        self.ledger_targets = []  # --compare-ledgers: SQLite, PostgreSQL, two replicas on PostgreSQL
        self.rate_seen = {}  # (target, scenario) -> highest req/s observed at 0 ms (its CPU-bound rate)
        self.token_seconds = 0.0
        # Set before setup() by Benchmarks/receipts.py: more sandbox flags (its App Attest roots, in self.work) and
        # top-level configuration sections (app_attest).
        self.sandbox_args = []
        self.extra_config = {}

    # ---- setup

    def setup(self):
        w = self.work
        log("work directory %s" % w)
        run_bounded(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                     "-out", os.path.join(w, "apple.p8")], 30)
        run_bounded([self.binary, "keys", "generate", "--dir", os.path.join(w, "keys")], 30)
        _, out, _ = run_bounded([self.binary, "apikey"], 30)
        key = re.search(r"api_key:\s+(\S+)", out)
        digest = re.search(r"key_sha256:\s+([0-9a-f]{64})", out)
        if not key or not digest:
            raise BenchError("cannot read `twobits apikey` output: %r" % out)
        self.api_key = key.group(1)

        # Sandbox (Apple, emulated).
        sandbox_log = os.path.join(w, "sandbox.log")
        self.sandbox = self.procs.start(
            "sandbox",
            [self.sandbox_binary, "sandbox", "--team-id", TEAM_ID, "--key-id", KEY_ID, "--key-file", os.path.join(w, "apple.p8"),
             "--listen", "127.0.0.1:0", "--latency-ms", "0"] + self.sandbox_args,
            stdout=open(sandbox_log, "ab"), stderr=subprocess.STDOUT)
        m = wait_for_line(sandbox_log, r'"url":"http://([0-9.]+):(\d+)"', self.sandbox, 30, "twobits sandbox")
        self.sandbox_url = "http://%s:%s" % (m.group(1), m.group(2))
        self.sandbox_http = Http(m.group(1), int(m.group(2)))
        self.sandbox_port = int(m.group(2))

        # Server.
        month = datetime.datetime.now(datetime.timezone.utc)
        this_month = "%04d-%02d" % (month.year, month.month)
        wake_coalescing = {} if self.args.wake_coalescing_us is None else {"wake_coalescing_us": self.args.wake_coalescing_us}
        config = {
            "listen": "127.0.0.1:0",
            "database": os.path.join(w, "twobits.sqlite"),
            "apple": {
                "environment": "development",
                "base_url": self.sandbox_url,
                "team_id": TEAM_ID,
                "key_id": KEY_ID,
                "private_key_file": os.path.join(w, "apple.p8"),
                "timeout_ms": 10000,
                # 2,048 concurrent requests may each hold an Apple call; the sandbox speaks HTTP/1.1, so
                # one connection carries one call at a time.
                "max_in_flight": 4096,
                "max_connections": 2048,
            },
            "clients": [{"name": "bench", "key_sha256": digest.group(1), "roles": ["promotions", "tokens", "admin"]}],
            # wrk's 2,048 connections all come from 127.0.0.1: no per-address cap.
            "server": {"threads": self.args.server_threads, **wake_coalescing, "request_deadline_ms": 30000, "shutdown_grace_ms": 2000,
                       "max_connections_per_ip": 0},
            "bits": {"bit0": "promotion", "bit1": "ban"},
            "promotions": [{"id": PROMOTION_ID, "starts": this_month, "ends": this_month}],
            "tokens": {"audience": "bench-api", "keys_dir": os.path.join(w, "keys"), "reuse_window_seconds": 3600},
        }
        config.update(self.extra_config)
        if self.args.database_pool_size:
            config["database_pool_size"] = self.args.database_pool_size
        if self.args.database_pipelines:
            config["database_pipelines"] = self.args.database_pipelines
        if self.args.compare_ledgers or self.args.ledger == "postgres":
            self.postgres = Postgres(self.args.postgres)

        def server(name, label, ledger, replicas=1):
            """A `twobits serve` target with a configuration (and so a database) of its own."""
            database = self.postgres.create_database("bench_%s" % name.replace("-", "_")) if ledger == "postgres" \
                else os.path.join(w, "%s.sqlite" % name)
            path = os.path.join(w, "config-%s.json" % name)
            own = dict(config, database=database)
            if replicas > 1:
                # Replicas on one machine share its cores: each gets its part of server.threads, as a
                # deployment would give each its share (two processes each running a loop per core would
                # only add context switches on a machine that is already busy).
                threads = self.args.replica_threads or max(1, self.args.server_threads // replicas)
                own["server"] = dict(config["server"], threads=threads)
                # And the pipeline connections: together the replicas open as many as one would, so PostgreSQL
                # sees the same batches (the service's default is 2).
                own["database_pipelines"] = self.args.replica_pipelines or max(1, (self.args.database_pipelines or 2) // replicas)
            with open(path, "w") as f:
                json.dump(own, f, indent=2)
            return Target(name, label, [self.binary, "serve", "--config", path], w, True, replicas=replicas, ledger=ledger)

        if self.args.compare_ledgers:
            self.ledger_targets = [server("sqlite", "twobits serve (SQLite)", "sqlite"),
                                   server("postgres", "twobits serve (PostgreSQL)", "postgres"),
                                   server("postgres-x2", "2 x twobits serve (one PostgreSQL)", "postgres", replicas=2)]
            self.twobits = self.ledger_targets[0]
        else:
            label = "twobits serve" + (" (PostgreSQL)" if self.args.ledger == "postgres" else "")
            if self.args.replicas > 1:
                label = "%d x %s" % (self.args.replicas, label)
            self.twobits = server("twobits", label, self.args.ledger, replicas=self.args.replicas)
        if self.peer_binary:
            # The same files as TwoBits': Apple key, identity, the signing key `twobits keys generate` wrote,
            # the API key's digest, audience and promotion.
            signing = sorted(x for x in os.listdir(os.path.join(w, "keys")) if x.endswith(".pem"))
            if not signing:
                raise BenchError("no signing key in %s" % os.path.join(w, "keys"))
            self.peer = Target("go", "Go peer", [
                self.peer_binary, "-listen", "127.0.0.1:0", "-apple-url", self.sandbox_url,
                "-apple-key", os.path.join(w, "apple.p8"), "-team-id", TEAM_ID, "-key-id", KEY_ID,
                "-signing-key", os.path.join(w, "keys", signing[-1]), "-api-key-sha256", digest.group(1),
                "-audience", config["tokens"]["audience"], "-promotion", PROMOTION_ID,
                "-max-conns", str(config["apple"]["max_in_flight"]), "-timeout-ms", str(config["apple"]["timeout_ms"])], w, False)
        log("sandbox %s (pid %d)" % (self.sandbox_url, self.sandbox.pid))

    def targets(self, scenario):
        """The servers a scenario is run against: TwoBits, and the peer where it serves the route (or, comparing
        ledgers, TwoBits on SQLite, on PostgreSQL and two replicas on PostgreSQL)."""
        if self.ledger_targets:
            return list(self.ledger_targets)
        return [self.twobits] + ([self.peer] if self.peer and scenario in PEER_SCENARIOS else [])

    def all_targets(self):
        return [t for t in [self.twobits, self.peer] + self.ledger_targets if t is not None]

    def start_servers(self, scenario):
        """(Re)starts the scenario's servers, so each scenario's RSS and threads are its own, after zeroing the
        sandbox's counters, so distinct developer JWTs are counted per server process. The other stop."""
        for target in self.all_targets():
            for proc in target.procs:
                self.procs.stop(proc, grace=15)
                self.procs.children = [c for c in self.procs.children if c[1] is not proc]
            target.procs = []
        self.sandbox_http.json("DELETE", "/sandbox/v1/counters")
        for target in self.targets(scenario):
            self.start_target(target)

    def start_target(self, target):
        target.jwts = 0
        target.procs, target.addresses = [], []
        for log_path, err_path in zip(target.log_paths, target.err_paths):
            # O_APPEND so bench.py can truncate the log between runs while the server keeps writing.
            for path in (log_path, err_path):
                open(path, "wb").close()
            proc = self.procs.start(target.name, target.argv, stdout=open(log_path, "ab"), stderr=open(err_path, "ab"))
            target.procs.append(proc)
            try:
                m = wait_for_line(log_path, r'"address":"([0-9.]+):(\d+)"', proc, 30, target.label)
            except BenchError as error:
                raise BenchError("%s\n%s" % (error, tail(err_path)))
            host, port = m.group(1), int(m.group(2))
            target.addresses.append((host, port))
            probe = Http(host, port)
            try:
                status, payload = probe.request("GET", "/readyz")
            finally:
                probe.close()
            if status != 200:
                raise BenchError("%s not ready: %d %s" % (target.label, status, payload[:300]))
        target.host, target.port = target.addresses[0]
        target.url = "http://%s:%d" % (target.host, target.port)
        log("%s %s (pid %s)" % (target.label, ", ".join("%s:%d" % a for a in target.addresses),
                                ", ".join(str(pid) for pid in target.pids())))

    # ---- tokens

    def mint_tokens(self, scenario, count):
        """Mints `count` fresh device tokens; for claims one new device per token. Returns a file path."""
        one_device_each = SCENARIOS[scenario][4]
        started = time.monotonic()
        workers = 4
        # Claims: each token from a new device of its own (`POST /sandbox/v1/device-tokens`). Otherwise many
        # devices with a few hundred tokens each (`POST /sandbox/v1/devices/{id}/tokens`).
        per_call = FRESH_DEVICES_PER_CALL if one_device_each else TOKENS_PER_DEVICE
        batches = []
        left = count
        while left > 0:
            batches.append(min(per_call, left))
            left -= batches[-1]
        per_worker = [batches[i::workers] for i in range(workers)]

        def mint(h, n):
            if one_device_each:
                return h.json("POST", "/sandbox/v1/device-tokens", {"count": n})["device_tokens"]
            device = h.json("POST", "/sandbox/v1/devices", {})["device_id"]
            return h.json("POST", "/sandbox/v1/devices/%s/tokens" % device, {"count": n})["device_tokens"]

        def work(sizes):
            h = Http("127.0.0.1", self.sandbox_port)
            out = []
            try:
                for n in sizes:
                    out.extend(mint(h, n))
            finally:
                h.close()
            return out

        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(work, per_worker))
        path = os.path.join(self.work, "tokens-%s.txt" % scenario)
        total = 0
        with open(path, "w") as f:
            for chunk in results:
                for token in chunk:
                    f.write(token)
                    f.write("\n")
                    total += 1
        elapsed = time.monotonic() - started
        self.token_seconds += elapsed
        log("  minted %d tokens in %.1f s" % (total, elapsed))
        return path, total

    def tokens_needed(self, target, scenario, latency_ms, concurrency, duration):
        calls = SCENARIOS[scenario][2]
        # Before this server's first 0 ms run, the other's rate (if higher) is the better guess.
        rate = self.rate_seen.get((target.name, scenario)) or max(
            [DEFAULT_RATE_GUESS[scenario]] + [v for (t, sc), v in self.rate_seen.items() if sc == scenario])
        # Whatever the latency, the CPU-bound rate seen at 0 ms bounds the rate (with head room for noise).
        cap = rate * 1.5
        if latency_ms > 0:
            ideal = concurrency / (latency_ms / 1000.0 * calls)
            cap = min(cap, ideal * 1.2)
        need = int(cap * (duration + 1)) + 4 * concurrency + 1000
        return min(need, MAX_TOKENS_PER_RUN)

    # ---- one run

    def set_latency(self, ms):
        self.sandbox_http.json("PUT", "/sandbox/v1/latency", {"milliseconds": ms})

    def counters(self):
        return self.sandbox_http.json("GET", "/sandbox/v1/counters")

    def apple_call_metrics(self, target):
        """Sums of the server's Apple-call histogram and attempt counters from /metrics: (seconds, count, outcomes),
        over all its replicas. Zeros for the Go peer, which has no /metrics."""
        total, count, outcomes = 0.0, 0, {}
        for host, port in (target.addresses if target.has_metrics else []):
            t, c, o = self.apple_call_metrics_of(host, port)
            total, count = total + t, count + c
            for k, v in o.items():
                outcomes[k] = outcomes.get(k, 0) + v
        return total, count, outcomes

    def apple_call_metrics_of(self, host, port):
        h = Http(host, port, timeout=10)
        try:
            status, payload = h.request("GET", "/metrics")
        except (OSError, http.client.HTTPException):
            return 0.0, 0, {}
        finally:
            h.close()
        if status != 200:
            # Not noise: a scrape answered otherwise was once another request's late answer (LoopDaemon).
            raise SystemExit("bench.py: GET /metrics on %s:%d answered %d: %r" % (host, port, status, payload[:200]))
        total, count, outcomes = 0.0, 0, {}
        for line in payload.decode(errors="replace").splitlines():
            m = re.match(r'^twobits_apple_call_seconds_(sum|count)(\{[^}]*\})?\s+([0-9.eE+-]+)$', line)
            if m:
                if m.group(1) == "sum":
                    total += float(m.group(3))
                else:
                    count += int(float(m.group(3)))
                continue
            m = re.match(r'^twobits_apple_calls_total\{([^}]*)\}\s+([0-9.eE+-]+)$', line)
            if m:
                outcome = re.search(r'outcome="([^"]*)"', m.group(1))
                key = outcome.group(1) if outcome else m.group(1)
                outcomes[key] = outcomes.get(key, 0) + int(float(m.group(2)))
        return total, count, outcomes

    def server_timings(self, target):
        """Sums and counts of the server's own latency histograms from /metrics, over all its replicas:
        {"ledger": (seconds, count), "request": (seconds, count)}, the request one over every route. Zeros for
        the Go peer. With the Apple-call histogram they split a request's time into its ledger calls, its
        Apple calls and the rest (loop turns, queueing)."""
        sums = {"ledger": [0.0, 0], "request": [0.0, 0]}
        for host, port in (target.addresses if target.has_metrics else []):
            h = Http(host, port, timeout=10)
            try:
                status, payload = h.request("GET", "/metrics")
            except (OSError, http.client.HTTPException):
                continue
            finally:
                h.close()
            if status != 200:
                raise SystemExit("bench.py: GET /metrics on %s:%d answered %d: %r" % (host, port, status, payload[:200]))
            for line in payload.decode(errors="replace").splitlines():
                m = re.match(r'^twobits_(ledger_call|http_request)_seconds_(sum|count)(\{[^}]*\})?\s+([0-9.eE+-]+)$', line)
                if m:
                    entry = sums["ledger" if m.group(1) == "ledger_call" else "request"]
                    if m.group(2) == "sum":
                        entry[0] += float(m.group(4))
                    else:
                        entry[1] += int(float(m.group(4)))
        return {k: tuple(v) for k, v in sums.items()}

    def truncate_server_log(self, target):
        for path in target.log_paths:
            with open(path, "r+b") as f:
                f.truncate(0)

    def server_log_summary(self, target):
        statuses, levels, samples = {}, {}, []
        for path in target.log_paths:
            try:
                with open(path, errors="replace") as f:
                    for line in f:
                        m = re.search(r'"status":(\d+)', line)
                        if m:
                            statuses[m.group(1)] = statuses.get(m.group(1), 0) + 1
                        lv = re.search(r'"level":"(\w+)"', line)
                        if lv:
                            levels[lv.group(1)] = levels.get(lv.group(1), 0) + 1
                            if lv.group(1) != "info" and len(samples) < 3:
                                samples.append(line.strip()[:400])
            except OSError:
                pass
        return {"statuses": statuses, "levels": levels, "samples": samples}

    def run_measured(self, target, scenario, latency_ms, concurrency, duration):
        """run_one, repeated once with a pool sized from the first attempt when the server outran its tokens."""
        result = self.run_one(target, scenario, latency_ms, concurrency, duration)
        if result["token_wraps"] and not self.args.smoke:
            # Reused tokens are refused, and would then be what is measured.
            log("  ran out of tokens; running again with a larger pool")
            key = (target.name, scenario)
            self.rate_seen[key] = max(self.rate_seen.get(key, 0), 2 * result["requests_per_second"])
            result = self.run_one(target, scenario, latency_ms, concurrency, duration)
        return result

    def run_one(self, target, scenario, latency_ms, concurrency, duration):
        method, path, calls, needs_tokens, _ = SCENARIOS[scenario]
        threads = max(1, min(self.args.wrk_threads, concurrency))
        log("%s: %s latency=%d ms concurrency=%d duration=%d s" % (target.label, scenario, latency_ms, concurrency, duration))
        self.set_latency(latency_ms)
        if needs_tokens:
            token_file, minted = self.mint_tokens(scenario, self.tokens_needed(target, scenario, latency_ms, concurrency, duration))
            script = os.path.join(WRK_DIR, "device_tokens.lua")
            script_args = [token_file, self.api_key, str(threads), path]
        else:
            token_file, minted = None, 0
            script = os.path.join(WRK_DIR, "jwks.lua")
            script_args = []

        # Let the previous run's connections drain and the machine settle.
        time.sleep(self.args.settle)
        before_counters = self.counters()
        apple0 = self.apple_call_metrics(target)
        timings0 = self.server_timings(target)
        self.truncate_server_log(target)
        pids = target.pids()
        hwm_reset = all([reset_peak_rss(pid) for pid in pids])
        cpu0 = sum(proc_cpu_seconds(pid) for pid in pids)
        pg_cpu0 = self.postgres.cpu_seconds() if target.ledger == "postgres" and self.postgres else None
        sandbox_cpu0 = proc_cpu_seconds(self.sandbox.pid)
        busy0, total0 = machine_cpu()
        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        threads_max, rss_max = 0, 0
        wrk_argv = ["wrk", "-t", str(threads), "-c", str(concurrency), "-d", "%ds" % duration, "--timeout", "30s",
                    "-s", script, target.url + (path if method == "GET" else "/")] + (["--"] + script_args if script_args else [])
        out_path = os.path.join(self.work, "wrk.out")
        err_path = os.path.join(self.work, "wrk.err")
        # Several replicas: each wrk thread connects to one of them in turn (wrk/spread.lua).
        wrk_env = dict(os.environ, TWOBITS_WRK_ADDRS=",".join("%s:%d" % a for a in target.addresses)) if len(target.addresses) > 1 else None
        wrk = self.procs.start("wrk", wrk_argv, stdout=open(out_path, "w"), stderr=open(err_path, "w"), env=wrk_env)
        deadline = time.monotonic() + duration + 60
        try:
            while wrk.poll() is None:
                if time.monotonic() > deadline:
                    raise BenchError("wrk did not finish within %d s" % (duration + 60))
                gone = target.exited()
                if gone is not None:
                    raise BenchError("%s exited (status %s) during the run:\n%s" % (
                        target.label, gone.returncode, tail(target.err_paths[target.procs.index(gone)])))
                st = procs_status(pids)
                threads_max = max(threads_max, st.get("Threads", 0))
                rss_max = max(rss_max, st.get("VmRSS", 0))
                time.sleep(0.2)
        finally:
            self.procs.stop(wrk)
            self.procs.children = [c for c in self.procs.children if c[1] is not wrk]
        cpu1 = sum(proc_cpu_seconds(pid) for pid in pids)
        pg_cpu1 = self.postgres.cpu_seconds() if pg_cpu0 is not None else None
        sandbox_cpu1 = proc_cpu_seconds(self.sandbox.pid)
        busy1, total1 = machine_cpu()
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk, reaped
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        st = procs_status(pids)
        threads_max = max(threads_max, st.get("Threads", 0))
        rss_max = max(rss_max, st.get("VmRSS", 0))
        peak_kb = st.get("VmHWM", 0) if hwm_reset else rss_max
        after_counters = self.counters()
        apple1 = self.apple_call_metrics(target)
        apple_count = apple1[1] - apple0[1]
        timings1 = self.server_timings(target)

        def mean_ms(name):
            count = timings1[name][1] - timings0[name][1]
            return round(1000.0 * (timings1[name][0] - timings0[name][0]) / count, 1) if count > 0 else None

        with open(out_path) as f:
            wrk_out = f.read()
        m = re.search(r"^BENCH_JSON (\{.*\})$", wrk_out, re.M)
        if wrk.returncode != 0 or not m:
            raise BenchError("wrk failed (status %s):\n%s\n%s" % (wrk.returncode, wrk_out[-2000:], tail(err_path)))
        w = json.loads(m.group(1))
        seconds = w["duration_us"] / 1e6
        requests = w["requests"]
        rps = requests / seconds if seconds > 0 else 0.0
        ideal = concurrency / (latency_ms / 1000.0 * calls) if latency_ms > 0 and calls > 0 else None
        e = w["errors"]
        socket_errors = e["connect"] + e["read"] + e["write"] + e["timeout"]
        apple_calls = sum(after_counters.get("calls", {}).values()) - sum(before_counters.get("calls", {}).values())
        cpu = cpu1 - cpu0
        ncpu = os.cpu_count() or 1
        wall_cpu = (total1 - total0) / CLK_TCK  # CPU-seconds available on all CPUs during the run
        machine_busy = 100.0 * (busy1 - busy0) / max(1, total1 - total0)
        wrk_cpu = (children1.ru_utime + children1.ru_stime) - (children0.ru_utime + children0.ru_stime)
        bench_cpu = (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime)
        sandbox_cpu = sandbox_cpu1 - sandbox_cpu0
        pg_cpu = (pg_cpu1 - pg_cpu0) if pg_cpu0 is not None and pg_cpu1 is not None else None
        ours = cpu + sandbox_cpu + wrk_cpu + bench_cpu + (pg_cpu or 0.0)
        other_pct = max(0.0, machine_busy - 100.0 * ours / max(1e-9, wall_cpu))
        logsum = self.server_log_summary(target)
        target.jwts += after_counters.get("distinct_developer_tokens", 0) - before_counters.get("distinct_developer_tokens", 0)
        result = {
            "server": target.name,
            "ledger": target.ledger,
            "replicas": target.replicas,
            "scenario": scenario,
            "route": SCENARIO_LABELS[scenario],
            "latency_ms": latency_ms,
            "concurrency": concurrency,
            "duration_s": round(seconds, 2),
            "wrk_threads": threads,
            "requests": requests,
            "requests_per_second": round(rps, 1),
            "latency_p50_ms": w["latency_us"]["p50"] / 1000.0,
            "latency_p90_ms": w["latency_us"]["p90"] / 1000.0,
            "latency_p99_ms": w["latency_us"]["p99"] / 1000.0,
            "latency_max_ms": w["latency_us"]["max"] / 1000.0,
            "non_2xx": e["status"],
            "socket_errors": socket_errors,
            "socket_error_detail": {k: e[k] for k in ("connect", "read", "write", "timeout")},
            "apple_calls_per_request": calls,
            "apple_calls_seen": apple_calls,  # by the sandbox; includes calls of requests still in flight when wrk stopped
            "sandbox_calls": diff_counts(before_counters.get("calls", {}), after_counters.get("calls", {})),  # by endpoint
            # The server's own view of its Apple calls (curl round trip, sandbox latency included).
            "apple_call_mean_ms": round(1000.0 * (apple1[0] - apple0[0]) / apple_count, 1) if apple_count > 0 else None,
            "apple_call_outcomes": diff_counts(apple0[2], apple1[2]),
            # The server's own view of its ledger calls (a group-commit write: queued, lingering, committed on the
            # ledger thread, back on the loop) and of whole requests (from dispatch to the answer given).
            "ledger_call_mean_ms": mean_ms("ledger"),
            "server_request_mean_ms": mean_ms("request"),
            "ideal_requests_per_second": round(ideal, 1) if ideal else None,
            "ratio_to_ideal": round(rps / ideal, 3) if ideal else None,
            "server_cpu_seconds": round(cpu, 3),
            "server_cpu_us_per_request": round(cpu / requests * 1e6, 1) if requests else None,
            "sandbox_cpu_us_per_request": round(sandbox_cpu / requests * 1e6, 1) if requests else None,
            # The PostgreSQL cluster's processes (postmaster and backends), when bench.py started it.
            "postgres_cpu_us_per_request": round(pg_cpu / requests * 1e6, 1) if requests and pg_cpu is not None else None,
            # What all CPUs could sustain at this run's CPU cost per request (server + sandbox + wrk): where the
            # ideal is above it, loopback on this machine cannot reach the ideal whatever Apple's latency.
            "cpu_limit_requests_per_second": round(ncpu * requests / (cpu + sandbox_cpu + wrk_cpu), 1) if requests and cpu + sandbox_cpu + wrk_cpu > 0 else None,
            "machine_cpu_busy_pct": round(machine_busy, 1),
            "cpu_share_pct": {  # of all CPUs, during the run
                "server": round(100.0 * cpu / max(1e-9, wall_cpu), 1),
                "sandbox": round(100.0 * sandbox_cpu / max(1e-9, wall_cpu), 1),
                "wrk": round(100.0 * wrk_cpu / max(1e-9, wall_cpu), 1),
                "postgres": round(100.0 * pg_cpu / max(1e-9, wall_cpu), 1) if pg_cpu is not None else None,
                "other_processes": round(other_pct, 1),
            },
            "server_peak_rss_mb": round(peak_kb / 1024.0, 1),
            "server_peak_rss_source": "VmHWM (reset per run)" if hwm_reset else "max sampled VmRSS",
            "server_threads_max": threads_max,
            "sandbox_rss_mb": round(proc_status(self.sandbox.pid).get("VmRSS", 0) / 1024.0, 1),
            # This server process's own (the sandbox's counter is shared by TwoBits and the peer).
            "developer_jwts_total": target.jwts,
            "developer_jwts_new": after_counters.get("distinct_developer_tokens", 0) - before_counters.get("distinct_developer_tokens", 0),
            "sandbox_statuses": diff_counts(before_counters.get("statuses", {}), after_counters.get("statuses", {})),
            "server_statuses": logsum["statuses"],
            "server_log_levels": logsum["levels"],
            "server_log_samples": logsum["samples"],
            "tokens_minted": minted,
            "token_wraps": w.get("token_wraps", 0),
        }
        if latency_ms == 0 and calls > 0:
            self.rate_seen[(target.name, scenario)] = max(self.rate_seen.get((target.name, scenario), 0), rps)
        log("  %.0f req/s%s, p50 %.1f ms, p99 %.1f ms, non-2xx %d, socket errors %d, %s us CPU/req, RSS %.0f MB, %d threads, "
            "machine %.0f%% busy (%.0f%% not ours), JWTs %s%s" % (
                rps, (" (%.0f%% of ideal %.0f)" % (100 * rps / ideal, ideal)) if ideal else "",
                result["latency_p50_ms"], result["latency_p99_ms"], e["status"], socket_errors,
                result["server_cpu_us_per_request"], result["server_peak_rss_mb"], threads_max, machine_busy, other_pct,
                result["developer_jwts_total"], ", TOKENS WRAPPED %d times" % result["token_wraps"] if result["token_wraps"] else ""))
        if result["server_request_mean_ms"] is not None:
            log("  server's own means: request %s ms, Apple call %s ms, ledger call %s ms" % (
                result["server_request_mean_ms"], result["apple_call_mean_ms"], result["ledger_call_mean_ms"]))
        if result["server_log_levels"].get("error") or result["server_log_levels"].get("warning"):
            log("  server logged: %s %s" % (result["server_log_levels"], result["server_log_samples"][:1]))
        if token_file:
            os.remove(token_file)
        return result

    def close(self):
        try:
            if getattr(self, "sandbox_http", None):
                self.sandbox_http.close()
        finally:
            self.procs.stop_all()
            if self.postgres:
                self.postgres.close()
            if not self.args.keep:
                shutil.rmtree(self.work, ignore_errors=True)
            else:
                log("kept %s" % self.work)


def compare_with_peer(result, peer):
    """Attaches the peer's run of the same scenario, latency and concurrency to TwoBits' row, with the ratios
    TwoBits ÷ peer: CPU per request (below 1: TwoBits spends less) and throughput (above 1: TwoBits serves more)."""
    result["peer"] = peer
    ours, theirs = result["server_cpu_us_per_request"], peer["server_cpu_us_per_request"]
    result["vs_peer"] = {
        "peer": peer["server"],
        "cpu_per_request_ratio": round(ours / theirs, 3) if ours and theirs else None,
        "throughput_ratio": round(result["requests_per_second"] / peer["requests_per_second"], 3) if peer["requests_per_second"] else None,
        "peak_rss_ratio": round(result["server_peak_rss_mb"] / peer["server_peak_rss_mb"], 3) if peer["server_peak_rss_mb"] else None,
    }


def diff_counts(before, after):
    out = {}
    for k, v in after.items():
        d = v - before.get(k, 0)
        if d:
            out[k] = d
    return out


# --------------------------------------------------------------------------------------------------
# ES256


def es256_bench(binary, seconds):
    """TwoBits' ES256Signer (Benchmarks/ES256Bench) against `openssl speed -seconds N ecdsap256`."""
    result = {"openssl_seconds": seconds}
    try:
        _, out, err = run_bounded(["openssl", "speed", "-seconds", str(seconds), "ecdsap256"], seconds * 4 + 60)
        m = re.search(r"256 bits ecdsa \(nistp256\)\s+\S+\s+\S+\s+([0-9.]+)\s+([0-9.]+)", out)
        if not m:
            raise BenchError("cannot parse openssl speed output: %s" % out[-500:])
        result["openssl_signs_per_second"] = float(m.group(1))
        result["openssl_verifies_per_second"] = float(m.group(2))
        _, version, _ = run_bounded(["openssl", "version"], 10)
        result["openssl_version"] = version.strip()
    except BenchError as error:
        result["error"] = str(error)
        return result

    bench_bin = find_es256_binary(binary)
    if not bench_bin:
        result["error"] = ("ES256Bench is not built: add `.executableTarget(name: \"ES256Bench\", dependencies: [\"TwoBitsCrypto\"], "
                           "path: \"Benchmarks/ES256Bench\")` to Package.swift, or set ES256BENCH_BIN")
        return result
    try:
        _, out, _ = run_bounded([bench_bin, "--seconds", str(seconds)], seconds * 10 + 60)
        ours = json.loads(out.strip().splitlines()[-1])
    except (BenchError, ValueError, IndexError) as error:
        result["error"] = "ES256Bench failed: %s" % error
        return result
    # Both rates are per CPU second (openssl speed counts user CPU time unless given -elapsed).
    result["twobits_signs_per_second"] = ours["signs_per_second"]
    result["twobits_signs_per_wall_second"] = ours.get("signs_per_wall_second")
    result["twobits_input_bytes"] = ours["input_bytes"]
    result["ratio"] = round(ours["signs_per_second"] / result["openssl_signs_per_second"], 3)
    result["binary"] = bench_bin
    return result


def find_es256_binary(twobits_bin):
    return find_bench_binary(twobits_bin, "ES256Bench", "ES256BENCH_BIN")


def find_bench_binary(twobits_bin, product, variable):
    """A micro-benchmark executable: `variable` from the environment, beside twobits, or built (bounded)."""
    candidates = [os.environ.get(variable, ""), os.path.join(os.path.dirname(twobits_bin), product)]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    # Not next to twobits: build it when the package declares it (bounded), in the same scratch path.
    try:
        with open(os.path.join(ROOT, "Package.swift")) as f:
            declared = product in f.read()
    except OSError:
        declared = False
    if not declared or not shutil.which("swift"):
        return None
    scratch = os.path.dirname(os.path.dirname(os.path.realpath(twobits_bin)))
    log("building %s (swift build -c release --product %s --scratch-path %s)" % (product, product, scratch))
    try:
        run_bounded(["swift", "build", "-c", "release", "--product", product, "--scratch-path", scratch], 900, cwd=ROOT)
    except BenchError as error:
        log("cannot build %s: %s" % (product, error))
        return None
    built = os.path.join(scratch, "release", product)
    return built if os.path.isfile(built) else None


# --------------------------------------------------------------------------------------------------
# App Attest


def app_attest_bench(binary, seconds):
    """CPU per App Attest attestation and assertion verification on a real capture (Benchmarks/AppAttestBench)."""
    bench_bin = find_bench_binary(binary, "AppAttestBench", "APPATTESTBENCH_BIN")
    if not bench_bin:
        return {"error": "AppAttestBench is not built (swift build -c release --product AppAttestBench)"}
    try:
        _, out, _ = run_bounded([bench_bin, "--seconds", str(seconds)], seconds * 10 + 60)
        result = json.loads(out.strip().splitlines()[-1])
    except (BenchError, ValueError, IndexError) as error:
        return {"error": "AppAttestBench failed: %s" % error}
    result["binary"] = bench_bin
    return result


# --------------------------------------------------------------------------------------------------
# Report


def fmt(v, digits=0, none="n/a"):
    if v is None:
        return none
    if isinstance(v, float):
        return ("%%.%df" % digits) % v
    return str(v)


def evaluate_targets(runs, es256, smoke, app_attest=None):
    """The issue's targets, each with what was measured and whether it was met."""
    checks = []

    # Throughput >= 90% of ideal with zero errors, wherever the CPU is not saturated: one row per scenario.
    for scenario in SCENARIOS:
        rs = [r for r in runs if r["scenario"] == scenario and r["ideal_requests_per_second"] is not None]
        if not rs:
            continue
        parts, verdicts = [], []
        for r in rs:
            saturated = r["machine_cpu_busy_pct"] >= SATURATED_PCT
            errors = r["non_2xx"] + r["socket_errors"]
            ok = r["ratio_to_ideal"] >= THROUGHPUT_TARGET and errors == 0
            parts.append("%d ms c=%d %.0f%%%s%s" % (r["latency_ms"], r["concurrency"], 100 * r["ratio_to_ideal"],
                                                  " (%d errors)" % errors if errors else "", "*" if saturated else ""))
            verdicts.append(True if ok else (None if saturated and errors == 0 else False))
        # Met only when every run met it; n/a when the rest were CPU-saturated without errors.
        met = False if False in verdicts else (True if all(v is True for v in verdicts) else None)
        checks.append({
            "target": "throughput >= 90%% of ideal, zero errors, where the CPU is not saturated (%s)" % scenario,
            "run": "%s, %d runs" % (scenario, len(rs)),
            "measured": "; ".join(parts),
            "met": met,
            "note": "* = machine >= %.0f%% busy (CPU-saturated, target not applicable)" % SATURATED_PCT if any(
                r["machine_cpu_busy_pct"] >= SATURATED_PCT for r in rs) else "",
        })
    # Errors anywhere (also at 0 ms, where there is no ideal).
    for r in runs:
        if r["ideal_requests_per_second"] is None and (r["non_2xx"] or r["socket_errors"]):
            checks.append({"target": "zero errors", "run": "%s %d ms c=%d" % (r["scenario"], r["latency_ms"], r["concurrency"]),
                           "measured": "%d non-2xx, %d socket errors" % (r["non_2xx"], r["socket_errors"]), "met": False, "note": ""})
    # CPU per request at 0 ms.
    for scenario, limit in CPU_TARGET_US.items():
        rs = [r for r in runs if r["scenario"] == scenario and r["latency_ms"] == 0 and r["server_cpu_us_per_request"] is not None]
        if not rs:
            continue
        best = min(r["server_cpu_us_per_request"] for r in rs)
        worst = max(r["server_cpu_us_per_request"] for r in rs)
        checks.append({"target": "server CPU per request at 0 ms <= %d us (%s)" % (limit, scenario), "run": "%s 0 ms" % scenario,
                       "measured": "%.0f-%.0f us" % (best, worst), "met": worst <= limit, "note": ""})
    checks.extend(issue8_targets(runs))
    # Peak RSS at 2,048 in flight (the server restarts per scenario, so each scenario's peak is its own).
    rs = [r for r in runs if r["concurrency"] >= 2048]
    if rs:
        peaks, peer_peaks = {}, {}
        for r in rs:
            peaks[r["scenario"]] = max(peaks.get(r["scenario"], 0), r["server_peak_rss_mb"])
            if r.get("peer"):
                peer_peaks[r["scenario"]] = max(peer_peaks.get(r["scenario"], 0), r["peer"]["server_peak_rss_mb"])
        checks.append({"target": "peak RSS <= %d MB with 2,048 in flight" % RSS_TARGET_MB, "run": "c=2048, per scenario",
                       "measured": ", ".join("%s %.0f MB%s" % (k, v, " (Go %.0f MB)" % peer_peaks[k] if k in peer_peaks else "")
                                             for k, v in peaks.items()),
                       "met": max(peaks.values()) <= RSS_TARGET_MB, "note": ""})
    # Threads independent of concurrency.
    concurrencies = sorted(set(r["concurrency"] for r in runs))
    if len(concurrencies) > 1:
        by_c = {c: max(r["server_threads_max"] for r in runs if r["concurrency"] == c) for c in concurrencies}
        lo = min(by_c.values())
        hi = max(by_c.values())
        checks.append({"target": "thread count independent of concurrency", "run": "all",
                       "measured": ", ".join("c=%d: %d" % (c, by_c[c]) for c in concurrencies),
                       "met": hi <= lo + 2, "note": ""})
    # One developer JWT per server process (the sandbox's counters are zeroed when the server starts).
    jwt_runs = [r for r in runs if r["apple_calls_per_request"] > 0]
    if jwt_runs:
        per = {}
        for r in jwt_runs:
            per[r["scenario"]] = max(per.get(r["scenario"], 0), r["developer_jwts_total"] or 0)
        checks.append({"target": "exactly one developer JWT per refresh period, whatever the load", "run": "per server process",
                       "measured": ", ".join("%s %d" % (k, v) for k, v in per.items()) + " distinct JWTs seen by the sandbox",
                       "met": all(v == 1 for v in per.values()), "note": ""})
    # ES256.
    if es256 and not smoke:
        if "ratio" in es256:
            checks.append({"target": "ES256 signing >= 80% of OpenSSL (one core)", "run": "ES256Bench",
                           "measured": "%.0f vs %.0f sign/s = %.0f%%" % (es256["twobits_signs_per_second"], es256["openssl_signs_per_second"], 100 * es256["ratio"]),
                           "met": es256["ratio"] >= ES256_TARGET, "note": ""})
        else:
            checks.append({"target": "ES256 signing >= 80% of OpenSSL (one core)", "run": "ES256Bench",
                           "measured": es256.get("error", "not run"), "met": None, "note": ""})
    # App Attest (issue 11): CPU per verification, one core.
    if app_attest and not smoke:
        for key, target, what in (("attestation_us", ATTESTATION_TARGET_US, "attestation"), ("assertion_us", ASSERTION_TARGET_US, "assertion")):
            measured = app_attest.get(key)
            checks.append({"target": "App Attest %s verification <= %d us CPU" % (what, target), "run": "AppAttestBench",
                           "measured": ("%.0f us" % measured) if measured is not None else app_attest.get("error", "not run"),
                           "met": (measured <= target) if measured is not None else None,
                           "note": "floor: one P-384 verification (openssl speed ecdsap384)" if what == "attestation" else ""})
    # Harness sanity: tokens must not have run out (for TwoBits or the peer).
    for r in runs:
        for name, x in (("", r), ("Go peer, ", r.get("peer"))):
            if x and x["token_wraps"]:
                checks.append({"target": "harness: pre-minted tokens suffice", "run": "%s%s %d ms c=%d" % (name, r["scenario"], r["latency_ms"], r["concurrency"]),
                               "measured": "wrapped %d times (reused tokens are refused)" % x["token_wraps"], "met": False, "note": ""})
    return checks


def median(values):
    """The middle value (the mean of the two middle ones for an even count); None for no values."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def issue8_targets(runs):
    """Issue 8's targets at 256 connections: TwoBits against the Go peer, and CPU per request in absolute terms.
    Listed only when the run has the row they are measured on. A row raced several times (`--repeat`) is judged on
    the median of its races: one race on this machine moves by about 10 %, as much as the targets' margins."""
    checks = []

    def rows(scenario, latency):
        return [r for r in runs if r["scenario"] == scenario and r["latency_ms"] == latency
                and r["concurrency"] == PEER_TARGET_CONCURRENCY]

    def spread(values, digits):
        """"0.86 x" for one value; "median 0.86 x of 6 races (0.82-0.92)" for several."""
        if len(values) == 1:
            return "%s x" % fmt(values[0], digits)
        return "median %s x of %d races (%s-%s)" % (fmt(median(values), digits), len(values), fmt(min(values), digits),
                                                   fmt(max(values), digits))

    for scenario, latency in PEER_TARGET_RUNS:
        rs = rows(scenario, latency)
        if not rs:
            continue
        where = "%s %d ms c=%d" % (scenario, latency, PEER_TARGET_CONCURRENCY)
        cpu_target = "server CPU per request <= %.1f x Go's (%s, %d ms)" % (PEER_CPU_RATIO_TARGET, scenario, latency)
        rps_target = "throughput >= Go's (%s, %d ms)" % (scenario, latency)
        raced = [r for r in rs if r.get("vs_peer")]
        if not raced:
            for target in (cpu_target, rps_target):
                checks.append({"target": target, "run": where, "measured": "no Go peer in this run (--no-peer)", "met": None, "note": ""})
            continue
        # Errors on either side make the comparison say little: name them next to the verdict.
        errors = []
        for r in raced:
            for name, x in (("TwoBits", r), ("Go", r["peer"])):
                if x["non_2xx"] or x["socket_errors"]:
                    errors.append("%s: %d non-2xx, %d socket errors" % (name, x["non_2xx"], x["socket_errors"]))
        ratios = [r["vs_peer"]["cpu_per_request_ratio"] for r in raced if r["vs_peer"]["cpu_per_request_ratio"] is not None]
        ratio = median(ratios)
        ours = median(r["server_cpu_us_per_request"] for r in raced)
        theirs = median(r["peer"]["server_cpu_us_per_request"] for r in raced)
        checks.append({"target": cpu_target, "run": where,
                       "measured": "%s vs %s us = %s" % (fmt(ours), fmt(theirs), spread(ratios, 2)) if ratios else
                                   "%s vs %s us" % (fmt(ours), fmt(theirs)),
                       "met": None if ratio is None else ratio <= PEER_CPU_RATIO_TARGET, "note": "; ".join(errors)})
        ratios = [r["vs_peer"]["throughput_ratio"] for r in raced if r["vs_peer"]["throughput_ratio"] is not None]
        ratio = median(ratios)
        checks.append({"target": rps_target, "run": where,
                       "measured": "%.0f vs %.0f req/s = %s" % (median(r["requests_per_second"] for r in raced),
                                                               median(r["peer"]["requests_per_second"] for r in raced),
                                                               spread(ratios, 2) if ratios else "n/a"),
                       "met": None if ratio is None else ratio >= PEER_THROUGHPUT_RATIO_TARGET, "note": "; ".join(errors)})
    for scenario, limit in CPU_TARGET_US_AT_256.items():
        rs = [r for r in rows(scenario, 0) if r["server_cpu_us_per_request"] is not None]
        if not rs:
            continue
        values = [r["server_cpu_us_per_request"] for r in rs]
        value = median(values)
        measured = "%.0f us" % value if len(values) == 1 else "median %.0f us of %d runs (%.0f-%.0f)" % (
            value, len(values), min(values), max(values))
        peers = [r["peer"]["server_cpu_us_per_request"] for r in rs if r.get("peer")]
        if peers:
            measured += " (Go %s us)" % fmt(median(peers))
        checks.append({"target": "server CPU per request at 0 ms <= %d us (%s, c=%d)" % (limit, scenario, PEER_TARGET_CONCURRENCY),
                       "run": "%s 0 ms c=%d" % (scenario, PEER_TARGET_CONCURRENCY),
                       "measured": measured, "met": value <= limit, "note": ""})
    return checks


def markdown(report):
    m = report["machine"]
    lines = []
    lines.append("Measured %s on %s (%s logical CPUs, `nproc` %s; %s GB RAM), %s, kernel %s, %s; "
                 "load average %.1f at start. Every run shares the machine: wrk, the sandbox and the server." % (
                     report["finished_at"], m["cpu_model"], m["nproc"], m["nproc_available"], m["memory_gb"], m["os"], m["kernel"],
                     m["wrk"] or "wrk", m["loadavg_at_start"]))
    lines.append("")
    others = sorted(r["cpu_share_pct"]["other_processes"] for r in report["runs"])
    lines.append("Each run lasts %d s; bench.py took %.0f s in all (%.0f s of it minting sandbox tokens). The server is restarted "
                 "for each scenario (peak RSS, threads and developer JWTs are per scenario)." % (
        report["duration_s"], report["elapsed_s"], report["token_minting_s"]))
    if others:
        lines.append("Processes other than the server, the sandbox, wrk and bench.py took %.0f-%.0f %% (median %.0f %%) of the "
                     "machine's CPU during the runs; the \"not ours\" figure in brackets is per run." % (
                         others[0], others[-1], others[len(others) // 2]))
    lines.append("")
    lines.append("| Scenario | Apple latency | Conc. | req/s | Ideal req/s | Ratio | p50 ms | p99 ms | max ms | non-2xx | socket err | CPU µs/req | machine CPU (not ours) | peak RSS MB | threads | dev JWTs |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    repeated = any(r.get("race", 1) > 1 for r in report["runs"])

    def conc(r):
        """The row's concurrency, and which race it was when rows were raced several times."""
        return "%d" % r["concurrency"] + (" (race %d)" % r.get("race", 1) if repeated else "")

    for r in report["runs"]:
        lines.append("| %s | %d ms | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %s%% (%s%%) | %s | %d | %s |" % (
            r["route"], r["latency_ms"], conc(r), fmt(r["requests_per_second"]), fmt(r["ideal_requests_per_second"]),
            ("%.0f%%" % (100 * r["ratio_to_ideal"])) if r["ratio_to_ideal"] is not None else "n/a",
            fmt(r["latency_p50_ms"], 1), fmt(r["latency_p99_ms"], 1), fmt(r["latency_max_ms"], 0),
            r["non_2xx"], r["socket_errors"], fmt(r["server_cpu_us_per_request"], 0), fmt(r["machine_cpu_busy_pct"], 0),
            fmt(r["cpu_share_pct"]["other_processes"], 0), fmt(r["server_peak_rss_mb"], 0), r["server_threads_max"], fmt(r["developer_jwts_total"])))
    lines.append("")
    paired = [r for r in report["runs"] if r.get("peer")]
    if paired:
        p = report.get("peer") or {}
        lines.append("Against the Go peer (`Benchmarks/GoPeer`, %s; the same routes with Go's standard library and no reuse ledger "
                     "or audit, behind the same sandbox, under the same wrk load with its own fresh tokens, run back to back with "
                     "TwoBits). Ratios are TwoBits ÷ Go: CPU below 1 and req/s above 1 favour TwoBits." % (p.get("version") or "go"))
        lines.append("")
        lines.append("| Scenario | Apple latency | Conc. | TwoBits req/s | Go req/s | req/s ratio | TwoBits CPU µs/req | Go CPU µs/req | CPU ratio "
                     "| TwoBits p99 ms | Go p99 ms | TwoBits peak RSS MB | Go peak RSS MB | Go threads | Go non-2xx + socket err |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in paired:
            g, v = r["peer"], r["vs_peer"]
            lines.append("| %s | %d ms | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |" % (
                r["route"], r["latency_ms"], conc(r), fmt(r["requests_per_second"]), fmt(g["requests_per_second"]),
                fmt(v["throughput_ratio"], 2), fmt(r["server_cpu_us_per_request"], 0), fmt(g["server_cpu_us_per_request"], 0),
                fmt(v["cpu_per_request_ratio"], 2), fmt(r["latency_p99_ms"], 1), fmt(g["latency_p99_ms"], 1),
                fmt(r["server_peak_rss_mb"], 0), fmt(g["server_peak_rss_mb"], 0), g["server_threads_max"],
                g["non_2xx"] + g["socket_errors"]))
        lines.append("")
    e = report.get("es256")
    if e:
        if "ratio" in e:
            lines.append("ES256 on one core, per CPU second: TwoBits `ES256Signer` %.0f sign/s (signing input %d bytes, SHA-256 included) vs "
                         "`openssl speed -seconds %d ecdsap256` %.0f sign/s (%s): **%.0f%%** of OpenSSL." % (
                             e["twobits_signs_per_second"], e["twobits_input_bytes"], e["openssl_seconds"], e["openssl_signs_per_second"],
                             e.get("openssl_version", "OpenSSL"), 100 * e["ratio"]))
        else:
            lines.append("ES256: %s" % e.get("error", "not run"))
        lines.append("")
    a = report.get("app_attest")
    if a:
        if "attestation_us" in a:
            lines.append("App Attest on one core, CPU per verification of a real capture (%s): attestation %.0f us, assertion %.0f us "
                         "(%.0f us with the key already parsed)." % (os.path.basename(str(a.get("fixture", "?"))), a["attestation_us"], a["assertion_us"],
                                                                     a.get("assertion_parsed_key_us", float("nan"))))
        else:
            lines.append("App Attest: %s" % a.get("error", "not run"))
        lines.append("")
    lines.append("| Target | Where | Measured | Met |")
    lines.append("|---|---|---|---|")
    for c in report["targets"]:
        met = {True: "yes", False: "**no**", None: "n/a"}[c["met"]]
        lines.append("| %s | %s | %s%s | %s |" % (c["target"], c["run"], c["measured"], (" (%s)" % c["note"]) if c["note"] else "", met))
    lines.append("")
    return "\n".join(lines)


def ledger_targets(rows):
    """Issue 9's targets from a --compare-ledgers run: PostgreSQL against SQLite, two replicas against one."""
    checks = []
    for row in rows:
        rs = row["results"]
        lite, pg, two = rs.get("sqlite"), rs.get("postgres"), rs.get("postgres-x2")
        where = "%s %d ms c=%d" % (row["scenario"], row["latency_ms"], row["concurrency"])

        def errors(*xs):
            return "; ".join("%s: %d non-2xx, %d socket errors" % (x["server"], x["non_2xx"], x["socket_errors"])
                             for x in xs if x and (x["non_2xx"] or x["socket_errors"]))

        if lite and pg:
            ratio = pg["requests_per_second"] / lite["requests_per_second"] if lite["requests_per_second"] else None
            checks.append({"target": "PostgreSQL throughput >= %.0f%% of SQLite's" % (100 * LEDGER_THROUGHPUT_RATIO_TARGET), "run": where,
                           "measured": "%.0f vs %.0f req/s = %s x" % (pg["requests_per_second"], lite["requests_per_second"], fmt(ratio, 2)),
                           "met": None if ratio is None else ratio >= LEDGER_THROUGHPUT_RATIO_TARGET, "note": errors(lite, pg)})
            a, b = pg["server_cpu_us_per_request"], lite["server_cpu_us_per_request"]
            ratio = a / b if a and b else None
            checks.append({"target": "PostgreSQL CPU per request (TwoBits process) <= %.1f x SQLite's" % LEDGER_CPU_RATIO_TARGET, "run": where,
                           "measured": "%s vs %s us = %s x" % (fmt(a), fmt(b), fmt(ratio, 2)),
                           "met": None if ratio is None else ratio <= LEDGER_CPU_RATIO_TARGET,
                           "note": "PostgreSQL itself %s us/req" % fmt(pg.get("postgres_cpu_us_per_request"))})
        if pg and two:
            ratio = two["requests_per_second"] / pg["requests_per_second"] if pg["requests_per_second"] else None
            checks.append({"target": "two replicas on one PostgreSQL serve at least as much as one", "run": where,
                           "measured": "%.0f vs %.0f req/s = %s x" % (two["requests_per_second"], pg["requests_per_second"], fmt(ratio, 2)),
                           "met": None if ratio is None else ratio >= REPLICAS_THROUGHPUT_RATIO_TARGET,
                           "note": "machine %s%% busy with two, %s%% with one%s" % (
                               fmt(two["machine_cpu_busy_pct"]), fmt(pg["machine_cpu_busy_pct"]),
                               "; " + errors(pg, two) if errors(pg, two) else "")})
    return checks


LEDGER_LABELS = {"sqlite": "SQLite", "postgres": "PostgreSQL", "postgres-x2": "2 replicas, one PostgreSQL"}


def ledger_markdown(report):
    """The --compare-ledgers table: per scenario, SQLite, PostgreSQL and two replicas, with ratios to SQLite."""
    m = report["machine"]
    lines = ["Measured %s on %s (%s logical CPUs, `nproc` %s), %s; load average %.1f at start. Each run lasts %d s; "
             "wrk, the sandbox, PostgreSQL and the server(s) share the machine. With two replicas the wrk threads "
             "alternate between their ports (`wrk/spread.lua`) and CPU, RSS and threads are the two processes' sums. "
             "PostgreSQL: bench.py's own throw-away cluster (`.ci/postgres.sh`: fsync off, synchronous_commit off), "
             "a fresh database per target." % (
                 report["finished_at"], m["cpu_model"], m["nproc"], m["nproc_available"], m["os"], m["loadavg_at_start"],
                 report["duration_s"]), ""]
    lines.append("| Scenario | Apple latency | Conc. | Ledger | req/s | ×SQLite | p50 ms | p99 ms | non-2xx | socket err "
                 "| TwoBits CPU µs/req | ×SQLite | PostgreSQL CPU µs/req | machine CPU (PostgreSQL share) | peak RSS MB | threads | dev JWTs |")
    lines.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in report["ledger_comparison"]:
        lite = row["results"].get("sqlite")
        for name, r in row["results"].items():
            rps_ratio = r["requests_per_second"] / lite["requests_per_second"] if lite and lite["requests_per_second"] else None
            cpu_ratio = (r["server_cpu_us_per_request"] / lite["server_cpu_us_per_request"]
                         if lite and r["server_cpu_us_per_request"] and lite["server_cpu_us_per_request"] else None)
            pg_share = r["cpu_share_pct"].get("postgres")
            lines.append("| %s | %d ms | %d | %s | %s | %s | %s | %s | %d | %d | %s | %s | %s | %s%% (%s) | %s | %d | %s |" % (
                r["route"], r["latency_ms"], r["concurrency"], LEDGER_LABELS.get(name, name), fmt(r["requests_per_second"]),
                fmt(rps_ratio, 2), fmt(r["latency_p50_ms"], 1), fmt(r["latency_p99_ms"], 1), r["non_2xx"], r["socket_errors"],
                fmt(r["server_cpu_us_per_request"], 0), fmt(cpu_ratio, 2), fmt(r.get("postgres_cpu_us_per_request"), 0),
                fmt(r["machine_cpu_busy_pct"], 0), "%.0f%%" % pg_share if pg_share is not None else "-", fmt(r["server_peak_rss_mb"], 0),
                r["server_threads_max"], fmt(r["developer_jwts_total"])))
    lines.append("")
    lines.append("| Target | Where | Measured | Met |")
    lines.append("|---|---|---|---|")
    for c in report["targets"]:
        met = {True: "yes", False: "**no**", None: "n/a"}[c["met"]]
        lines.append("| %s | %s | %s%s | %s |" % (c["target"], c["run"], c["measured"], (" (%s)" % c["note"]) if c["note"] else "", met))
    if report.get("failure"):
        lines.append("")
        lines.append("FAILED: %s" % report["failure"])
    lines.append("")
    return "\n".join(lines)


def write_report(report, table, output):
    """Writes the report as JSON to `output` and its table as Markdown beside it, prints the table."""
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w") as f:
        json.dump(report, f, indent=2)
    md_path = os.path.splitext(output)[0] + ".md"
    with open(md_path, "w") as f:
        f.write(table)
    print(table)
    log("wrote %s and %s in %.0f s" % (os.path.relpath(output, ROOT) if output.startswith(ROOT) else output,
                                       os.path.basename(md_path), report["elapsed_s"]))


def write_readme(table, start_marker=README_START, end_marker=README_END, heading="Latest results"):
    try:
        with open(README) as f:
            text = f.read()
    except FileNotFoundError:
        text = "# TwoBits benchmarks\n"
    if start_marker not in text or end_marker not in text:
        text = text.rstrip("\n") + "\n\n## %s\n\n%s\n%s\n" % (heading, start_marker, end_marker)
    start = text.index(start_marker) + len(start_marker)
    end = text.index(end_marker)
    text = text[:start] + "\n" + table + text[end:]
    with open(README, "w") as f:
        f.write(text)
    log("updated %s" % os.path.relpath(README, ROOT))


# --------------------------------------------------------------------------------------------------
# main


def parse_list(text, kind, allowed=None):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if allowed is not None:
        for x in items:
            if x not in allowed:
                raise SystemExit("bench.py: unknown %s %r (choose from %s)" % (kind, x, ", ".join(allowed)))
        return items
    try:
        return [int(x) for x in items]
    except ValueError:
        raise SystemExit("bench.py: --%s takes comma-separated whole numbers" % kind)


def main(argv):
    p = argparse.ArgumentParser(description="TwoBits load benchmark (see Benchmarks/README.md)")
    p.add_argument("--duration", type=int, default=8, help="seconds per run (default 8)")
    p.add_argument("--smoke", action="store_true", help="one 3 s run per scenario at 50 ms, concurrency 64; fails on any error")
    p.add_argument("--scenarios", help="comma-separated: " + ", ".join(SCENARIOS) + " (default all; fallback,claim with --compare-ledgers)")
    p.add_argument("--latencies", help="sandbox latencies in ms (default 0,50,200; 50 with --compare-ledgers)")
    p.add_argument("--concurrency", help="connections (default 64,256,512,2048; 512 with --compare-ledgers)")
    p.add_argument("--ledger", choices=["sqlite", "postgres"], default="sqlite",
                   help="TwoBits' ledger (default sqlite); postgres: a cluster of bench.py's own (.ci/postgres.sh) or --postgres")
    p.add_argument("--postgres", metavar="URI", help="run PostgreSQL targets against this cluster instead of starting one")
    p.add_argument("--replicas", type=int, default=1, help="twobits serve processes on one configuration (needs --ledger postgres)")
    p.add_argument("--database-pool-size", type=int, help="database_pool_size in the configuration (default: the service's)")
    p.add_argument("--database-pipelines", type=int, help="database_pipelines in the configuration (default: the service's)")
    p.add_argument("--replica-pipelines", type=int,
                   help="database_pipelines of each replica when there are several (default: --database-pipelines, or the service's 2, divided among them)")
    p.add_argument("--replica-threads", type=int,
                   help="server.threads of each replica when there are several (default: --server-threads divided among them)")
    p.add_argument("--compare-ledgers", action="store_true",
                   help="issue 9: only TwoBits on SQLite, on PostgreSQL and two replicas on one PostgreSQL, back to back "
                        "(fallback and claim at 50 ms, 512 connections; no Go peer); writes results/ledgers.json")
    p.add_argument("--write-readme", action="store_true", help="replace the results section of Benchmarks/README.md")
    p.add_argument("--no-es256", action="store_true", help="skip the ES256 and App Attest micro-benchmarks")
    p.add_argument("--es256-seconds", type=int, default=3)
    p.add_argument("--wrk-threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--server-threads", type=int, default=2, help="server.threads in the configuration (default 2)")
    p.add_argument("--wake-coalescing-us", type=int, help="server.wake_coalescing_us in the configuration "
                   "(default: the service's)")
    p.add_argument("--repeat", type=int, default=1,
                   help="run the whole bench this many times, each from a fresh sandbox and fresh servers (default 1); "
                        "issue 8's targets are judged on the median of a row's races")
    p.add_argument("--settle", type=float, default=1.0, help="seconds to pause before each run")
    p.add_argument("--output", help="JSON report path (default results/latest.json; results/ledgers.json with --compare-ledgers)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, configuration)")
    p.add_argument("--peer", choices=["go"], help="race each fallback, claim and JWKS run against this peer "
                   "(default: go, except with --smoke)")
    p.add_argument("--no-peer", action="store_true", help="TwoBits alone (no Go needed)")
    args = p.parse_args(argv)
    # The smoke run (what `make test` runs) must not need Go: no peer there unless asked for.
    peer = None if args.no_peer else (args.peer or (None if args.smoke else "go"))
    compare = args.compare_ledgers
    if compare:
        peer = None
        args.no_es256 = True
    if args.replicas < 1 or args.replicas > 8:
        raise SystemExit("bench.py: --replicas must be 1-8")
    if args.replicas > 1 and args.ledger != "postgres" and not compare:
        raise SystemExit("bench.py: replicas share one ledger: --replicas needs --ledger postgres")
    if args.output is None:
        args.output = os.path.join(RESULTS_DIR, "ledgers.json" if compare else "latest.json")

    scenarios = parse_list(args.scenarios or ("fallback,claim" if compare else ",".join(SCENARIOS)), "scenario", list(SCENARIOS))
    latencies = parse_list(args.latencies or ("50" if compare else "0,50,200"), "latencies")
    concurrencies = parse_list(args.concurrency or ("512" if compare else "64,256,512,2048"), "concurrency")
    duration = args.duration
    if args.smoke:
        latencies, concurrencies, duration = [50], [64], 3
        # Several replicas: a wrk thread per replica at least.
        args.wrk_threads = max(args.wrk_threads, args.replicas)
        args.no_es256 = True
        args.settle = min(args.settle, 0.3)
    if args.repeat < 1 or args.repeat > 20:
        raise SystemExit("bench.py: --repeat must be 1-20")
    if duration < 1 or duration > 600:
        raise SystemExit("bench.py: --duration must be 1-600")
    if any(c < 1 or c > 10000 for c in concurrencies) or any(l < 0 or l > 60000 for l in latencies):
        raise SystemExit("bench.py: concurrency must be 1-10000 and latency 0-60000 ms")

    binary = os.environ.get("TWOBITS_BIN") or os.path.join(ROOT, ".build", "release", "twobits")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise SystemExit("bench.py: no twobits binary at %s (run `make release` or set TWOBITS_BIN)" % binary)
    for tool in ("wrk", "openssl"):
        if not shutil.which(tool):
            raise SystemExit("bench.py: %s is not installed (apt-get install -y %s, or .ci/install-deps.sh --bench)" % (tool, tool))
    if peer and not any(s in PEER_SCENARIOS for s in scenarios):
        peer = None
    peer_binary, peer_version = None, None
    if peer == "go":
        try:
            peer_binary, peer_version = build_go_peer()
        except BenchError as error:
            raise SystemExit("bench.py: cannot build the Go peer: %s" % error)

    # SIGTERM/SIGHUP unwind through the finally blocks like Ctrl-C.
    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    started = time.monotonic()
    machine = machine_description()
    es256 = None
    if not args.no_es256:
        log("ES256 micro-benchmark (openssl speed, then TwoBits' signer; %d s each)" % args.es256_seconds)
        es256 = es256_bench(binary, args.es256_seconds)
        if "ratio" in es256:
            log("  TwoBits %.0f sign/s, OpenSSL %.0f sign/s: %.0f%%" % (es256["twobits_signs_per_second"], es256["openssl_signs_per_second"], 100 * es256["ratio"]))
        else:
            log("  %s" % es256.get("error"))

    app_attest = None
    if not args.no_es256 and not args.smoke:
        log("App Attest micro-benchmark (AppAttestBench, %d s each)" % args.es256_seconds)
        app_attest = app_attest_bench(binary, args.es256_seconds)
        log("  %s" % ({k: app_attest[k] for k in ("attestation_us", "assertion_us", "assertion_parsed_key_us") if k in app_attest} or app_attest.get("error")))

    runs = []
    ledger_rows = []  # --compare-ledgers: {"scenario", "latency_ms", "concurrency", "results": {target: run}}
    failure = None
    token_seconds = 0.0
    server_err = peer_err = ""
    try:
        row = 0
        for race in range(args.repeat):
            # Each race is a bench of its own: a fresh sandbox (its token table grows with every run), fresh
            # servers and ledgers, as a separate invocation would have.
            bench = Bench(args, binary, peer_binary)
            try:
                bench.setup()
                # 0 ms first: it shows each scenario's CPU-bound rate, which sizes the token pools of later runs.
                for scenario in scenarios:
                    bench.start_servers(scenario)
                    targets = bench.targets(scenario)
                    for latency in sorted(latencies):
                        for concurrency in concurrencies:
                            # The peer races TwoBits back to back under the same load; who goes first alternates,
                            # so drift during the bench (the sandbox's growing token table, other load) favours neither.
                            order = targets if row % 2 == 0 else targets[::-1]
                            row += 1
                            results = {t.name: bench.run_measured(t, scenario, latency, concurrency, duration) for t in order}
                            if compare:
                                ledger_rows.append({"scenario": scenario, "latency_ms": latency, "concurrency": concurrency,
                                                    "results": {t.name: results[t.name] for t in targets}})
                                continue
                            result = results["twobits"]
                            result["race"] = race + 1
                            if "go" in results:
                                compare_with_peer(result, results["go"])
                            runs.append(result)
            finally:
                server_err = tail(bench.twobits.err_path) if bench.twobits else ""
                peer_err = tail(bench.peer.err_path) if bench.peer else ""
                token_seconds += bench.token_seconds
                bench.close()
    except BenchError as error:
        failure = str(error)
        log("FAILED: %s" % failure)
    except KeyboardInterrupt as error:
        failure = "interrupted (%s)" % (error or "Ctrl-C")
        log(failure)

    report = {
        "finished_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": round(time.monotonic() - started, 1),
        "token_minting_s": round(token_seconds, 1),
        "smoke": args.smoke,
        "duration_s": duration,
        "machine": machine,
        "binary": binary,
        "peer": {"name": peer, "binary": peer_binary, "version": peer_version,
                 "scenarios": [s for s in scenarios if s in PEER_SCENARIOS]} if peer else None,
        "es256": es256,
        "app_attest": app_attest,
        "ledger": "compare" if compare else args.ledger,
        "replicas": args.replicas,
        "runs": runs,
        "ledger_comparison": ledger_rows,
        "failure": failure,
        "server_stderr_tail": server_err,
        "peer_stderr_tail": peer_err,
    }
    if compare:
        report["targets"] = ledger_targets(ledger_rows)
        table = ledger_markdown(report)
    else:
        report["targets"] = evaluate_targets(runs, es256, args.smoke, app_attest)
        table = markdown(report)
    write_report(report, table, args.output)
    if args.write_readme and not failure and not args.smoke:
        if compare:
            write_readme(table, LEDGERS_START, LEDGERS_END, "Ledgers: SQLite, PostgreSQL, two replicas")
        else:
            write_readme(table)

    if failure:
        return 1
    if args.smoke:
        problems = []
        # Comparing ledgers, every target's runs are checked alike.
        checked = runs + [r for row in ledger_rows for r in row["results"].values()]
        for r in checked:
            if r["non_2xx"] or r["socket_errors"]:
                problems.append("%s: %d non-2xx, %d socket errors (server statuses %s)" % (r["scenario"], r["non_2xx"], r["socket_errors"], r["server_statuses"]))
            if r["token_wraps"]:
                problems.append("%s: ran out of pre-minted tokens" % r["scenario"])
            peer = r.get("peer")
            if peer and (peer["non_2xx"] or peer["socket_errors"] or peer["token_wraps"] or not peer["requests"]):
                problems.append("%s, Go peer: %d non-2xx, %d socket errors, %d token wraps, %d requests (statuses %s)" % (
                    r["scenario"], peer["non_2xx"], peer["socket_errors"], peer["token_wraps"], peer["requests"], peer["server_statuses"]))
            if r["requests"] == 0:
                problems.append("%s: no requests completed" % r["scenario"])
        # One developer JWT per refresh period per process: a replica signs its own.
        for server in sorted(set(r["server"] for r in checked)):
            replicas = max(r["replicas"] for r in checked if r["server"] == server)
            jwts = max([r["developer_jwts_total"] or 0 for r in checked if r["server"] == server] or [0])
            if any(SCENARIOS[s][2] for s in scenarios) and jwts != replicas:
                problems.append("%s: the sandbox saw %d distinct developer JWTs, not %d" % (server, jwts, replicas))
        expected = len(scenarios) * (3 if compare else 1) * args.repeat
        if len(checked) != expected:
            problems.append("only %d of %d runs completed" % (len(checked), expected))
        if problems:
            for problem in problems:
                log("SMOKE FAILED: " + problem)
            return 1
        log("smoke OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

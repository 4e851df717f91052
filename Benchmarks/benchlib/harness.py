"""The bench's world: the sandbox (Apple, emulated), the servers under load (`twobits serve`, its replicas, the
Go peer) with their configuration, and the pools of fresh device tokens wrk sends."""

import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from . import load, metrics
from .common import BenchError, log
from .httpclient import Http
from .link import AppleLink
from .peers import Postgres, go_peer_argv
from .processes import Processes, run_bounded, tail, wait_for_line
from .scenarios import (DEFAULT_RATE_GUESS, FRESH_DEVICES_PER_CALL, KEY_ID, MAX_TOKENS_PER_RUN, PEER_SCENARIOS,
                        PROMOTION_ID, SCENARIOS, TEAM_ID, TOKENS_PER_DEVICE)


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


def service_config(args, work, link, key_sha256, extra):
    """`twobits serve`'s configuration for the bench (each target gets a copy with a database of its own); `link`
    (an AppleLink) says how Apple is reached."""
    month = datetime.datetime.now(datetime.timezone.utc)
    this_month = "%04d-%02d" % (month.year, month.month)
    wake_coalescing = {} if args.wake_coalescing_us is None else {"wake_coalescing_us": args.wake_coalescing_us}
    config = {
        "listen": "127.0.0.1:0",
        "database": os.path.join(work, "twobits.sqlite"),
        "apple": {
            "environment": "development",
            **link.apple_config(),
            "team_id": TEAM_ID,
            "key_id": KEY_ID,
            "private_key_file": os.path.join(work, "apple.p8"),
            "timeout_ms": 10000,
            # 2,048 concurrent requests may each hold an Apple call; over plaintext or the HTTP/1.1-only
            # terminator one connection carries one call at a time.
            "max_in_flight": 4096,
            "max_connections": 2048,
        },
        "clients": [{"name": "bench", "key_sha256": key_sha256, "roles": ["promotions", "tokens", "admin"]}],
        # wrk's 2,048 connections all come from 127.0.0.1: no per-address cap.
        "server": {"threads": args.server_threads, **wake_coalescing, "request_deadline_ms": 30000, "shutdown_grace_ms": 2000,
                   "max_connections_per_ip": 0},
        "bits": {"bit0": "promotion", "bit1": "ban"},
        "promotions": [{"id": PROMOTION_ID, "starts": this_month, "ends": this_month}],
        "tokens": {"audience": "bench-api", "keys_dir": os.path.join(work, "keys"), "reuse_window_seconds": 3600},
    }
    config.update(extra)
    if args.database_pool_size:
        config["database_pool_size"] = args.database_pool_size
    if args.database_pipelines:
        config["database_pipelines"] = args.database_pipelines
    return config


def replica_share(args, config, replicas):
    """Replicas on one machine share its cores: each gets its part of server.threads, as a deployment would give
    each its share (two processes each running a loop per core would only add context switches on a machine that
    is already busy). And of the pipeline connections: together the replicas open as many as one would, so
    PostgreSQL sees the same batches (the service's default is 2)."""
    threads = args.replica_threads or max(1, args.server_threads // replicas)
    pipelines = args.replica_pipelines or max(1, (args.database_pipelines or 2) // replicas)
    return {"server": dict(config["server"], threads=threads), "database_pipelines": pipelines}


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
        self.link = None  # the link to Apple (link.AppleLink), made once the sandbox runs
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
        log("work directory %s" % self.work)
        key_sha256 = self.make_keys()
        self.start_sandbox()
        self.link = AppleLink(getattr(self.args, "apple_link", "plain"), self.work, self.sandbox_url)
        self.link.start()
        config = service_config(self.args, self.work, self.link, key_sha256, self.extra_config)
        if self.args.compare_ledgers or self.args.ledger == "postgres":
            self.postgres = Postgres(self.args.postgres)
        self.make_twobits_targets(config)
        if self.peer_binary:
            self.make_peer_target(config, key_sha256)
        log("sandbox %s (pid %d)" % (self.sandbox_url, self.sandbox.pid))

    def make_keys(self):
        """The Apple key, the fallback-token signing key and the API key; returns the API key's digest."""
        w = self.work
        run_bounded(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                     "-out", os.path.join(w, "apple.p8")], 30)
        run_bounded([self.binary, "keys", "generate", "--dir", os.path.join(w, "keys")], 30)
        _, out, _ = run_bounded([self.binary, "apikey"], 30)
        key = re.search(r"api_key:\s+(\S+)", out)
        digest = re.search(r"key_sha256:\s+([0-9a-f]{64})", out)
        if not key or not digest:
            raise BenchError("cannot read `twobits apikey` output: %r" % out)
        self.api_key = key.group(1)
        return digest.group(1)

    def start_sandbox(self):
        """`twobits sandbox` (Apple, emulated) at 0 ms latency on a free port."""
        w = self.work
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

    def server_target(self, config, name, label, ledger, replicas=1):
        """A `twobits serve` target with a configuration (and so a database) of its own."""
        w = self.work
        database = self.postgres.create_database("bench_%s" % name.replace("-", "_")) if ledger == "postgres" \
            else os.path.join(w, "%s.sqlite" % name)
        path = os.path.join(w, "config-%s.json" % name)
        own = dict(config, database=database)
        if replicas > 1:
            own.update(replica_share(self.args, config, replicas))
        with open(path, "w") as f:
            json.dump(own, f, indent=2)
        return Target(name, label, self.link.wrap([self.binary, "serve", "--config", path]), w, True, replicas=replicas, ledger=ledger)

    def make_twobits_targets(self, config):
        if self.args.compare_ledgers:
            self.ledger_targets = [self.server_target(config, "sqlite", "twobits serve (SQLite)", "sqlite"),
                                   self.server_target(config, "postgres", "twobits serve (PostgreSQL)", "postgres"),
                                   self.server_target(config, "postgres-x2", "2 x twobits serve (one PostgreSQL)", "postgres",
                                                      replicas=2)]
            self.twobits = self.ledger_targets[0]
            return
        label = "twobits serve" + (" (PostgreSQL)" if self.args.ledger == "postgres" else "")
        if self.args.replicas > 1:
            label = "%d x %s" % (self.args.replicas, label)
        self.twobits = self.server_target(config, "twobits", label, self.args.ledger, replicas=self.args.replicas)

    def make_peer_target(self, config, key_sha256):
        w = self.work
        signing = sorted(x for x in os.listdir(os.path.join(w, "keys")) if x.endswith(".pem"))
        if not signing:
            raise BenchError("no signing key in %s" % os.path.join(w, "keys"))
        argv = go_peer_argv(self.peer_binary, w, self.link.peer_url_args(), os.path.join(w, "keys", signing[-1]), key_sha256, config)
        self.peer = Target("go", "Go peer", self.link.wrap(argv), w, False)

    # ---- the servers

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
                self.procs.forget(proc, grace=15)
            target.procs = []
        self.sandbox_http.json("DELETE", "/sandbox/v1/counters")
        for target in self.targets(scenario):
            self.start_target(target)

    def start_target(self, target):
        target.jwts = 0
        target.procs, target.addresses = [], []
        for log_path, err_path in zip(target.log_paths, target.err_paths):
            target.addresses.append(self.start_replica(target, log_path, err_path))
        target.host, target.port = target.addresses[0]
        target.url = "http://%s:%d" % (target.host, target.port)
        log("%s %s (pid %s)" % (target.label, ", ".join("%s:%d" % a for a in target.addresses),
                                ", ".join(str(pid) for pid in target.pids())))

    def start_replica(self, target, log_path, err_path):
        """Starts one process of `target`, waits for its address and its /readyz; returns (host, port)."""
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
        probe = Http(host, port)
        try:
            status, payload = probe.request("GET", "/readyz")
        finally:
            probe.close()
        if status != 200:
            raise BenchError("%s not ready: %d %s" % (target.label, status, payload[:300]))
        return host, port

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
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda sizes: self.mint_batches(sizes, one_device_each), per_worker))
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

    def mint_batches(self, sizes, one_device_each):
        """One minting worker: a connection of its own to the sandbox, a sandbox call per batch."""
        h = Http("127.0.0.1", self.sandbox_port)
        out = []
        try:
            for n in sizes:
                if one_device_each:
                    out.extend(h.json("POST", "/sandbox/v1/device-tokens", {"count": n})["device_tokens"])
                    continue
                device = h.json("POST", "/sandbox/v1/devices", {})["device_id"]
                out.extend(h.json("POST", "/sandbox/v1/devices/%s/tokens" % device, {"count": n})["device_tokens"])
        finally:
            h.close()
        return out

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

    # ---- runs

    def set_latency(self, ms):
        self.sandbox_http.json("PUT", "/sandbox/v1/latency", {"milliseconds": ms})

    def counters(self):
        return self.sandbox_http.json("GET", "/sandbox/v1/counters")

    def apple_call_metrics(self, target):
        return metrics.apple_call_metrics(target)

    def server_timings(self, target):
        return metrics.server_timings(target)

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
        """One wrk run against `target` (load.run_one); its result as a dict (results/latest.json's `runs`)."""
        return load.run_one(self, target, scenario, latency_ms, concurrency, duration)

    def close(self):
        try:
            if getattr(self, "sandbox_http", None):
                self.sandbox_http.close()
        finally:
            self.procs.stop_all()
            if self.link:
                self.link.stop()
            if self.postgres:
                self.postgres.close()
            if not self.args.keep:
                shutil.rmtree(self.work, ignore_errors=True)
            else:
                log("kept %s" % self.work)

#!/usr/bin/env python3
"""The fault campaign (issue 44): a mixed workload of concurrent clients against three `twobits serve`
replicas on a PostgreSQL primary and streaming standby, with the sandbox as Apple, while a seeded nemesis
kills, pauses and partitions them; every operation is written to a history (JSON lines), the final state
is read, and `checker.py` decides the history against the promises.

    sudo python3 Tests/nemesis/campaign.py --seconds 120 --seed 1 [--out DIR] [--clients 6]

Exits 0 when the checker finds no anomaly, 1 when it finds some, 2 when the campaign cannot run here.
See docs/testing.md ("The fault campaign").
"""
import argparse
import base64
import hashlib
import http.client
import json
import os
import random
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checker  # noqa: E402
from cluster import APP_ID, PROMOTION, REPLICAS, REQUEST_DEADLINE_MS, REPO, Cluster, why_unavailable  # noqa: E402

CLIENT_TIMEOUT = 8.0         # a client's patience: above the request deadline (4 s)
KEYED_TIMEOUTS = (1.5, 8.0)  # a keyed claim's attempt: sometimes an impatient client, which hangs up while the
                             # server goes on (Apple slow, a pause), so that its retry meets the stored answer
PAUSE_SECONDS = REQUEST_DEADLINE_MS / 1000 + 2
SHARED_INSTALLS = [f"install-{i}" for i in range(4)]


def request(method, url, body=None, key=None, headers=None, timeout=CLIENT_TIMEOUT):
    """(status, json or None, headers) or raises OSError / HTTPException (connection lost, timeout)."""
    host, _, path = url.partition("//")[2].partition("/")
    connection = http.client.HTTPConnection(host, timeout=timeout)
    try:
        hdrs = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        if key:
            hdrs["Authorization"] = "Bearer " + key
        connection.request(method, "/" + path, body=data, headers=hdrs)
        answer = connection.getresponse()
        raw = answer.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return answer.status, parsed, answer.headers
    finally:
        connection.close()


def classify(status, body):
    """ok (2xx) / fail (a definite refusal) / unknown (may or may not have happened)."""
    if 200 <= status < 300:
        return "ok"
    code = ((body or {}).get("error") or {}).get("code") if isinstance(body, dict) else None
    if status == 503 and code == "storage_unavailable":
        return "fail"  # the product's promise: nothing was written
    if status >= 500:
        return "unknown"
    return "fail"


class History:
    def __init__(self, path):
        self.file = open(path, "w")
        self.lock = threading.Lock()
        self.t0 = time.monotonic()
        self.next_id = 0
        self.counts = Counter()

    def now(self):
        return round(time.monotonic() - self.t0, 4)

    def record(self, entry):
        with self.lock:
            self.next_id += 1
            entry["id"] = self.next_id
            if entry.get("type", "op") == "op":
                self.counts[entry["outcome"]] += 1
            self.file.write(json.dumps(entry, sort_keys=True) + "\n")
            self.file.flush()


def prefix(token):
    return hashlib.sha256(token.encode()).hexdigest()[:12]


class Workload:
    """The clients' shared world: devices (the sandbox's), reserve tokens for when Apple is cut off,
    limited-use tokens waiting to be consumed."""

    def __init__(self, cluster, history, seed, devices=16, shared_installs=False):
        self.shared_installs = shared_installs
        self.c = cluster
        self.h = history
        self.seed = seed
        self.lock = threading.Lock()
        self.devices = []
        self.reserve = {}
        self.limited = []
        self.keys = []           # idempotency keys used: key -> last definite or not
        self.orders = 0
        self.unresolved = []     # (op, path, body, args) of the bans, unbans and pending orders answered unknown
        self.stop = threading.Event()
        for _ in range(devices):
            self.add_device()

    def sandbox(self, method, path, body=None):
        status, parsed, _ = request(method, self.c.sandbox_url + path, body, timeout=5)
        return status, parsed

    def add_device(self):
        status, parsed = self.sandbox("POST", "/sandbox/v1/devices")
        assert status == 201, (status, parsed)
        device = parsed["device_id"]
        status, parsed = self.sandbox("POST", f"/sandbox/v1/devices/{device}/tokens", {"count": 8})
        assert status == 201, (status, parsed)
        with self.lock:
            self.devices.append(device)
            self.reserve[device] = parsed["device_tokens"]
        return device

    def token(self, device):
        """A fresh token; while the sandbox is unreachable one of the device's reserve (or None)."""
        try:
            status, parsed = self.sandbox("POST", f"/sandbox/v1/devices/{device}/tokens", {})
            if status == 201:
                return parsed["device_token"]
        except (OSError, http.client.HTTPException):
            pass
        with self.lock:
            return self.reserve[device].pop() if self.reserve[device] else None

    def call(self, client, replica, op, method, path, body, role, args, headers=None, timeout=CLIENT_TIMEOUT):
        invoke = self.h.now()
        entry = {"type": "op", "client": client, "replica": replica, "op": op, "args": args, "invoke": invoke}
        try:
            status, parsed, hdrs = request(method, self.c.urls[replica] + path, body, self.c.api_keys[role], headers, timeout)
            entry.update(status=status, outcome=classify(status, parsed), body=summarize(parsed),
                         replayed=hdrs.get("Idempotent-Replayed") == "true")
        except (OSError, http.client.HTTPException) as error:
            parsed = None
            # A refused connection was never a request: nothing happened. Anything else may have reached the server.
            entry.update(status=None, outcome="fail" if isinstance(error, ConnectionRefusedError) else "unknown",
                         error=type(error).__name__)
        entry["complete"] = self.h.now()
        self.h.record(entry)
        return entry, parsed

    # -- the operations -----------------------------------------------------------------------------

    def claim(self, client, rng, keyed):
        device = rng.choice(self.devices)
        token = self.token(device)
        if token is None:
            return
        args = {"device": device, "token": prefix(token)}
        path = f"/v1/promotions/{PROMOTION}/claim"
        if not keyed:
            self.call(client, rng.choice(self.c.replicas), "claim", "POST", path, {"device_token": token}, "marketing", args)
            return
        key = f"k-{self.seed}-{uuid.UUID(int=rng.getrandbits(128))}"
        args["key"] = key
        with self.lock:
            self.keys.append((key, token, device))
        self.keyed_claim(client, rng, key, token, args, attempts=5)

    def keyed_claim(self, client, rng, key, token, args, attempts, budget=40.0, resolving=False):
        """A careful client: the same key again after a timeout, a 5xx, a 429 or 409 request_in_progress (once the
        workload stops, only when `resolving`: the careful client of `resolve`)."""
        started = time.monotonic()
        for attempt in range(attempts):
            entry, parsed = self.call(client, rng.choice(self.c.replicas), "claim", "POST", f"/v1/promotions/{PROMOTION}/claim",
                                      {"device_token": token}, "marketing", {**args, "attempt": attempt},
                                      headers={"Idempotency-Key": key}, timeout=rng.choice(KEYED_TIMEOUTS))
            if checker.definite(entry):
                if rng.random() < 0.15:  # the answer is lost on the client's side: the same key once more, elsewhere
                    self.call(client, rng.choice(self.c.replicas), "claim", "POST", f"/v1/promotions/{PROMOTION}/claim",
                              {"device_token": token}, "marketing", {**args, "attempt": attempt + 1, "duplicate": True},
                              headers={"Idempotency-Key": key})
                return entry
            if time.monotonic() - started > budget or (self.stop.is_set() and not resolving):
                return entry
            time.sleep(1.0 if entry.get("status") else 0.3)
        return entry

    def install(self, client, rng):
        """The reinstall counter (layout `reinstall-counter`): a fresh install, sometimes with an install id."""
        request = self.device_request(rng)
        if request is None:
            return
        body, args = request
        self.call(client, rng.choice(self.c.replicas), "install", "POST", "/v1/installs", body, "main", args)

    def device_request(self, rng):
        """A random device's fresh token as a request body, sometimes with its install id; None without a token."""
        device = rng.choice(self.devices)
        token = self.token(device)
        if token is None:
            return None
        body = {"device_token": token}
        args = {"device": device, "token": prefix(token)}
        if rng.random() < 0.3 and self.install_of(device, rng):
            body["install_id"] = args["install"] = self.install_of(device, rng)
        return body, args

    # Devices are banned either by their device token or through their install id, never both: a pending unban
    # lifts only a ban of its own kind (docs/policy.md), which the service can only tell apart per install id.
    # --shared-installs lets every device present any of four install ids (see docs/testing.md, findings).
    def by_token(self, device):
        return self.shared_installs or int(device[-1], 16) % 2 == 0

    def install_of(self, device, rng):
        if self.shared_installs:
            return rng.choice(SHARED_INSTALLS)
        return None if self.by_token(device) else f"inst-{device[4:14]}"

    def ban(self, client, rng, unban):
        device = rng.choice([d for d in self.devices if self.by_token(d)])
        token = self.token(device)
        if token is None:
            return
        self.order(client, rng, "unban" if unban else "ban", "/v1/admin/unbans" if unban else "/v1/admin/bans",
                   {"device_token": token, "reason": "nemesis"}, {"device": device, "token": prefix(token)})

    def pending(self, client, rng, unban):
        install = self.install_of(rng.choice([d for d in self.devices if not self.by_token(d)] or self.devices), rng)
        if install is None:
            return
        self.order(client, rng, "unban.pending" if unban else "ban.pending", "/v1/admin/unbans" if unban else "/v1/admin/bans",
                   {"install_id": install, "reason": "nemesis"}, {"install": install})

    def order(self, client, rng, op, path, body, args):
        """An admin's order, named (`order`) so that its re-sends are one order; kept for `resolve` when unknown."""
        with self.lock:
            self.orders += 1
            args["order"] = f"o{self.orders}"
        entry, _ = self.call(client, rng.choice(self.c.replicas), op, "POST", path, body, "ops", args)
        if entry["outcome"] == "unknown":
            with self.lock:
                self.unresolved.append((op, path, body, args))

    def exchange(self, client, rng):
        request = self.device_request(rng)
        if request is None:
            return
        body, args = request
        if rng.random() < 0.5:
            body["limited_use"] = args["limited_use"] = True
        entry, parsed = self.call(client, rng.choice(self.c.replicas), "exchange", "POST", "/v1/fallback-tokens", body, "main", args)
        if entry["outcome"] == "ok" and body.get("limited_use"):
            with self.lock:
                self.limited.append(parsed["token"])
                del self.limited[:-40]

    def consume(self, client, rng):
        with self.lock:
            if not self.limited:
                return
            token = rng.choice(self.limited)
        jti = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "==")).get("jti")
        self.call(client, rng.choice(self.c.replicas), "consume", "POST", "/v1/fallback-tokens/verify",
                  {"token": token, "consume": True}, "main", {"jti": jti})

    def app_attest(self, client, rng, state):
        """One attested key per client; then assertions, a few of them replaying the previous counter."""
        replica = rng.choice(self.c.replicas)
        try:
            status, parsed, _ = request("POST", self.c.urls[replica] + "/v1/app-attest/challenges", {}, self.c.api_keys["main"])
        except (OSError, http.client.HTTPException):
            return
        if status != 201:
            return
        value = parsed["challenge"]
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        try:
            if "key" not in state:
                status, made = self.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "production"})
                key_id = made["key_id"]
                status, signed = self.sandbox("POST", "/sandbox/v1/app-attest/attestations",
                                              {"key_id": key_id, "client_data_hash": b64(hashlib.sha256(raw).digest())})
                entry, answer = self.call(client, rng.choice(self.c.replicas), "attest", "POST", "/v1/app-attest/attestations",
                                          {"key_id": key_id, "challenge": value, "attestation_object": signed["attestation_object"]},
                                          "main", {"key_id": key_id})
                if entry["outcome"] == "ok":
                    state["key"] = key_id
                return
            client_data = json.dumps({"challenge": value, "action": "nemesis"}).encode()
            fault = "replayed_counter" if rng.random() < 0.2 else None
            body = {"key_id": state["key"], "client_data_hash": b64(hashlib.sha256(client_data).digest())}
            if fault:
                body["fault"] = fault
            status, signed = self.sandbox("POST", "/sandbox/v1/app-attest/assertions", body)
            if status != 200:
                return
        except (OSError, http.client.HTTPException, KeyError, TypeError):
            return
        self.call(client, rng.choice(self.c.replicas), "assert", "POST", "/v1/app-attest/assertions",
                  {"key_id": state["key"], "assertion": signed["assertion"], "client_data": b64(client_data), "challenge": value},
                  "main", {"key_id": state["key"], "counter": signed["counter"], "replay": bool(fault)})

    def client(self, index):
        rng = random.Random(f"{self.seed}-client-{index}")
        name = f"c{index}"
        state = {}
        first = [("install", 3)] if self.c.layout == "counter" else [("claim_keyed", 3), ("claim", 1)]
        ops = first + [("ban", 1), ("unban", 1), ("ban.pending", 0.4), ("unban.pending", 0.4),
               ("exchange", 2), ("consume", 1.5), ("app_attest", 1.5), ("new_device", 0.2)]
        names, weights = zip(*ops)
        while not self.stop.is_set():
            op = rng.choices(names, weights)[0]
            try:
                if op == "claim_keyed":
                    self.claim(name, rng, True)
                elif op == "claim":
                    self.claim(name, rng, False)
                elif op == "install":
                    self.install(name, rng)
                elif op in ("ban", "unban"):
                    self.ban(name, rng, op == "unban")
                elif op.endswith(".pending"):
                    self.pending(name, rng, op.startswith("unban"))
                elif op == "exchange":
                    self.exchange(name, rng)
                elif op == "consume":
                    self.consume(name, rng)
                elif op == "app_attest":
                    self.app_attest(name, rng, state)
                elif op == "new_device" and len(self.devices) < 120:
                    self.add_device()
            except (OSError, http.client.HTTPException, AssertionError, IndexError):
                time.sleep(0.2)  # the harness's own sandbox call failed (Apple cut off): nothing was asked of TwoBits
            time.sleep(rng.uniform(0.0, 0.1))


def b64(data):
    return base64.b64encode(data).decode()


def summarize(parsed):
    """What the checker needs of an answer: error code, claim fields, ban fields, consume fields."""
    if not isinstance(parsed, dict):
        return None
    keep = {k: parsed[k] for k in ("claimed", "claimed_month", "banned", "applied", "valid", "already_consumed", "counter",
                                   "tier", "reinstalls") if k in parsed}
    if isinstance(parsed.get("error"), dict):
        keep["code"] = parsed["error"].get("code")
        if parsed["error"].get("reason"):
            keep["reason"] = parsed["error"]["reason"]
    return keep


# -- the nemesis -----------------------------------------------------------------------------------

FAULTS = ["kill", "pause", "replica-pg", "primary-cut", "failover", "apple-slow", "apple-fail", "apple-cut"]
SQLITE_FAULTS = ["kill", "pause", "disk-full", "disk-freeze", "apple-slow", "apple-fail", "apple-cut"]


def schedule(seed, seconds, faults=FAULTS, replicas=REPLICAS):
    """[(start, kind, target, hold)]: every kind once before any repeats (failover once only), then at random."""
    rng = random.Random(f"{seed}-nemesis")
    plan, t = [], 4.0
    first = faults[:]
    rng.shuffle(first)
    while True:
        kind = first.pop() if first else rng.choice([f for f in faults if f != "failover"])
        hold = PAUSE_SECONDS if kind == "pause" else rng.uniform(3, 7)
        if t + hold > seconds:
            break
        plan.append((round(t, 2), kind, rng.choice(replicas), round(hold, 2)))
        t += hold + rng.uniform(2, 5)
    return plan


def nemesis(cluster, history, plan, stop, sandbox):
    t0 = time.monotonic()
    for start, kind, target, hold in plan:
        while time.monotonic() - t0 < start:
            if stop.is_set():
                return
            time.sleep(0.05)
        entry = {"type": "fault", "kind": kind, "target": target, "start": history.now()}
        try:
            heal = inject(cluster, kind, target, sandbox)
            time.sleep(hold)
            heal()
        except Exception as error:  # noqa: BLE001 - recorded; the campaign goes on
            entry["error"] = f"{type(error).__name__}: {error}"
        entry["end"] = history.now()
        history.record(entry)


def inject(c, kind, target, sandbox):
    """Starts a fault; returns the function that heals it."""
    if kind == "kill":
        c.kill_replica(target)
        return lambda: c.start_replica(target)
    if kind == "pause":
        c.signal(target, signal.SIGSTOP)
        return lambda: c.signal(target, signal.SIGCONT)
    if kind == "replica-pg":
        c.separate(target, c.primary)
        primary = c.primary
        return lambda: c.join(target, primary)
    if kind == "primary-cut":
        primary = c.primary
        c.cut(primary)
        return lambda: c.mend(primary)
    if kind == "disk-full":
        c.fill_disk()
        return c.empty_disk
    if kind == "disk-freeze":
        c.freeze_disk()
        return c.thaw_disk
    if kind == "failover":
        c.fail_over()
        return lambda: None
    if kind == "apple-slow":
        sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 1500})
        return lambda: sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 0})
    if kind == "apple-fail":
        for fault in ({"kind": "status", "status": 503, "count": 20}, {"kind": "timeout", "delay_ms": 3000, "count": 6},
                      {"kind": "drop", "count": 10, "endpoint": "update_two_bits"}, {"kind": "status", "status": 429, "count": 10}):
            sandbox("POST", "/sandbox/v1/faults", fault)
        return lambda: sandbox("DELETE", "/sandbox/v1/faults")
    if kind == "apple-cut":
        sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 400})  # so that updates are in flight when the link goes
        time.sleep(0.2)
        c.cut("apple")

        def heal():
            c.mend("apple")
            sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 0})
        return heal
    raise ValueError(kind)


# -- after the faults --------------------------------------------------------------------------------

def liveness(workload, history, healed_at):
    """Every replica must answer 2xx to a real request (an exchange: Apple and the ledger) within 30 s."""
    for name in workload.c.replicas:
        first_ok = None
        while history.now() - healed_at < 35:
            try:
                device = workload.add_device()
                token = workload.token(device)
                status, _, _ = request("POST", workload.c.urls[name] + "/v1/fallback-tokens", {"device_token": token},
                                       workload.c.api_keys["main"], timeout=5)
                if 200 <= status < 300:
                    first_ok = history.now()
                    break
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.5)
        history.record({"type": "liveness", "replica": name, "healed": healed_at, "first_ok": first_ok})


def resolve(workload, history):
    """A careful client does not give up: every key whose outcome is still unknown is sent again until definite, and
    so is every ban, unban and pending order whose outcome was unknown."""
    last = {}
    with open(history.file.name) as f:
        for line in f:
            e = json.loads(line)
            if e.get("op") == "claim" and "key" in e.get("args", {}):
                last[e["args"]["key"]] = e
    rng = random.Random(f"{workload.seed}-resolve")
    for key, token, device in workload.keys:
        if key in last and not checker.definite(last[key]):
            args = {k: v for k, v in last[key]["args"].items() if k != "attempt"}
            workload.keyed_claim("resolver", rng, key, token, args, attempts=20, budget=30, resolving=True)
    for op, path, body, args in workload.unresolved:  # a careful admin: the same order again until it is answered
        started = time.monotonic()
        for attempt in range(1, 21):
            entry, _ = workload.call("resolver", rng.choice(workload.c.replicas), op, "POST", path, body, "ops", {**args, "attempt": attempt})
            if checker.definite(entry) or time.monotonic() - started > 30:
                break
            time.sleep(1.0 if entry.get("status") else 0.3)


def write_log(workload):
    """The sandbox's log of every update Apple accepted, whole (it keeps the last 200,000)."""
    writes, after = [], 0
    while True:
        status, page = workload.sandbox("GET", f"/sandbox/v1/writes?after={after}&limit=1000")
        assert status == 200 and page["oldest"] == 1, (status, page and page.get("oldest"))
        writes += page["writes"]
        if page.get("next_after") is None:
            return writes
        after = page["next_after"]


def audit_trail(cluster):
    events, before = [], None
    while True:
        path = "/v1/admin/audit?limit=200" + (f"&before={before}" if before else "")
        for attempt in range(20):
            try:
                status, parsed, _ = request("GET", cluster.urls[cluster.replicas[attempt % len(cluster.replicas)]] + path, key=cluster.api_keys["ops"], timeout=30)
            except (OSError, http.client.HTTPException) as error:
                status, parsed = None, str(error)
            if status == 200:
                break
            time.sleep(2)
        assert status == 200, (status, parsed)
        events.extend(parsed["events"])
        before = parsed.get("next_before")
        if not before:
            return events


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120, help="workload duration under faults")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--shared-installs", action="store_true",
                        help="every device may present any of four install ids (reproduces the pending-unban finding)")
    parser.add_argument("--layout", choices=["roles", "counter", "sqlite"], default="roles",
                        help="roles: bit0 a promotion, bit1 the ban (claims); counter: the reinstall counter (installs); "
                             "sqlite: roles on one replica with the SQLite ledger on a disk the nemesis fills and freezes")
    parser.add_argument("--out", default=None, help="directory for history.jsonl, final.json, logs (default a new one under /tmp)")
    parser.add_argument("--binary", default=os.environ.get("TWOBITS_BIN") or str(REPO / ".build" / "release" / "twobits"))
    options = parser.parse_args()
    missing = why_unavailable(options.layout)
    if missing:
        print(f"nemesis: cannot run: {missing}", file=sys.stderr)
        return 2
    out = Path(options.out or f"/tmp/twobits-nemesis-run-{options.seed}-{int(time.time())}")
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    cluster = Cluster(options.binary, layout=options.layout)
    history = History(out / "history.jsonl")
    stop = threading.Event()
    threads = []
    try:
        # Nothing may outlive the campaign: SIGTERM/SIGINT end it through the finally below.
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        cluster.build_network()
        if cluster.sqlite:
            cluster.start_disk()
        else:
            cluster.start_postgres()
        cluster.start_services()
        workload = Workload(cluster, history, options.seed, shared_installs=options.shared_installs)
        workload.stop = stop

        def sandbox(method, path, body=None):
            return workload.sandbox(method, path, body)

        plan = schedule(options.seed, options.seconds, *((SQLITE_FAULTS, cluster.replicas) if cluster.sqlite else ()))
        print(f"nemesis: seed {options.seed}, {options.seconds:.0f} s, layout {options.layout}, {options.clients} clients, net {cluster.net}.0/24, "
              f"{len(plan)} faults: {', '.join(k for _, k, _, _ in plan)}", flush=True)
        nem = threading.Thread(target=nemesis, args=(cluster, history, plan, stop, sandbox), daemon=True)
        threads = [threading.Thread(target=workload.client, args=(i,), daemon=True) for i in range(options.clients)]
        nem.start()
        for t in threads:
            t.start()
        t_end = time.monotonic() + options.seconds
        while time.monotonic() < t_end and nem.is_alive():
            time.sleep(0.2)
        nem.join(timeout=options.seconds + 60)
        healed_at = history.now()
        stop.set()
        for t in threads:
            t.join(timeout=60)
        liveness(workload, history, healed_at)
        resolve(workload, history)
        final = {"month": time.strftime("%Y-%m", time.gmtime()),
                 "devices": {d: workload.sandbox("GET", f"/sandbox/v1/devices/{d}")[1] for d in workload.devices},
                 "counters": workload.sandbox("GET", "/sandbox/v1/counters")[1],
                 "writes": write_log(workload),
                 "audit": audit_trail(cluster)}
        (out / "final.json").write_text(json.dumps(final, indent=1))
    finally:
        stop.set()
        history.file.close()
        cluster.close(keep=out / "logs")
    anomalies = checker.check(checker.load(out / "history.jsonl"), json.loads((out / "final.json").read_text()))
    for anomaly in anomalies:
        print("ANOMALY " + anomaly)
    entries = checker.load(out / "history.jsonl")
    outcomes = Counter(e["outcome"] for e in entries if e.get("type") == "op")
    faults = Counter(e["kind"] for e in entries if e.get("type") == "fault")
    errors = [e for e in entries if e.get("type") == "fault" and e.get("error")]
    for e in errors:
        print(f"nemesis: fault {e['kind']} on {e['target']} could not be played: {e['error']}")
    print(f"| {options.seed} | {options.layout} | {options.seconds:.0f} s ({time.monotonic() - started:.0f} s in all) | "
          f"{outcomes['ok']} ok, {outcomes['fail']} fail, {outcomes['unknown']} unknown | "
          + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())) + f" | {len(anomalies)} |")
    print(f"nemesis: history and final state in {out}")
    return 1 if anomalies else 0


if __name__ == "__main__":
    sys.exit(main())

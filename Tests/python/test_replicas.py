"""Issue 9: `twobits serve` replicas sharing one PostgreSQL, over real HTTP.

Three replicas on one database (and one sandbox) keep every guarantee one process keeps: a device token
is exchanged once, an idempotent claim reaches Apple once, a limited-use token is consumed once, a
pending ban is applied once, and the audit trail is one ordered history. A replica killed with SIGKILL
mid-burst loses and doubles nothing; PostgreSQL stopped under load gives 503 `storage_unavailable`
(never 500) and the service recovers by itself. `twobits migrate`, the newer-schema refusal and
`twobits ledger copy` are driven from the command line. A database password never shows in a log, an
error message or /readyz.

Needs PostgreSQL: the cluster `make test` starts (TWOBITS_TEST_POSTGRES), or a private one (see the
`postgres` fixture in conftest.py).
"""
import hashlib
import json
import os
import re
import signal
import socket
import sqlite3
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPException
from pathlib import Path

import pytest

import test_app_attest as aa
import subprocess

from conftest import POSTGRES_SCRIPT, PostgresCluster, current_month, http, postgres_available

PROMOTION = "spring"
# The strong tier's helpers (the sandbox's simulated iPhones) and configuration, as test_app_attest uses them.
APP_ATTEST = {"apps": [aa.APP_ID], "environment": "production", "root_ca_file": "appattest-root.pem",
                "receipts": {"root_ca_file": "receipt-root.pem", "enabled": False}}
LAYOUT = {"bit0": "promotion", "bit1": "ban"}


def replica_options(database, **extra):
    """Options for `twobits_factory`: a promotion this month, the tokens section, `database` a URI."""
    return dict(layout=LAYOUT, promotions=[{"id": PROMOTION, "starts": current_month()}],
                extra={"database": database, "server": {"threads": 2}, **extra})


def at_once(calls):
    """Runs each callable on a thread of its own, released together by a barrier; returns their results
    in order (an exception is returned, not raised)."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i):
        barrier.wait()
        try:
            results[i] = calls[i]()
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertions
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def claim(replica, device_token, key, timeout=20):
    return replica.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": device_token}, client="marketing",
                        headers={"Idempotency-Key": key}, timeout=timeout)


def prefix(device_token):
    return hashlib.sha256(device_token.encode()).hexdigest()[:12]


def assert_password_absent(deployment, password, *texts):
    """Neither a log file of the deployment nor any of `texts` contains the password."""
    assert password
    for log in Path(deployment.dir).glob("*.log"):
        text = log.read_text(errors="replace")
        assert password not in text, f"{log.name} shows the database password:\n" + "\n".join(
            line for line in text.splitlines() if password in line)[:2000]
    for text in texts:
        assert password not in (text or ""), f"the database password shows in: {text[:2000]}"


# -- three replicas, one database ------------------------------------------------------------------


@pytest.fixture(scope="module")
def trio(twobits_module_factory, postgres):
    """Three replicas on one fresh database, for the tests that leave them running."""
    deployment = twobits_module_factory("trio", autostart=False, **replica_options(postgres.create_database("trio"), app_attest=APP_ATTEST))
    deployment.start_sandbox()
    deployment.start_replicas(3)
    deployment.password = postgres.password
    return deployment


def test_a_device_token_exchanged_on_three_replicas_at_once_is_accepted_once(trio):
    for _ in range(5):
        device_token = trio.mint(trio.new_device())
        answers = at_once([lambda r=r: r.exchange(device_token) for r in trio.replicas])
        assert sorted(a.status for a in answers) == [201, 409, 409], answers
        assert [a.error_code for a in answers if a.status == 409] == ["device_token_reused"] * 2, answers


def test_one_idempotent_claim_sent_to_three_replicas_reaches_apple_once(trio):
    # Apple's latency keeps the first attempt running while its twins arrive on the other replicas.
    assert trio.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 300}).status == 200
    try:
        for round_ in range(3):
            device_id = trio.new_device()
            device_token = trio.mint(device_id)
            key = f"twins-{round_}-{uuid.uuid4()}"
            answers = at_once([lambda r=r: claim(r, device_token, key) for r in trio.replicas])
            assert not [a for a in answers if isinstance(a, Exception)], answers
            firsts = [a for a in answers if a.status == 200 and a.headers.get("Idempotent-Replayed") != "true"]
            assert len(firsts) == 1, answers
            first = firsts[0]
            assert first.json["claimed"] is True, first
            for twin in answers:
                if twin is first:
                    continue
                # A twin either waits its turn (409 request_in_progress, Retry-After) or replays the answer:
                # never a crash recovery (a second 200 of its own) and never already_claimed.
                if twin.status == 409:
                    assert twin.error_code == "request_in_progress", twin
                    assert twin.headers.get("Retry-After"), twin
                else:
                    assert twin.status == 200 and twin.headers.get("Idempotent-Replayed") == "true", twin
                    assert twin.json == first.json, (twin, first)
            # Retries afterwards, on every replica, replay the first answer without calling Apple.
            for replica in trio.replicas:
                again = claim(replica, device_token, key)
                assert again.status == 200 and again.headers.get("Idempotent-Replayed") == "true", (replica, again)
                assert again.json == first.json
            state = trio.device(device_id)
            assert state["updates"] == 1 and state["bit0"] is True, state
    finally:
        trio.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 0})


def test_a_limited_use_token_consumed_on_three_replicas_at_once_is_consumed_once(trio):
    for _ in range(3):
        issued = trio.replicas[0].exchange(trio.mint(trio.new_device()), limited_use=True)
        assert issued.status == 201, issued
        token = issued.json["token"]
        answers = at_once([lambda r=r: r.verify(token, consume=True) for r in trio.replicas for _ in range(2)])
        assert all(a.status == 200 and a.json["valid"] is True for a in answers), answers
        assert [a.json["already_consumed"] for a in answers].count(False) == 1, answers
        for replica in trio.replicas:
            assert replica.verify(token, consume=True).json["already_consumed"] is True


def applied_bans(replica, install_id):
    return [e for e in replica.audit_events() if e["action"] == "ban.applied" and e.get("subject") == install_id]


def pending_installs(replica):
    answer = replica.get("/v1/admin/bans/pending", client="ops")
    assert answer.status == 200, answer
    return [p["install_id"] for p in answer.json["pending"]]


def test_three_replicas_racing_one_app_attest_counter_accept_it_once(trio):
    """One attested key; three assertions carrying the same counter (a replaying device), each with its own
    challenge, sent to the three replicas at once: the ledger moves the counter for exactly one."""
    first, *others = trio.replicas
    for _ in range(3):
        key_id = aa.new_key(trio)
        value = first.post("/v1/app-attest/challenges", {}, client="main").json["challenge"]
        attested = first.post("/v1/app-attest/attestations", {"key_id": key_id, "challenge": value,
                                                              "attestation_object": aa.attestation_object(trio, key_id, value)}, client="main")
        assert attested.status == 201, attested
        artifact = attested.json["artifact"]
        requests = []
        for index, replica in enumerate(trio.replicas):
            challenge = replica.post("/v1/app-attest/challenges", {}, client="main").json["challenge"]
            requests.append(aa.assertion_request(trio, key_id, challenge, fault="replayed_counter" if index else None))
        answers = at_once([lambda r=r, q=q: r.post("/v1/app-attest/assertions", {"artifact": artifact, **q}, client="main")
                           for r, q in zip(trio.replicas, requests)])
        assert sorted(a.status for a in answers) == [200, 401, 401], answers
        assert [a.json["error"]["reason"] for a in answers if a.status == 401] == ["counter_not_increasing"] * 2, answers


def test_a_pending_ban_is_applied_once_whichever_replica_the_install_reaches(trio):
    first, second, third = trio.replicas

    # Ordered on one replica, seen pending by the others, applied by the one the install reaches.
    install = f"install-evil-{uuid.uuid4()}"
    order = first.post("/v1/admin/bans", {"install_id": install, "reason": "scripted signups"}, client="ops")
    assert order.status == 202, order
    assert install in pending_installs(second) and install in pending_installs(third)
    banned_device = trio.new_device()
    answer = third.exchange(trio.mint(banned_device), install_id=install)
    assert answer.status == 403 and answer.error_code == "device_banned", answer
    assert trio.device(banned_device)["bit1"] is True
    # Applied: no replica holds it any more, and the same install on another device is not banned again.
    assert all(install not in pending_installs(r) for r in trio.replicas)
    other_device = trio.new_device()
    assert second.exchange(trio.mint(other_device), install_id=install).status == 201
    assert trio.device(other_device)["updates"] == 0
    assert len(applied_bans(first, install)) == 1

    # The install shows up on all three replicas at once (three devices): one of them takes the order.
    install = f"install-racing-{uuid.uuid4()}"
    assert second.post("/v1/admin/bans", {"install_id": install, "reason": "scripted signups"}, client="ops").status == 202
    devices = [trio.new_device() for _ in trio.replicas]
    tokens = [trio.mint(d) for d in devices]
    answers = at_once([lambda r=r, t=t: r.exchange(t, install_id=install) for r, t in zip(trio.replicas, tokens)])
    assert sorted(a.status for a in answers) == [201, 201, 403], answers
    assert [a.error_code for a in answers if a.status == 403] == ["device_banned"]
    assert sum(trio.device(d)["updates"] for d in devices) == 1, [trio.device(d) for d in devices]
    assert len(applied_bans(third, install)) == 1
    assert all(install not in pending_installs(r) for r in trio.replicas)


def test_the_audit_trail_is_one_history_read_from_any_replica(trio):
    # Audited actions, one after another, each on another replica.
    installs = [f"install-audit-{i}-{uuid.uuid4()}" for i in range(6)]
    for i, install in enumerate(installs):
        replica = trio.replicas[i % 3]
        answer = replica.post("/v1/admin/bans", {"install_id": install, "reason": f"order {i}"}, client="ops")
        assert answer.status == 202, answer
    trails = [r.audit_events(page_size=7) for r in trio.replicas]
    assert trails[0] == trails[1] == trails[2]
    ids = [e["id"] for e in trails[0]]
    assert ids == sorted(set(ids), reverse=True), "not one strictly ordered history"
    # All of it, in the order it happened (the trail is newest first).
    mine = [e["subject"] for e in trails[0] if e.get("subject") in installs]
    assert mine == installs[::-1]
    assert_password_absent(trio, trio.password, *(r.get("/readyz").raw.decode() for r in trio.replicas))


# -- the rate limits are the deployment's totals ----------------------------------------------------

TOTAL_RATE = 4        # per second, for the whole deployment: a client's rate_per_second, or apple.max_calls_per_second
TOTAL_BURST = 12      # the client's burst, for the whole deployment
HAMMER_SECONDS = 3.0


def live_replicas(replica):
    """What `twobits_live_replicas` says on this replica's /metrics (None when absent)."""
    found = re.search(r"^twobits_live_replicas ([0-9.]+)$", replica.get("/metrics").raw.decode(), re.M)
    return int(float(found.group(1))) if found else None


def wait_for_live_replicas(replicas, count, seconds=30):
    deadline = time.monotonic() + seconds
    seen = None
    while time.monotonic() < deadline:
        seen = [live_replicas(r) for r in replicas]
        if seen == [count] * len(replicas):
            return
        time.sleep(0.2)
    pytest.fail(f"the replicas did not all count {count} live replicas within {seconds} s: {seen}")


def hammer(replicas, token, seconds=HAMMER_SECONDS):
    """Two threads per replica send validates back to back as client `main` for `seconds`. Returns the
    answers admitted (200) and refused (429 rate_limited) per replica, and the seconds from the first
    request sent to the last answer received."""
    stop = time.monotonic() + seconds

    def run(replica):
        admitted = refused = 0
        while time.monotonic() < stop:
            answer = replica.post("/v1/devices/validate", {"device_token": token}, client="main", timeout=20)
            if answer.status == 429:
                assert answer.error_code == "rate_limited", answer
                refused += 1
            else:
                assert answer.status == 200, answer
                admitted += 1
        return replica.name, admitted, refused

    started = time.monotonic()
    with ThreadPoolExecutor(2 * len(replicas)) as pool:
        results = list(pool.map(run, [r for r in replicas for _ in range(2)]))
    elapsed = time.monotonic() - started
    admitted = {r.name: sum(a for name, a, _ in results if name == r.name) for r in replicas}
    refused = {r.name: sum(x for name, _, x in results if name == r.name) for r in replicas}
    return admitted, refused, elapsed


@pytest.mark.parametrize("limit", ["client", "global"])
def test_three_replicas_hammered_admit_the_deployments_total_not_three_times_it(twobits_factory, postgres, limit):
    """`clients[].rate_per_second` (with `burst`) and `apple.max_calls_per_second` are totals for the deployment:
    each replica takes its share by the live replica count the presence connections give. Three replicas
    hammered at once admit at most the total rate over the window plus the deployment's burst (with a
    generous 1.5 on the rate); each replica saw refusals, so a per-replica limit (today's) would have admitted
    three times as much. A replica killed stops counting once its presence connection is gone."""
    if limit == "client":
        extra = {}
        burst = TOTAL_BURST
    else:
        extra = {"apple": {"max_calls_per_second": TOTAL_RATE}}
        # One second's worth, shared: ceil(4 / 3) = 2 per replica, so 6 at once for the three.
        burst = 3 * -(-TOTAL_RATE // 3)
    deployment = twobits_factory(f"limits-{limit}", autostart=False,
                                 **replica_options(postgres.create_database("limits"), **extra))
    if limit == "client":
        for client in deployment.config["clients"]:
            if client["name"] == "main":
                client.update(rate_per_second=TOTAL_RATE, burst=TOTAL_BURST)
        deployment.config_path.write_text(json.dumps(deployment.config, indent=2))
    deployment.start_sandbox()
    replicas = deployment.start_replicas(3)
    wait_for_live_replicas(replicas, 3)
    token = deployment.mint(deployment.new_device())

    admitted, refused, elapsed = hammer(replicas, token)
    total = sum(admitted.values())
    print(f"{limit}: admitted {admitted}, refused {refused} in {elapsed:.2f} s")
    assert all(refused[r.name] > 0 for r in replicas), f"a replica was not hammered past its share: {refused}"
    assert all(admitted[r.name] > 0 for r in replicas), f"a replica admitted nothing: {admitted}"
    assert total <= TOTAL_RATE * elapsed * 1.5 + burst, (
        f"{total} admitted in {elapsed:.2f} s by three replicas, over the deployment's {TOTAL_RATE}/s (+{burst} burst)")
    # Each replica's full bucket holds its share of the burst: the three together admit at least the burst.
    assert total >= burst, admitted

    if limit == "client":
        # A replica that dies stops counting once its presence lapses: the two left take half each.
        replicas[2].kill()
        wait_for_live_replicas(replicas[:2], 2)


# -- a replica killed mid-burst -------------------------------------------------------------------


def test_a_replica_killed_midway_through_a_burst_of_claims_loses_and_doubles_nothing(twobits_factory, postgres):
    started_at = time.monotonic()
    devices_count, workers = 120, 24
    month = current_month()
    deployment = twobits_factory("burst", autostart=False, **replica_options(postgres.create_database("burst")))
    deployment.start_sandbox()
    replicas = deployment.start_replicas(3)
    victim = replicas[1]

    with ThreadPoolExecutor(16) as pool:
        device_ids = list(pool.map(lambda _: deployment.new_device(), range(devices_count)))
        tokens = list(pool.map(deployment.mint, device_ids))
    keys = [f"burst-{i}-{uuid.uuid4()}" for i in range(devices_count)]
    assert deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 15}).status == 200

    sent = 0
    sent_lock = threading.Lock()
    halfway, killed = threading.Event(), threading.Event()

    def settle(i):
        """Claims device i on replica i % 3 first; on a cut connection, a 5xx or `request_in_progress`
        retries on the next replica, until answered (bounded)."""
        nonlocal sent
        with sent_lock:
            sent += 1
            if sent >= devices_count // 2:
                halfway.set()
        attempts, k = [], i % 3
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            replica = replicas[k % 3]
            k += 1
            if replica is victim and killed.is_set():
                continue
            try:
                answer = claim(replica, tokens[i], keys[i])
            except (OSError, HTTPException) as error:  # the victim is gone (reset, refused)
                attempts.append((replica.name, error))
                continue
            if answer.status == 409 and answer.error_code == "request_in_progress" or answer.status >= 500:
                attempts.append((replica.name, answer))
                time.sleep(min(1.0, float(answer.headers.get("Retry-After") or 1)) / 4)
                continue
            return answer, attempts
        return None, attempts

    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(settle, i) for i in range(devices_count)]
        assert halfway.wait(30), "the claims never got halfway"
        victim.kill()
        killed.set()
        outcomes = [f.result() for f in futures]

    cut_off = {i for i, (_, attempts) in enumerate(outcomes)
               if any(name == victim.name and isinstance(what, Exception) for name, what in attempts)}
    assert cut_off, "the kill cut off no claim: it did not land mid-burst"
    unanswered = [i for i, (answer, _) in enumerate(outcomes) if answer is None]
    assert not unanswered, f"{len(unanswered)} claims never answered, e.g. {outcomes[unanswered[0]][1][-3:]}"
    problems = [(i, a) for i, (a, _) in enumerate(outcomes) if a.status != 200 or not a.json.get("claimed")]
    assert not problems, f"{len(problems)} claims not answered 200 claimed, e.g. {problems[:3]}"
    assert all(a.json["claimed_month"] == month for a, _ in outcomes)
    print(f"burst: {len(cut_off)} claims cut off by the kill, "
          f"{sum(len(at) for _, at in outcomes)} retries in all")

    # Apple's side: every device claimed by exactly one write (0 lost, 0 doubled).
    time.sleep(0.1)
    for device_id in device_ids:
        state = deployment.device(device_id)
        assert state["bit0"] is True and state["bit1"] is False and state["updates"] == 1, (device_id, state)

    # The ledger, read from a survivor, agrees: at most one successful claim per device token, as written.
    prefixes = {prefix(token): i for i, token in enumerate(tokens)}
    claimed = {}
    for event in replicas[2].audit_events():
        if event["action"] == "promotion.claim" and event["result"] == "ok":
            p = event.get("token_sha256_prefix")
            assert p in prefixes, event
            assert p not in claimed, f"two successful claims for token {p}: {claimed[p]} and {event}"
            claimed[p] = event
            assert event.get("bits_after") == f"(1,0)@{month}", event
    # A claim without its event can only be one whose Apple write the kill cut off before it was recorded.
    missing = {i for p, i in prefixes.items() if p not in claimed}
    assert missing <= cut_off, f"{len(missing - cut_off)} claims without an audit event"
    for survivor in (replicas[0], replicas[2]):
        assert http("GET", survivor.url + "/readyz").status == 200
    assert time.monotonic() - started_at < 60


# -- PostgreSQL stopped under load -------------------------------------------------------------------


def test_postgres_stopped_under_load_gives_503s_then_recovers_without_a_restart(twobits_factory, private_postgres):
    pg = private_postgres
    deployment = twobits_factory("outage", autostart=False, **replica_options(
        pg.create_database("outage"), database_pool_wait_ms=500))
    deployment.start_sandbox()
    replicas = deployment.start_replicas(2)

    # A token issued before the outage, verified during it (no storage needed).
    issued = replicas[0].exchange(deployment.mint(deployment.new_device()))
    assert issued.status == 201, issued
    token = issued.json["token"]

    stop = threading.Event()
    log_lock = threading.Lock()
    exchanges, claims = [], []  # (device token, answer or exception) / (device id, token, key, answer)

    def exchanging(worker):
        device_id, n = deployment.new_device(), 0
        while not stop.is_set():
            device_token = deployment.mint(device_id)
            try:
                answer = replicas[n % 2].exchange(device_token)
            except OSError as error:
                answer = error
            with log_lock:
                exchanges.append((device_token, answer))
            n += 1
            time.sleep(0.02)

    def claiming(worker):
        n = 0
        while not stop.is_set():
            device_id = deployment.new_device()
            device_token = deployment.mint(device_id)
            key = f"outage-{worker}-{n}-{uuid.uuid4()}"
            try:
                answer = claim(replicas[(n + 1) % 2], device_token, key)
            except OSError as error:
                answer = error
            with log_lock:
                claims.append((device_id, device_token, key, answer))
            n += 1
            time.sleep(0.02)

    load = [threading.Thread(target=exchanging, args=(0,)), threading.Thread(target=claiming, args=(0,)),
            threading.Thread(target=claiming, args=(1,))]
    for t in load:
        t.start()
    try:
        time.sleep(1.0)
        pg.stop()
        stopped_at = time.monotonic()
        down = []  # (what, seconds since the stop, answer) while PostgreSQL is down
        while time.monotonic() - stopped_at < 3.5:
            for replica in replicas:
                for what, ask in (("readyz", lambda: replica.get("/readyz")),
                                  ("jwks", lambda: replica.get("/.well-known/jwks.json")),
                                  ("verify", lambda: replica.verify(token))):
                    down.append((what, time.monotonic() - stopped_at, ask()))
            time.sleep(0.2)
        with log_lock:
            during = len(exchanges) + len(claims)
        pg.resume()
        resumed_at = time.monotonic()
        # 200s again within a few seconds, on every replica, with no restart.
        recovered = {}
        while len(recovered) < len(replicas) and time.monotonic() - resumed_at < 10:
            for replica in replicas:
                if replica.name not in recovered and replica.exchange(deployment.mint(deployment.new_device())).status == 201:
                    recovered[replica.name] = round(time.monotonic() - resumed_at, 2)
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        stop.set()
        for t in load:
            t.join(30)
    print(f"outage: {during} requests before the resume; recovered after {recovered} s")
    assert len(recovered) == len(replicas), f"not recovered 10 s after the resume: {recovered}\n{replicas[0].log()[-3000:]}"
    assert max(recovered.values()) < 5.0, recovered
    for replica in replicas:
        assert replica.alive(), f"{replica.name} exited"

    # While down: not ready (storage, a reason without the password), JWKS and verification still served.
    for what, since, answer in down:
        if what == "readyz":
            # The storage check's verdict is reused for 2 s (docs/openapi.yaml): later ones are fresh.
            if since > 2.2 or answer.status != 200:
                assert answer.status == 503 and answer.json["ready"] is False, (since, answer)
                assert answer.json["checks"]["storage"].startswith("failed"), answer
        elif what == "jwks":
            assert answer.status == 200 and answer.json["keys"], answer
        else:
            assert answer.status == 200 and answer.json["valid"] is True, answer
    assert_password_absent(deployment, pg.password, *(a.raw.decode(errors="replace") for _, _, a in down))

    # Storage routes: 503 storage_unavailable with Retry-After while down, never a 500.
    answers = [a for _, a in exchanges] + [c[3] for c in claims]
    assert not [a for a in answers if isinstance(a, Exception)], [a for a in answers if isinstance(a, Exception)][:3]
    assert {a.status for a in answers} <= {200, 201, 503}, sorted({a.status for a in answers})
    unavailable = [a for a in answers if a.status == 503]
    assert unavailable, "no request met the outage"
    for a in unavailable:
        assert a.error_code == "storage_unavailable" and a.headers.get("Retry-After"), a
    assert [a for a in answers if a.status in (200, 201)], "no request succeeded"

    # No half-written record: every request refused while down goes through when retried.
    for device_token, answer in exchanges:
        if answer.status == 503:
            again = replicas[0].exchange(device_token)
            assert again.status == 201, f"a device token refused with 503 is now {again}"
    for device_id, device_token, key, answer in claims:
        if answer.status == 503:
            # As a client would: `request_in_progress` is retried after its Retry-After, for a while.
            deadline = time.monotonic() + 8
            again = claim(replicas[1], device_token, key)
            while again.error_code == "request_in_progress" and time.monotonic() < deadline:
                time.sleep(float(again.headers.get("Retry-After") or 1))
                again = claim(replicas[1], device_token, key)
            assert again.status == 200 and again.json["claimed"] is True, (
                f"a claim refused with 503 while PostgreSQL was down, retried with its key: {again}")
        state = deployment.device(device_id)
        assert state["updates"] == 1 and state["bit0"] is True, state
    # Every claim audited `ok` once. A resolution the outage kept from being saved (Apple had answered, the
    # ledger had not) is saved by its replica's one-second retry: allow it a few seconds.
    deadline = time.monotonic() + 5
    while True:
        events = [e for e in replicas[0].audit_events() if e["action"] == "promotion.claim"]
        ok_claims = [e.get("token_sha256_prefix") for e in events if e["result"] == "ok"]
        if len(ok_claims) == len(claims) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert len(ok_claims) == len(set(ok_claims)) == len(claims), sorted({e["result"] for e in events})
    assert not [e for e in events if e["result"] == "pending"], "a resolution lost to the outage was never saved"
    assert_password_absent(deployment, pg.password)


# -- PostgreSQL failover to a streaming standby ------------------------------------------------------


@pytest.fixture
def postgres_pair():
    """A primary of this test's own and a streaming standby of it (`.ci/postgres.sh standby`): yields the
    primary (a PostgresCluster) and the standby's directory (its port in `port`)."""
    missing = postgres_available()
    if missing:
        if os.environ.get("TWOBITS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"TWOBITS_REQUIRE_POSTGRES=1 but {missing}")
        pytest.skip(missing)
    primary = PostgresCluster.start()
    standby_dir = None
    try:
        result = subprocess.run([str(POSTGRES_SCRIPT), "standby", primary.dir], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        standby_dir = re.search(r"^export TWOBITS_TEST_POSTGRES_STANDBY_DIR='([^']*)'$", result.stdout, re.M).group(1)
        yield primary, standby_dir
    finally:
        if standby_dir:
            subprocess.run([str(POSTGRES_SCRIPT), "destroy", standby_dir], capture_output=True, timeout=60)
        primary.destroy()


def test_failover_to_a_promoted_standby_under_load_loses_and_doubles_nothing(twobits_factory, postgres_pair):
    """Three replicas on a URI naming the primary and its standby with `target_session_attrs=read-write`.
    Under a running load of exchanges and keyed claims the primary is stopped and the standby promoted
    (the order an operator must keep: the old primary fenced before the new one takes writes). Nothing is
    lost or doubled, no answer is a 500, and every replica answers 2xx again within 30 s, without a restart."""
    primary, standby_dir = postgres_pair
    standby_port = Path(standby_dir, "port").read_text().strip()
    single = primary.create_database("failover")
    host = re.search(r"@(127\.0\.0\.1:\d+)/", single).group(1)
    database = single.replace(f"@{host}/", f"@{host},127.0.0.1:{standby_port}/") + "?target_session_attrs=read-write"
    deployment = twobits_factory("failover", autostart=False, **replica_options(database, database_pool_wait_ms=500))
    deployment.start_sandbox()
    replicas = deployment.start_replicas(3)

    stop = threading.Event()
    log_lock = threading.Lock()
    exchanges, claims = [], []  # (device token, answer) / (device id, token, key, answer)

    def exchanging(worker):
        device_id, n = deployment.new_device(), 0
        while not stop.is_set():
            device_token = deployment.mint(device_id)
            try:
                answer = replicas[(n + worker) % 3].exchange(device_token)
            except OSError as error:
                answer = error
            with log_lock:
                exchanges.append((device_token, answer))
            n += 1
            time.sleep(0.02)

    def claiming(worker):
        n = 0
        while not stop.is_set():
            device_id = deployment.new_device()
            device_token = deployment.mint(device_id)
            key = f"failover-{worker}-{n}-{uuid.uuid4()}"
            try:
                answer = claim(replicas[(n + worker) % 3], device_token, key)
            except OSError as error:
                answer = error
            with log_lock:
                claims.append((device_id, device_token, key, answer))
            n += 1
            time.sleep(0.02)

    load = [threading.Thread(target=exchanging, args=(w,)) for w in range(3)] + \
           [threading.Thread(target=claiming, args=(w,)) for w in range(3)]
    for t in load:
        t.start()
    try:
        time.sleep(1.5)
        with log_lock:
            before = len(exchanges) + len(claims)
        primary.stop()
        stopped_at = time.monotonic()
        time.sleep(0.5)
        subprocess.run([str(POSTGRES_SCRIPT), "promote", standby_dir], check=True, capture_output=True, timeout=60)
        promoted_after = time.monotonic() - stopped_at
        # Every replica back to 2xx within 30 s of the stop, without a restart.
        recovered = {}
        while len(recovered) < len(replicas) and time.monotonic() - stopped_at < 30:
            for replica in replicas:
                if replica.name not in recovered and replica.exchange(deployment.mint(deployment.new_device())).status == 201:
                    recovered[replica.name] = round(time.monotonic() - stopped_at, 2)
            time.sleep(0.1)
        time.sleep(1.0)
    finally:
        stop.set()
        for t in load:
            t.join(30)
    print(f"failover: {before} requests before the stop, {len(exchanges) + len(claims)} in all; promoted "
          f"{promoted_after:.2f} s after the stop; 2xx again after {recovered} s")
    assert len(recovered) == len(replicas), f"not back to 2xx 30 s after the stop: {recovered}\n{replicas[0].log()[-3000:]}"
    for replica in replicas:
        assert replica.alive(), f"{replica.name} exited"

    # No 500: 503 storage_unavailable with Retry-After while no primary takes writes.
    answers = [a for _, a in exchanges] + [c[3] for c in claims]
    assert not [a for a in answers if isinstance(a, Exception)], [a for a in answers if isinstance(a, Exception)][:3]
    assert {a.status for a in answers} <= {200, 201, 503}, sorted({a.status for a in answers})
    for a in answers:
        if a.status == 503:
            assert a.error_code == "storage_unavailable" and a.headers.get("Retry-After"), a
    assert [a for a in answers if a.status == 503], "no request met the failover"

    # 0 lost: a device token accepted before the failover is still known to the new primary (refused as
    # reused); one refused with 503 left nothing behind (accepted now).
    def exchanged_again(entry):
        device_token, answer = entry
        again = replicas[len(device_token) % 3].exchange(device_token)
        if answer.status == 201:
            assert again.status == 409 and again.error_code == "device_token_reused", (answer, again)
        else:
            assert again.status == 201, f"a device token refused with 503 is now {again}"

    # 0 doubled, 0 lost: every claim, retried with its key as a client would, answers claimed; Apple wrote
    # each device once; the audit trail holds one `ok` claim per device.
    def claimed_again(entry):
        device_id, device_token, key, answer = entry
        deadline = time.monotonic() + 10
        again = claim(replicas[1], device_token, key)
        while (again.error_code == "request_in_progress" or again.status == 503) and time.monotonic() < deadline:
            time.sleep(min(1.0, float(again.headers.get("Retry-After") or 1)))
            again = claim(replicas[1], device_token, key)
        assert again.status == 200 and again.json["claimed"] is True, (answer, again)
        if answer.status == 200:
            assert again.headers.get("Idempotent-Replayed") == "true" and again.json == answer.json, (answer, again)
        state = deployment.device(device_id)
        assert state["updates"] == 1 and state["bit0"] is True, state

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(exchanged_again, exchanges))
        list(pool.map(claimed_again, claims))
    deadline = time.monotonic() + 5
    while True:
        events = [e for e in replicas[0].audit_events() if e["action"] == "promotion.claim"]
        ok_claims = [e.get("token_sha256_prefix") for e in events if e["result"] == "ok"]
        if len(ok_claims) == len(claims) or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert len(ok_claims) == len(set(ok_claims)) == len(claims), sorted({e["result"] for e in events})
    assert_password_absent(deployment, primary.password)


def test_a_replica_starting_while_the_first_host_of_its_list_is_dead_waits_for_the_pool_instead_of_exiting(twobits_factory, postgres):
    """Found by the fault campaign (docs/testing.md): after a failover the fenced primary stays the first host of
    the list, and every new connection waits `connect_timeout` on it before reaching the new primary. A replica
    restarted then found its pool busy opening connections (longer than `database_pool_wait_ms`) and exited with
    `configuration error: database: cannot record the signing key's activation`. It now waits that out. The dead
    host here is a socket that accepts and never answers."""
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead.listen(64)
    try:
        single = postgres.create_database("deadfirst")
        host = re.search(r"@(127\.0\.0\.1:\d+)/", single).group(1)
        database = single.replace(f"@{host}/", f"@127.0.0.1:{dead.getsockname()[1]},{host}/") + \
            "?target_session_attrs=read-write&connect_timeout=2"
        deployment = twobits_factory("deadfirst", autostart=False, **replica_options(database, database_pool_wait_ms=500))
        deployment.start_sandbox()
        process = deployment._spawn("server", ["serve", "--config", str(deployment.config_path)])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if http("GET", deployment.url + "/readyz", timeout=2).status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert process.poll() is None, f"the replica exited {process.returncode}:\n{deployment.server_log()[-2000:]}"
        assert deployment.exchange(deployment.mint(deployment.new_device())).status == 201
    finally:
        dead.close()


# -- the command line: migrate, a newer schema, ledger copy --------------------------------------------


def schema_version_table(pg, database):
    """(table, column) of the schema version the PostgreSQL ledger records (the only user table with a
    column named like `version` after a migration on an empty database)."""
    rows = pg.psql("SELECT table_schema || '.' || table_name, column_name FROM information_schema.columns "
                   "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND column_name ILIKE '%version%' "
                   "AND data_type IN ('integer', 'bigint', 'smallint')", database).split()
    candidates = [tuple(r.split("|")) for r in rows]
    assert len(candidates) == 1, f"cannot tell the schema version table among {candidates}"
    return candidates[0]


def test_migrate_serve_and_a_newer_schema_is_refused(twobits_factory, postgres):
    uri = postgres.create_database("migrate")
    database = uri.rsplit("/", 1)[1]
    deployment = twobits_factory("migrate", autostart=False, **replica_options(uri))

    first = deployment.cli("migrate", "--database", uri)
    again = deployment.cli("migrate", "--database", uri)  # nothing left to apply: still fine
    deployment.start_sandbox()
    deployment.start_server()
    assert deployment.exchange(deployment.mint(deployment.new_device())).status == 201
    deployment.kill_server(signal.SIGTERM)

    # A schema newer than this binary knows: the replica refuses to start, and says why.
    table, column = schema_version_table(postgres, database)
    count = int(postgres.psql(f"SELECT count(*) FROM {table}", database))
    known = int(postgres.psql(f"SELECT max({column}) FROM {table}", database))
    if count == 1:
        postgres.psql(f"UPDATE {table} SET {column} = {known + 100}", database)
    else:
        postgres.psql(f"INSERT INTO {table} ({column}) VALUES ({known + 100})", database)
    process = deployment._spawn("refused", ["serve", "--config", str(deployment.config_path)])
    process.wait(timeout=20)
    refusal = deployment.logs["refused"].read_text(errors="replace")
    assert process.returncode != 0, refusal
    assert "newer" in refusal.lower() and str(known + 100) in refusal, refusal
    migrate_refusal = deployment.cli("migrate", "--database", uri, check=False)
    assert migrate_refusal.returncode != 0
    assert "newer" in (migrate_refusal.stderr + migrate_refusal.stdout).lower(), migrate_refusal

    # A wrong password: refused, and the message does not repeat it.
    wrong = "wrong-" + uuid.uuid4().hex
    bad_uri = uri.replace(postgres.password, wrong)
    failed = deployment.cli("migrate", "--database", bad_uri, check=False)
    assert failed.returncode != 0
    assert wrong not in failed.stdout + failed.stderr, failed.stderr
    assert_password_absent(deployment, postgres.password, first.stdout, first.stderr, again.stdout, again.stderr,
                           migrate_refusal.stdout, migrate_refusal.stderr, failed.stdout, failed.stderr)


def copy_counts(output):
    """{table: (source, target)} from `twobits ledger copy`'s report (a line per table naming both counts)."""
    counts = {}
    for line in output.splitlines():
        match = re.match(r"^\s*([A-Za-z_][\w .-]*?)\s*[:=]?\s+(\d+)\D+?(\d+)\b", line)
        if match:
            counts[match.group(1).strip()] = (int(match.group(2)), int(match.group(3)))
    return counts


def test_ledger_copy_moves_a_served_sqlite_ledger_into_postgres(twobits_factory, postgres):
    deployment = twobits_factory("copy", **replica_options("twobits.sqlite"))
    # Some traffic on SQLite: exchanges, a consumed limited-use token, an idempotent claim, a pending ban.
    spent = deployment.mint(deployment.new_device())
    assert deployment.exchange(spent, install_id="install-copy").status == 201
    limited = deployment.exchange(deployment.mint(deployment.new_device()), limited_use=True).json["token"]
    assert deployment.verify(limited, consume=True).json["already_consumed"] is False
    claimed_device = deployment.new_device()
    claim_token, claim_key = deployment.mint(claimed_device), "copy-claim-1"
    first_claim = claim(deployment, claim_token, claim_key)
    assert first_claim.status == 200, first_claim
    assert deployment.post("/v1/admin/bans", {"install_id": "install-later", "reason": "copied"}, client="ops").status == 202
    before = deployment.audit_events()
    deployment.kill_server(signal.SIGTERM)

    uri = postgres.create_database("copy")
    copied = deployment.cli("ledger", "copy", "--from", "twobits.sqlite", "--to", uri)
    counts = copy_counts(copied.stdout + copied.stderr)
    assert counts, f"no counts printed: {copied.stdout}{copied.stderr}"
    assert all(source == target for source, target in counts.values()), counts
    assert any(source > 0 for source, _ in counts.values()), counts
    audit = [v for k, v in counts.items() if "audit" in k.lower()]
    assert audit and audit[0][0] == len(before), (counts, len(before))

    refused = deployment.cli("ledger", "copy", "--from", "twobits.sqlite", "--to", uri, check=False)
    assert refused.returncode != 0
    assert "empty" in (refused.stderr + refused.stdout).lower(), refused

    # Serving on PostgreSQL now: the old history and every promise of the SQLite ledger.
    deployment.config["database"] = uri
    deployment.config_path.write_text(json.dumps(deployment.config, indent=2))
    deployment.start_server()
    after = deployment.audit_events()
    old = [e for e in after if e["id"] in {b["id"] for b in before}]
    assert old == before
    assert deployment.exchange(spent).error_code == "device_token_reused"
    assert deployment.verify(limited, consume=True).json["already_consumed"] is True
    replay = claim(deployment, claim_token, claim_key)
    assert replay.status == 200 and replay.headers.get("Idempotent-Replayed") == "true", replay
    assert replay.json == first_claim.json
    assert deployment.device(claimed_device)["updates"] == 1
    assert "install-later" in pending_installs(deployment)
    assert_password_absent(deployment, postgres.password, copied.stdout, copied.stderr, refused.stdout, refused.stderr,
                           deployment.get("/readyz").raw.decode())


def copy_digests(output):
    """{table: SHA-256} from `twobits ledger copy`'s report (one 64-hex digest per table line)."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\w+)\s+\d+\s+\d+\s+([0-9a-f]{64})\s*$", output, re.M)}


def test_ledger_copy_refuses_what_it_cannot_copy_exactly_and_compares_values(twobits_factory, postgres):
    """A REAL out of BIGINT's range used to kill the copy with SIGILL; a text with a NUL arrived cut at it, a
    blob arrived as the text `\\x…`, and both were reported as "every count matches"."""
    deployment = twobits_factory("copy-exact", **replica_options("twobits.sqlite"))
    assert deployment.exchange(deployment.mint(deployment.new_device())).status == 201
    assert deployment.post("/v1/admin/bans", {"install_id": "install-exact", "reason": "copied"}, client="ops").status == 202
    deployment.kill_server(signal.SIGTERM)
    ledger = deployment.dir / "twobits.sqlite"
    with sqlite3.connect(ledger) as db:
        row = db.execute("SELECT max(id) FROM audit_events").fetchone()[0]
        reason = db.execute("SELECT reason FROM audit_events WHERE id = ?", (row,)).fetchone()[0]

    uri = postgres.create_database("copyexact")
    database = uri.rsplit("/", 1)[1]
    copied = deployment.cli("ledger", "copy", "--from", "twobits.sqlite", "--to", uri)
    digests = copy_digests(copied.stdout)
    assert "audit_events" in digests and len(digests) == len(copy_counts(copied.stdout)), copied.stdout

    # A value changed, counts unchanged: the digest moves.
    with sqlite3.connect(ledger) as db:
        db.execute("UPDATE audit_events SET reason = ? WHERE id = ?", ("changed", row))
    again = deployment.cli("ledger", "copy", "--from", "twobits.sqlite", "--to", uri, "--replace")
    assert copy_digests(again.stdout)["audit_events"] != digests["audit_events"], again.stdout
    assert postgres.psql(f"SELECT reason FROM audit_events WHERE id = {row}", database).strip() == "changed"

    for value, problem in [(1e300, "REAL"), ("a\x00b", "NUL"), (b"\xff\x00", "blob")]:
        column = "at_ms" if problem == "REAL" else "reason"
        with sqlite3.connect(ledger) as db:
            db.execute(f"UPDATE audit_events SET {column} = ? WHERE id = ?", (value, row))
        refused = deployment.cli("ledger", "copy", "--from", "twobits.sqlite", "--to", uri, "--replace", check=False)
        said = refused.stdout + refused.stderr
        assert refused.returncode > 0, (problem, refused.returncode, said)  # an exit, not a signal (SIGILL was -4)
        assert f"table audit_events, column {column}, rowid {row}" in said and problem in said, said
        assert "copied" not in refused.stdout, said
        # The target is as the last good copy left it.
        assert postgres.psql(f"SELECT reason FROM audit_events WHERE id = {row}", database).strip() == "changed"
        with sqlite3.connect(ledger) as db:
            db.execute("UPDATE audit_events SET at_ms = 1, reason = ? WHERE id = ?", (reason, row))

"""Issue 3's crash test: idempotent promotion claims survive a SIGKILL of the server.

A few hundred sandbox devices each send one claim with an Idempotency-Key, concurrently. The server
is killed with SIGKILL about halfway, restarted on the same configuration and database, and every
request is retried with its own key (same device token, same key). Afterwards each device has
exactly one successful claim: every final answer is 200 claimed, none is 409 already_claimed, the
sandbox's bits show the promotion bit set by exactly one write, and the ledger's audit trail holds
at most one successful promotion.claim per device token.
"""
import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from conftest import current_month, http

DEVICES = 300
WORKERS = 32
PROMOTION = "spring"


def test_claims_survive_a_sigkill_midway(twobits_factory):
    started_at = time.monotonic()
    month = current_month()
    deployment = twobits_factory(layout={"bit0": "promotion", "bit1": "ban"},
                                 promotions=[{"id": PROMOTION, "starts": month}],
                                 extra={"server": {"threads": 8}})

    # Devices and one fresh token each (the sandbox's control API, in parallel).
    def make_device(_):
        device_id = deployment.new_device()
        return device_id, deployment.mint(device_id)

    with ThreadPoolExecutor(WORKERS) as pool:
        devices = list(pool.map(make_device, range(DEVICES)))
    keys = [f"crash-{i}-{device_id}" for i, (device_id, _) in enumerate(devices)]

    # A little Apple latency keeps claims in flight when the kill lands.
    assert deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 15}).status == 200

    def claim(i, timeout=20):
        _, token = devices[i]
        return deployment.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": token}, client="marketing",
                               headers={"Idempotency-Key": keys[i]}, timeout=timeout)

    sent = 0
    sent_lock = threading.Lock()
    halfway = threading.Event()

    def first_attempt(i):
        nonlocal sent
        with sent_lock:
            sent += 1
            if sent >= DEVICES // 2:
                halfway.set()
        try:
            return claim(i)
        except OSError as error:  # connection reset or refused: the server is gone
            return error

    with ThreadPoolExecutor(WORKERS) as pool:
        futures = [pool.submit(first_attempt, i) for i in range(DEVICES)]
        assert halfway.wait(30), "the claims never got halfway"
        deployment.kill_server()
        first = [f.result() for f in futures]

    answered = [r for r in first if not isinstance(r, Exception)]
    failed = [r for r in first if isinstance(r, Exception)]
    # The kill really was midway: some claims were answered, some were cut off.
    assert answered and failed, f"{len(answered)} answered, {len(failed)} cut off"
    for r in answered:
        # Before the crash every device claims for the first time; nothing may have been refused.
        assert r.status == 200 and r.json["claimed"] is True, r

    # Bits Apple holds right after the crash: some claims may be written without their answer.
    # (Wait out the sandbox's latency so writes that were already on their way have landed.)
    time.sleep(0.3)
    written_before_restart = {device_id for device_id, _ in devices if deployment.device(device_id)["bit0"]}
    print(f"crash: {len(answered)} answered, {len(failed)} cut off, {len(written_before_restart)} written at Apple before the restart")

    deployment.start_server()
    with ThreadPoolExecutor(WORKERS) as pool:
        final = list(pool.map(claim, range(DEVICES)))

    problems = [(i, r) for i, r in enumerate(final) if r.status != 200 or not (r.json or {}).get("claimed")]
    assert not problems, f"{len(problems)} retries did not answer 200 claimed, e.g. {problems[:3]}\n{deployment.server_log()[-3000:]}"
    assert not any(r.error_code == "already_claimed" for r in final)
    assert all(r.json["claimed_month"] == month for r in final)
    # Claims answered before the crash are replayed from the ledger, not re-run.
    for i, r in enumerate(first):
        if not isinstance(r, Exception):
            assert final[i].headers.get("Idempotent-Replayed") == "true", (i, final[i])

    # Apple's side (the sandbox): the promotion bit is set on every device, by exactly one write.
    for device_id, _ in devices:
        state = deployment.device(device_id)
        assert state["bit0"] is True and state["bit1"] is False, state
        assert state["last_update_time"] == month, state
        assert state["updates"] == 1, state

    # The ledger: at most one successful promotion.claim per device token, and what it recorded
    # writing is what the sandbox holds.
    prefixes = {hashlib.sha256(token.encode()).hexdigest()[:12]: device_id for device_id, token in devices}
    claims_ok = {}
    for event in deployment.audit_events():
        if event["action"] == "promotion.claim" and event["result"] == "ok":
            assert event.get("subject") == PROMOTION
            prefix = event.get("token_sha256_prefix")
            assert prefix in prefixes, event
            assert prefix not in claims_ok, f"two successful claims for token {prefix}: {claims_ok[prefix]} and {event}"
            claims_ok[prefix] = event
            assert event.get("bits_after") == f"(1,0)@{month}", event
            # A write cut off by the kill has no transaction id: its retry's query settled it `ok`.
            assert event.get("transaction_id") or "settled by a later query" in (event.get("reason") or ""), event
    # Every device whose claim Apple had not received before the crash was claimed after the
    # restart, which always records its audit event.
    missing = {device_id for prefix, device_id in prefixes.items() if prefix not in claims_ok}
    assert missing <= written_before_restart, f"{len(missing - written_before_restart)} claims without an audit event"

    # The sandbox's bits agree with the ledger's reading of them.
    for device_id, token in devices[:20]:
        state = deployment.post("/v1/admin/devices/state", {"device_token": token}, client="ops")
        assert state.status == 200, state
        assert [c["promotion"] for c in state.json["meaning"]["promotions"]] == [PROMOTION]

    assert time.monotonic() - started_at < 60
    assert http("GET", deployment.url + "/readyz").status == 200

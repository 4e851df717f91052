"""Issue 12, items 5-9 (storage): the real binary against the real sandbox, with its SQLite ledger made
read-only, corrupted, deleted or its disk filled while it runs, and Apple's updates timing out or the
server killed.

- An Apple write needs its intent recorded first: with the ledger unwritable, every route that writes
  answers 503 `storage_unavailable` with `Retry-After`, shows no SQLite text, and the sandbox's update
  counter does not move.
- `/readyz` proves a write (read-only ledger: not ready) and notices a deleted database file.
- Every Apple write is audited with its real outcome: an update that timed out is `unknown` (never
  `failed`), settled `ok` or `failed` by the retry's query; after `kill -9` every write the sandbox
  applied has an audit event, none stays `pending` after the restart.
- The database and its -wal/-shm are created 0600.

The read-only case uses `chattr +i` (root on ext4, like CI and this machine): a chmod does not stop root.
The full-disk case mounts a 2 MiB tmpfs (skipped where mounting is not allowed).
"""
import hashlib
import os
import sqlite3
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

import pytest

from conftest import current_month, http

PROMOTION = "spring"
SQLITE_WORDS = ("sqlite", "disk i/o", "database", "readonly", "read-only", "malformed", "not a database", "twobits.sqlite")


def deploy(factory, **extra):
    month = current_month()
    return factory(layout={"bit0": "promotion", "bit1": "ban"}, promotions=[{"id": PROMOTION, "starts": month}], extra=extra or None)


def prefix(token):
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def updates(deployment):
    answer = deployment.sandbox("GET", "/sandbox/v1/counters")
    assert answer.status == 200, answer
    return answer.json["calls"].get("update_two_bits", 0)


def database(deployment):
    return deployment.dir / "twobits.sqlite"


def chattr(flag, *paths):
    subprocess.run(["chattr", flag, *[str(p) for p in paths if os.path.exists(p)]], check=True, capture_output=True)


def claim(deployment, token, key=None, timeout=20):
    headers = {"Idempotency-Key": key} if key else None
    return deployment.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": token}, client="marketing", headers=headers, timeout=timeout)


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def writes_refused(deployment):
    """Every route that writes, against a broken ledger: 503 storage_unavailable, no SQLite text."""
    device = deployment.new_device()
    tokens = [deployment.mint(device) for _ in range(5)]
    answers = {
        "claim": claim(deployment, tokens[0]),
        "claim with key": claim(deployment, tokens[1], key="hostile-1"),
        "ban": deployment.post("/v1/admin/bans", {"device_token": tokens[2], "reason": "fraud"}, client="ops"),
        "unban": deployment.post("/v1/admin/unbans", {"device_token": tokens[3]}, client="ops"),
        "pending ban": deployment.post("/v1/admin/bans", {"install_id": "install-9", "reason": "fraud"}, client="ops"),
    }
    for route, answer in answers.items():
        assert answer.status == 503 and answer.error_code == "storage_unavailable", (route, answer)
        assert answer.headers.get("Retry-After"), (route, answer.headers)
        body = answer.raw.decode(errors="replace").lower()
        assert not any(word in body for word in SQLITE_WORDS), (route, body)
    return device


def test_a_read_only_ledger_answers_503_and_writes_nothing_at_apple(twobits_factory):
    deployment = deploy(twobits_factory)
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200  # the WAL exists
    before = updates(deployment)
    path = database(deployment)
    chattr("+i", path, f"{path}-wal")
    try:
        device = writes_refused(deployment)
        assert updates(deployment) == before, "Apple was written although the intent could not be recorded"
        assert deployment.device(device)["updates"] == 0
        # Readiness proves a write; its verdict is cached at most a few seconds.
        ready = wait_for(lambda: (lambda r: r if r.status == 503 else None)(http("GET", deployment.url + "/readyz")), 6, "/readyz to fail")
        assert ready.json["checks"]["storage"].startswith("failed"), ready
        assert not any(word in ready.raw.decode().lower() for word in ("sqlite", "disk i/o")), ready
        wait_for(lambda: "disk I/O" in deployment.server_log(), 3, "the cause in the server's log")
    finally:
        chattr("-i", path, f"{path}-wal")
    wait_for(lambda: http("GET", deployment.url + "/readyz").status == 200, 6, "/readyz to recover")
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200


def test_a_resolution_the_ledger_refused_is_saved_once_it_is_writable_without_a_request(twobits_factory):
    """Apple wrote, then the ledger refused to store the write's resolution: the claim still answers 200, the
    event stays `pending` while the file is read-only, and is settled `ok` within a few seconds of the file
    being writable again, with no further request (the service retries every second, not at restart)."""
    deployment = deploy(twobits_factory, apple={"timeout_ms": 6000})
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200  # the WAL exists
    device = deployment.new_device()
    token = deployment.mint(device)
    # The update is held 1.5 s, then answered 503; the client's retry writes.
    fault = {"kind": "timeout", "count": 1, "endpoint": "update_two_bits", "delay_ms": 1500}
    assert deployment.sandbox("POST", "/sandbox/v1/faults", fault).status == 201

    def mine():
        return [e for e in deployment.audit_events() if e["action"] == "promotion.claim" and e["token_sha256_prefix"] == prefix(token)]

    path = database(deployment)
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(claim, deployment, token)
        wait_for(lambda: [e for e in mine() if e["result"] == "pending"], 5, "the claim's pending intent")
        chattr("+i", path, f"{path}-wal")
        try:
            assert answer.result().status == 200, answer.result()
            assert deployment.device(device)["updates"] == 1
            time.sleep(1.5)  # retries meet the read-only file
            assert [e["result"] for e in mine()] == ["pending"], mine()
            assert "\ntwobits_ledger_unsaved_resolutions 1\n" in deployment.get("/metrics").raw.decode()
        finally:
            chattr("-i", path, f"{path}-wal")
    settled = wait_for(lambda: [e for e in mine() if e["result"] == "ok"], 5, "the kept resolution to be saved")
    assert settled[0].get("transaction_id"), settled
    assert len(mine()) == 1
    assert "\ntwobits_ledger_unsaved_resolutions 0\n" in deployment.get("/metrics").raw.decode()


def test_a_keyed_claim_apple_wrote_answers_the_claim_when_its_answer_cannot_be_stored(twobits_factory):
    """Issue 34: Apple wrote, then the ledger refused both the write's resolution and the answer to store under
    the `Idempotency-Key`. The claim answers 200 (503 `storage_unavailable` would say nothing was written);
    once the file is writable again the kept answer is stored without a request, and the retry with the key
    gets it replayed byte for byte, without a second write at Apple."""
    deployment = deploy(twobits_factory, apple={"timeout_ms": 6000})
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200  # the WAL exists
    device = deployment.new_device()
    token = deployment.mint(device)
    # The update is held 1.5 s, then answered 503; the client's retry writes.
    fault = {"kind": "timeout", "count": 1, "endpoint": "update_two_bits", "delay_ms": 1500}
    assert deployment.sandbox("POST", "/sandbox/v1/faults", fault).status == 201

    def mine():
        return [e for e in deployment.audit_events() if e["action"] == "promotion.claim" and e["token_sha256_prefix"] == prefix(token)]

    path = database(deployment)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(claim, deployment, token, "keyed-after-apple")
        wait_for(lambda: [e for e in mine() if e["result"] == "pending"], 5, "the claim's pending intent")
        chattr("+i", path, f"{path}-wal")
        try:
            first = pending.result()
            assert first.status == 200, first
            assert first.json["claimed"] is True and first.json["promotion"] == PROMOTION, first
            assert deployment.device(device)["updates"] == 1
        finally:
            chattr("-i", path, f"{path}-wal")
    wait_for(lambda: [e for e in mine() if e["result"] == "ok"], 5, "the kept resolution to be saved")

    def stored():
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return db.execute("SELECT status, body FROM idempotency_keys WHERE key = ?", ("keyed-after-apple",)).fetchone()
    assert wait_for(lambda: (stored() or (None,))[0] == 200 and stored(), 5, "the kept answer to be stored") == (200, first.raw)
    before = updates(deployment)
    again = claim(deployment, token, key="keyed-after-apple")
    assert again.status == 200, again
    assert again.headers.get("Idempotent-Replayed") == "true", again.headers
    assert again.raw == first.raw
    assert updates(deployment) == before and deployment.device(device)["updates"] == 1


def test_a_corrupt_ledger_answers_503_without_sqlite_text(twobits_factory):
    deployment = deploy(twobits_factory)
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
    before = updates(deployment)
    path = database(deployment)
    size = max(path.stat().st_size, 8192)
    with open(path, "r+b") as f:
        f.write(os.urandom(size))
    with open(f"{path}-wal", "r+b") as f:
        f.truncate(0)
    with open(f"{path}-shm", "r+b") as f:
        f.write(b"\0" * 136)
    writes_refused(deployment)
    assert updates(deployment) == before
    wait_for(lambda: http("GET", deployment.url + "/readyz").status == 503, 6, "/readyz to fail")


def test_readyz_fails_and_writes_stop_once_the_database_file_is_deleted(twobits_factory):
    deployment = deploy(twobits_factory)
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
    before = updates(deployment)
    database(deployment).unlink()
    ready = http("GET", deployment.url + "/readyz")  # the inode check is never cached
    assert ready.status == 503 and ready.json["checks"]["storage"].startswith("failed"), ready
    writes_refused(deployment)
    assert updates(deployment) == before, "a write went to Apple with its intent in a deleted file"


def test_the_database_files_are_created_0600(twobits_factory):
    deployment = deploy(twobits_factory)
    assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
    path = database(deployment)
    for name in (path, f"{path}-wal", f"{path}-shm"):
        assert os.stat(name).st_mode & 0o777 == 0o600, (name, oct(os.stat(name).st_mode))


def test_updates_that_time_out_are_audited_unknown_then_settled_by_the_retry(twobits_factory):
    """Half the timed-out updates landed at Apple (the fault applies the write, then holds the answer),
    half did not. None may be audited `failed` while its outcome is unknown; the retries settle them."""
    # The query before each update must get through on a busy machine; the held update outlives the timeout.
    deployment = deploy(twobits_factory, apple={"timeout_ms": 1500})
    per_phase = 20
    phases = {}
    for landed in (True, False):
        devices = [deployment.new_device() for _ in range(per_phase)]
        tokens = [deployment.mint(d) for d in devices]
        fault = {"kind": "timeout", "count": 1000, "endpoint": "update_two_bits", "delay_ms": 2000, "apply": landed}
        assert deployment.sandbox("POST", "/sandbox/v1/faults", fault).status == 201
        with ThreadPoolExecutor(10) as pool:
            first = list(pool.map(lambda i: claim(deployment, tokens[i], key=f"t-{landed}-{i}"), range(per_phase)))
        assert deployment.sandbox("DELETE", "/sandbox/v1/faults").status == 200
        assert all(r.status == 503 and r.error_code == "apple_unavailable" for r in first), first[:3]
        time.sleep(2.1)  # the held updates finish at the sandbox
        written = sum(deployment.device(d)["bit0"] for d in devices)
        assert written == (per_phase if landed else 0), written
        phases[landed] = (devices, tokens)

    events = [e for e in deployment.audit_events() if e["action"] == "promotion.claim"]
    results = {}
    for e in events:
        results[e["result"]] = results.get(e["result"], 0) + 1
    print(f"after {2 * per_phase} timed-out updates ({per_phase} landed): audit results {results}")
    assert results == {"unknown": 2 * per_phase}, results

    for landed, (devices, tokens) in phases.items():
        with ThreadPoolExecutor(10) as pool:
            retried = list(pool.map(lambda i: claim(deployment, tokens[i], key=f"t-{landed}-{i}"), range(per_phase)))
        assert all(r.status == 200 and r.json["claimed"] for r in retried), retried[:3]
    events = [e for e in deployment.audit_events() if e["action"] == "promotion.claim"]
    by_token = {}
    for e in events:
        by_token.setdefault(e["token_sha256_prefix"], []).append(e)
    for landed, (devices, tokens) in phases.items():
        for device, token in zip(devices, tokens):
            mine = by_token[prefix(token)]
            results = sorted(e["result"] for e in mine)
            # Landed: the timed-out write settled ok, the retry recognised it (no second write).
            # Not landed: settled failed before the retry wrote (its own event ok).
            assert results == (["ok"] if landed else ["failed", "ok"]), (landed, mine)
            assert all(e.get("intent_id") for e in mine)
            assert deployment.device(device)["updates"] == 1


def test_every_applied_write_is_audited_after_kill_9(twobits_factory):
    devices_count, workers = 160, 24
    deployment = deploy(twobits_factory, server={"threads": 8})
    devices = [deployment.new_device() for _ in range(devices_count)]
    tokens = [deployment.mint(d) for d in devices]
    assert deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 20}).status == 200

    sent = 0
    lock = threading.Lock()
    halfway = threading.Event()

    def first_attempt(i):
        nonlocal sent
        with lock:
            sent += 1
            if sent >= devices_count // 2:
                halfway.set()
        try:
            return claim(deployment, tokens[i], key=f"k9-{i}")
        except OSError as error:
            return error

    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(first_attempt, i) for i in range(devices_count)]
        assert halfway.wait(30)
        deployment.kill_server()
        first = [f.result() for f in futures]
    time.sleep(0.3)  # writes already on their way land at the sandbox
    written = {d for d in devices if deployment.device(d)["updates"] > 0}
    cut_off = sum(isinstance(r, Exception) for r in first)
    assert cut_off, "the kill landed after every claim was answered"

    deployment.start_server()
    events = [e for e in deployment.audit_events() if e["action"] == "promotion.claim"]
    audited = {e["token_sha256_prefix"] for e in events}
    unaudited = [d for d, t in zip(devices, tokens) if d in written and prefix(t) not in audited]
    pending = [e for e in events if e["result"] == "pending"]
    print(f"kill -9: {len(written)} applied writes, {cut_off} requests cut off, {len(unaudited)} applied writes without an audit event, "
          f"{sum(e['result'] == 'unknown' for e in events)} audited unknown after the restart")
    assert not unaudited, f"{len(unaudited)} of {len(written)} applied writes have no audit event"
    assert not pending, f"{len(pending)} events still pending after the restart: {pending[:2]}"

    with ThreadPoolExecutor(workers) as pool:
        final = list(pool.map(lambda i: claim(deployment, tokens[i], key=f"k9-{i}"), range(devices_count)))
    assert all(r.status == 200 for r in final), [r for r in final if r.status != 200][:3]
    events = [e for e in deployment.audit_events() if e["action"] == "promotion.claim"]
    assert not [e for e in events if e["result"] in ("pending", "unknown")], "the retries settle every unknown write"
    for device, token in zip(devices, tokens):
        mine = [e for e in events if e["token_sha256_prefix"] == prefix(token)]
        assert [e["result"] for e in mine].count("ok") == 1, mine
        assert deployment.device(device)["updates"] == 1


def test_a_full_disk_answers_503_and_writes_nothing_at_apple(twobits_factory, tmp_path):
    """The ledger on a 2 MiB tmpfs, filled up while the server runs (needs mount: root, like CI)."""
    ledger_dir = tmp_path / "small-disk"
    ledger_dir.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(ledger_dir)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        deployment = deploy(twobits_factory, database=str(ledger_dir / "twobits.sqlite"))
        assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
        before = updates(deployment)
        with open(ledger_dir / "filler", "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        writes_refused(deployment)
        assert updates(deployment) == before, "Apple was written although the intent could not be recorded"
        wait_for(lambda: http("GET", deployment.url + "/readyz").status == 503, 6, "/readyz to fail on a full disk")
        (ledger_dir / "filler").unlink()
        # The refused writes hold storage not ready for a few seconds (docs/operations.md), then the probe decides.
        wait_for(lambda: http("GET", deployment.url + "/readyz").status == 200, 30, "/readyz to recover")
        assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
    finally:
        twobits_factory.close()
        subprocess.run(["umount", "-l", str(ledger_dir)], capture_output=True)


def fill_to_the_last_byte(directory):
    """Fills the file system of `directory`: 64 KiB writes, then smaller ones, until not one byte fits."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


def storage_readiness_metric(deployment):
    exposition = http("GET", deployment.url + "/metrics").raw.decode()
    values = [line.split()[-1] for line in exposition.splitlines() if line.startswith('twobits_readiness_check{check="storage"}')]
    assert len(values) == 1, exposition
    return values[0]


def test_readiness_follows_the_real_writes_on_a_full_disk(twobits_factory, tmp_path):
    """Issue 34, item 3: with the disk full, the probe's one-row upsert still fitted in pages the ledger
    already had while the real writes failed (1,168 of 1,200 answered 503), and /readyz and the metric said
    ready. A real write's storage failure now makes storage not ready at once, until the disk has room."""
    ledger_dir = tmp_path / "small-disk"
    ledger_dir.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(ledger_dir)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        deployment = deploy(twobits_factory, database=str(ledger_dir / "twobits.sqlite"))
        for _ in range(20):
            assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
        # The background checkpoint moves the log into the database file: pages the probe reuses.
        time.sleep(2)
        assert http("GET", deployment.url + "/readyz").status == 200
        fill_to_the_last_byte(ledger_dir)
        answers = []
        for _ in range(300):
            answers.append(claim(deployment, deployment.mint(deployment.new_device())))
            if answers[-1].status == 503:
                break
        assert answers[-1].status == 503 and answers[-1].error_code == "storage_unavailable", answers[-1]
        # From the first refused write on, every poll says not ready, while the writes keep failing.
        for _ in range(10):
            ready = http("GET", deployment.url + "/readyz")
            assert ready.status == 503 and ready.json["checks"]["storage"] == "failed: the ledger cannot be written", ready
            assert storage_readiness_metric(deployment) == "0"
            answer = claim(deployment, deployment.mint(deployment.new_device()))
            assert answer.status == 503 and answer.error_code == "storage_unavailable", answer
        log = deployment.logs["server"].read_text(errors="replace")
        assert "readiness: the ledger cannot be written" in log
        (ledger_dir / "filler").unlink()
        wait_for(lambda: http("GET", deployment.url + "/readyz").status == 200, 30, "/readyz to recover once the disk has room")
        assert storage_readiness_metric(deployment) == "1"
        assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
    finally:
        twobits_factory.close()
        subprocess.run(["umount", "-l", str(ledger_dir)], capture_output=True)


STALL_DEADLINE_MS = 3000
# The answer must come by the deadline; this much more allows for a loaded machine, nowhere near a stall's length.
STALL_SLACK_S = 5


def timed(call):
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


def test_a_stalled_ledger_disk_keeps_deadlines_healthz_and_readyz_working(twobits_factory, tmp_path):
    """Issue 34, "A stalled ledger disk stops everything": with the ledger's filesystem frozen (`fsfreeze`, an
    ext4 image on a loop device), a claim answered 503 after 40 s with a 15 s deadline and /healthz hung,
    because the SQLite calls ran on the event loops. Now the loops never wait for the disk: claims and
    exchanges answer by their deadline, /healthz at once, /readyz says not ready within a few seconds, and
    once the ledger has held its thread 2 s new calls are refused at once (503 storage_unavailable). Thawed,
    everything recovers, and every device is written at Apple exactly as often as the audit says."""
    if os.geteuid() != 0:
        pytest.skip("freezing a filesystem needs root")
    for tool in ("mkfs.ext4", "fsfreeze", "mount", "umount"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode != 0:
            pytest.skip(f"{tool} is not installed")
    image, disk = tmp_path / "ledger.img", tmp_path / "ledger-disk"
    disk.mkdir()
    with open(image, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    if subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True).returncode != 0:
        pytest.skip("cannot make an ext4 image here")
    if subprocess.run(["mount", "-o", "loop", str(image), str(disk)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a loop device here (no /dev/loop*, or not allowed)")
    try:
        deployment = deploy(twobits_factory, database=str(disk / "twobits.sqlite"), apple={"timeout_ms": 1000},
                            server={"request_deadline_ms": STALL_DEADLINE_MS})
        assert claim(deployment, deployment.mint(deployment.new_device())).status == 200
        assert deployment.exchange(deployment.mint(deployment.new_device())).status == 201
        # Let the cached readiness verdict (2 s) run out: the next /readyz probes the frozen disk.
        time.sleep(2.5)
        before = updates(deployment)
        devices = [deployment.new_device() for _ in range(6)]
        # A keyed claim is retried as a client would: the same key, the same request.
        tokens = {d: deployment.mint(d) for d in devices}

        subprocess.run(["fsfreeze", "-f", str(disk)], check=True, capture_output=True)
        limit = STALL_DEADLINE_MS / 1000 + STALL_SLACK_S
        with ThreadPoolExecutor(max_workers=8) as pool:
            # A claim first: its write takes the ledger thread and waits for the frozen disk.
            first = pool.submit(timed, lambda: claim(deployment, deployment.mint(devices[0]), timeout=limit + 20))
            time.sleep(0.3)
            # Readiness probes the ledger while that write waits: not ready after a bounded wait, not a hang.
            ready, _ = timed(lambda: http("GET", deployment.url + "/readyz", timeout=limit))
            assert ready.status == 503 and (ready.json or {}).get("ready") is False, ready
            assert ready.json["checks"]["storage"].startswith("failed"), ready
            healthy = http("GET", deployment.url + "/healthz", timeout=limit)
            assert healthy.status == 200, healthy
            more = [pool.submit(timed, lambda d=d: claim(deployment, tokens[d], key=f"stall-{d}", timeout=limit + 20))
                    for d in devices[1:4]]
            more += [pool.submit(timed, lambda d=d: deployment.exchange(deployment.mint(d))) for d in devices[4:]]
            for future in [first] + more:
                answer, seconds = future.result()
                assert answer.status == 503, answer
                assert answer.error_code in ("storage_unavailable", "apple_unavailable"), answer
                assert seconds < limit, f"answered after {seconds:.1f} s with a {STALL_DEADLINE_MS} ms deadline"
        # The disk has stalled for seconds now: a new write is refused at once, not left to its deadline.
        refused = claim(deployment, deployment.mint(deployment.new_device()), timeout=limit)
        assert refused.status == 503 and refused.error_code == "storage_unavailable", refused
        assert not any(word in refused.raw.decode(errors="replace").lower() for word in SQLITE_WORDS), refused
        assert http("GET", deployment.url + "/healthz", timeout=limit).status == 200
        assert http("GET", deployment.url + "/readyz", timeout=limit).status == 503
        assert updates(deployment) == before, "Apple was written although no intent could be recorded"

        subprocess.run(["fsfreeze", "-u", str(disk)], check=True, capture_output=True)
        wait_for(lambda: http("GET", deployment.url + "/readyz", timeout=limit).status == 200, 30, "/readyz to recover after the thaw")
        # Every device ends written once, by the retries; the audit holds exactly the writes Apple saw.
        assert claim(deployment, deployment.mint(devices[0])).status == 200
        for d in devices[1:4]:
            assert claim(deployment, tokens[d], key=f"stall-{d}").status == 200
        for d in devices[4:]:
            assert deployment.exchange(deployment.mint(d)).status == 201
        for d in devices[:4]:
            assert deployment.device(d)["updates"] == 1, d
        claims = [e for e in deployment.audit_events() if e["action"] == "promotion.claim"]
        assert not [e for e in claims if e["result"] == "pending"], claims
        # The claim before the stall, and one for each of the four devices.
        assert len([e for e in claims if e["result"] == "ok"]) == 5, claims
    finally:
        # Never leave a frozen filesystem behind: whatever touches it would hang.
        subprocess.run(["fsfreeze", "-u", str(disk)], capture_output=True)
        twobits_factory.close()
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)

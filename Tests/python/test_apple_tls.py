"""Issue 41, the production link to Apple over a real TLS socket: `twobits serve` calls Apple's own host names
(`apple.base_url` left out), which a private mount namespace maps to Debian's nginx on loopback (Tests/tls/fake_apple.py),
terminating TLS with HTTP/2 by ALPN in front of the sandbox. DeviceCheck's validate, query and update and App Attest's
receipt renewal go over HTTP/2, many calls share a few TLS connections, an HTTP/1.1-only host keeps its connections
alive; the trust anchors are the operating system's store unless `apple.ca_file` replaces them, and a bad `ca_file`
stops the server naming the field. An expired, self-signed, wrong-host or wrong-CA certificate, and a handshake that
never gets an answer, are answered as Apple unavailable (nothing written), logged once per host and reason with
curl's text, and counted as `outcome="tls_failed"`."""
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import test_app_attest as aa
from conftest import REPO, Deployment, current_month, free_port, http, wait_until

sys.path.insert(0, str(REPO / "Tests" / "tls"))
import fake_apple  # noqa: E402

PROMOTION = "launch"
RISK = {"max_metric": 3, "action": "refuse"}
DEVICECHECK_HOST = "api.devicecheck.apple.com"
DATA_HOST = "data.appattest.apple.com"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The sandbox (production, as Apple's production hosts) with nginx in front of it; yields (deployment, fake)."""
    root = tmp_path_factory.mktemp("tls")
    deployment = Deployment(root / "deployment", environment="production",
                            promotions=[{"id": PROMOTION, "starts": current_month()}],
                            extra={"apple": {"base_url": None, "timeout_ms": 1500},
                                   "app_attest": {**aa.APP_ATTEST, "receipts": {"root_ca_file": "receipt-root.pem"}, "risk": RISK}})
    deployment.start_sandbox()
    fake = fake_apple.FakeApple(root / "nginx", deployment.sandbox_url)
    try:
        yield deployment, fake
    finally:
        fake.stop()
        deployment.stop()


class Server:
    """One `twobits serve` of the module's deployment, in a mount namespace whose /etc/hosts sends Apple's names to
    one variant of the fake; a database of its own."""

    count = 0

    def __init__(self, world, variant, apple=None, threads=2, ca_store=None, bits=None, env=None):
        deployment, fake = world
        Server.count += 1
        self.deployment = deployment
        self.fake = fake
        self.name = f"tls{Server.count}-{variant}"
        self.address = fake.address[variant]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = json.loads(json.dumps(deployment.config))
        config["listen"] = f"127.0.0.1:{self.port}"
        config["database"] = f"{self.name}.sqlite"
        config["server"]["threads"] = threads
        if bits is not None:
            config["bits"] = bits
        config["apple"].update(apple if apple is not None else {"ca_file": str(fake.ca_file)})
        self.config_path = deployment.dir / f"config-{self.name}.json"
        self.config_path.write_text(json.dumps(config, indent=2))
        self.log_path = deployment.dir / f"{self.name}.log"
        self.command = fake_apple.namespaced([deployment.binary, "serve", "--config", str(self.config_path)],
                                             fake.hosts_file(variant), ca_store)
        self.env = {**os.environ, **(env or {})}
        self.process = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.command, cwd=self.deployment.dir, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env)
        self.deployment.processes[self.name] = self.process
        wait_until(lambda: http("GET", self.url + "/readyz", timeout=2).status == 200, 20, self.name, self.process, self.log_path)
        return self

    def run_to_exit(self):
        """Starts the server expecting it to refuse its configuration: (exit code, output)."""
        result = subprocess.run(self.command, cwd=self.deployment.dir, capture_output=True, text=True, timeout=30)
        return result.returncode, result.stdout + result.stderr

    def post(self, path, body, client):
        return http("POST", self.url + path, body, {"Authorization": "Bearer " + self.deployment.api_keys[client]})

    def exchange(self, token):
        return self.post("/v1/fallback-tokens", {"device_token": token}, "main")

    def claim(self, token):
        return self.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": token}, "marketing")

    def audit_events(self):
        answer = http("GET", self.url + "/v1/admin/audit?limit=500", headers={"Authorization": "Bearer " + self.deployment.api_keys["ops"]})
        assert answer.status == 200, answer
        return answer.json["events"]

    def metrics(self):
        return http("GET", self.url + "/metrics", headers={"Authorization": "Bearer " + self.deployment.api_keys["ops"]}).raw.decode()

    def log_lines(self):
        lines = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                pass
        return lines

    def requests(self):
        """What nginx served on this server's variant (each server has a variant's address to itself or goes first)."""
        return self.fake.log(self.address)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def servers(world):
    started = []

    def make(variant, **options):
        server = Server(world, variant, **options)
        started.append(server)
        return server
    yield make
    for server in started:
        server.stop()


def device_token(world):
    deployment, _ = world
    device = deployment.new_device()
    return device, deployment.mint(device)


def new_entries(server, before, at_least=1):
    """nginx's entries for `server` after the first `before`; nginx logs a request once its stream is closed, which
    may be just after the client read the answer, so wait (briefly) for `at_least` of them."""
    deadline = time.monotonic() + 5
    while True:
        entries = server.requests()[before:]
        if len(entries) >= at_least or time.monotonic() > deadline:
            return entries
        time.sleep(0.05)


def test_validate_query_and_update_go_over_tls_and_http2_to_apples_host_names(world, servers):
    # Without a ban bit an exchange validates the token (with one, its query validates too).
    server = servers("good", bits={"bit0": "promotion", "bit1": "unused"}).start()
    before = len(server.requests())
    device, token = device_token(world)
    exchanged = server.exchange(token)
    assert exchanged.status == 201, (exchanged, server.log_path.read_text()[-2000:])
    claimed = server.claim(token)
    assert claimed.status == 200 and claimed.json["claimed"] is True, claimed
    # Written at the sandbox, through nginx: the bit is Apple's now.
    assert world[0].device(device)["bit0"] is True
    # An exchange validates; a claim queries, then updates.
    entries = new_entries(server, before, at_least=3)
    paths = {e["uri"] for e in entries}
    assert {"/v1/validate_device_token", "/v1/query_two_bits", "/v1/update_two_bits"} <= paths, entries
    assert all(e["protocol"] == "HTTP/2.0" and e["host"] == DEVICECHECK_HOST and e["ssl_protocol"] in ("TLSv1.2", "TLSv1.3")
               and e["status"] == "200" for e in entries), entries
    assert 'outcome="ok"' in server.metrics()


def test_a_receipt_renewal_goes_over_http2_to_the_app_attest_data_host(world, servers):
    deployment, _ = world
    server = servers("good").start()
    before = len(server.requests())
    key_id = aa.new_key(deployment)
    value = aa.challenge(server)
    body = {"key_id": key_id, "attestation_object": aa.attestation_object(deployment, key_id, value), "challenge": value}
    # With `refuse`, the attestation renews its ATTEST receipt at Apple's data host before answering.
    answer = server.post("/v1/app-attest/attestations", body, "main")
    assert answer.status == 201, (answer, server.log_path.read_text()[-2000:])
    renewals = [e for e in new_entries(server, before, at_least=1) if e["uri"] == "/v1/attestationData"]
    assert renewals and all(e["host"] == DATA_HOST and e["protocol"] == "HTTP/2.0" and e["status"] == "200" for e in renewals), renewals
    assert 'twobits_apple_calls_total{endpoint="attestation_data",outcome="ok"} 1' in server.metrics()


def test_many_calls_share_a_few_tls_connections(world, servers):
    """80 exchanges, 16 at a time, on a server with two loops: HTTP/2 multiplexes them over at most one
    connection per loop (curl waits for a stream rather than opening a connection: CURLOPT_PIPEWAIT)."""
    server = servers("good", threads=2).start()
    tokens = [device_token(world)[1] for _ in range(80)]
    before = len(server.requests())
    answers = []
    lock = threading.Lock()

    def work(chunk):
        for token in chunk:
            answer = server.exchange(token)
            with lock:
                answers.append(answer.status)
    threads = [threading.Thread(target=work, args=(tokens[i::16],)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert answers.count(201) == 80, answers
    entries = new_entries(server, before, at_least=80)
    assert len(entries) >= 80 and all(e["protocol"] == "HTTP/2.0" for e in entries), entries[:5]
    connections = {e["connection"] for e in entries}
    assert len(connections) <= 2, f"{len(entries)} calls over {len(connections)} TLS connections"


def test_an_http1_only_host_is_reused_with_keep_alive(world, servers):
    server = servers("http1", threads=2).start()
    tokens = [device_token(world)[1] for _ in range(30)]
    before = len(server.requests())
    for token in tokens:
        assert server.exchange(token).status == 201
    entries = new_entries(server, before, at_least=30)
    assert len(entries) >= 30 and all(e["protocol"] == "HTTP/1.1" for e in entries), entries[:5]
    connections = {e["connection"] for e in entries}
    # Sequential calls: one kept-alive connection per loop at most, never a handshake per call.
    assert len(connections) <= 2, f"{len(entries)} calls over {len(connections)} connections"


FAILURES = [
    # (variant, apple section, what curl says)
    ("expired", None, "certificate has expired"),
    ("self_signed", None, "self-signed certificate"),
    ("wrong_host", None, "no alternative certificate subject name matches target host name 'api.devicecheck.apple.com'"),
    ("other_ca", None, "unable to get local issuer certificate"),
    # The default trust is the operating system's store, which does not hold the fake's CA.
    ("good", {}, "unable to get local issuer certificate"),
    ("stall", None, "the TLS handshake did not finish in time"),
    # TLS 1.1 only, with OpenSSL's own floor lowered for the server process: TwoBits' minimum, TLS 1.2, refuses it.
    ("tls11", None, "protocol version"),
    # TLS 1.2 with only a CBC suite with SHA-1 (OpenSSL's default list would take it): not a suite Apple offers.
    ("weak_cipher", None, "handshake failure"),
]


@pytest.mark.parametrize("variant, apple, says", FAILURES, ids=[f[0] if f[1] is None else "no_ca_file" for f in FAILURES])
def test_a_certificate_apple_would_not_present_is_refused_seen_and_counted(world, servers, variant, apple, says):
    deployment, fake = world
    env = {"OPENSSL_CONF": str(fake.permissive_openssl_conf)} if variant == "tls11" else None
    server = servers(variant, apple=apple, env=env).start()
    device, token = device_token(world)
    for answer in (server.exchange(token), server.claim(token)):
        assert answer.status == 503 and answer.error_code == "apple_unavailable", answer
        assert answer.headers.get("Retry-After"), answer.headers
    # Never read as a clear device, never written.
    state = deployment.device(device)
    assert state["bit0"] is False and state["bit1"] is False and state["updates"] == 0, state
    metrics = server.metrics()
    counted = re.findall(r'twobits_apple_calls_total\{endpoint="(\w+)",outcome="tls_failed"\} (\d+)', metrics)
    assert counted and sum(int(n) for _, n in counted) >= 2, metrics
    assert "connection_failed" not in metrics, metrics
    # Logged once for the host and reason, however many attempts failed.
    lines = [line for line in server.log_lines() if line.get("msg") == "Apple TLS failed"]
    assert len(lines) == 1, lines
    assert lines[0]["host"] == DEVICECHECK_HOST and says in lines[0]["reason"], lines


def test_the_operating_systems_store_is_the_default_and_ca_file_replaces_it(world, servers, tmp_path):
    _, fake = world
    # The fake's CA as the system's store (bundle and hashed directory), in the server's own mount namespace only:
    # trusted without ca_file.
    store = fake_apple.system_store(tmp_path / "certs", fake.ca_file)
    trusted = servers("good", apple={}, ca_store=store).start()
    device, token = device_token(world)
    assert trusted.exchange(token).status == 201
    # A ca_file replaces the system's anchors, bundle and directory (it does not add to them): another CA alone,
    # the fake is refused.
    replaced = servers("good", apple={"ca_file": str(fake.other_ca_file)}, ca_store=store).start()
    answer = replaced.exchange(token)
    assert answer.status == 503 and answer.error_code == "apple_unavailable", answer
    assert re.search(r'outcome="tls_failed"\} \d', replaced.metrics())


@pytest.mark.parametrize("content, says", [
    (None, "cannot read"),
    ("directory", "is not a regular file"),
    ("not a certificate\n", "holds no PEM certificate"),
])
def test_a_bad_ca_file_stops_the_server_naming_the_field(world, servers, tmp_path, content, says):
    path = tmp_path / "bundle.pem"
    if content == "directory":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    code, output = servers("good", apple={"ca_file": str(path)}).run_to_exit()
    assert code != 0, output
    assert "apple.ca_file" in output and says in output, output


def test_a_ca_file_of_the_system_bundle_and_a_proxys_ca_trusts_both(world, servers, tmp_path):
    """What docs/configuration.md advises to add an anchor: the system's bundle (a hundred certificates and more)
    with the proxy's CA appended. It is read at start, and the fake's certificate verifies."""
    _, fake = world
    bundle = tmp_path / "bundle.pem"
    system = Path("/etc/ssl/certs/ca-certificates.crt")
    bundle.write_text((system.read_text() if system.exists() else "") + fake.ca_file.read_text())
    server = servers("good", apple={"ca_file": str(bundle)}).start()
    _, token = device_token(world)
    assert server.exchange(token).status == 201


WRK_SCRIPT = REPO / "Benchmarks" / "wrk" / "device_tokens.lua"


def fresh_tokens(world, count):
    deployment, _ = world
    tokens = []
    while len(tokens) < count:
        answer = deployment.sandbox("POST", "/sandbox/v1/device-tokens", {"count": min(10_000, count - len(tokens))})
        assert answer.status == 201, answer
        tokens += answer.json["device_tokens"]
    return tokens


def load(world, server, tmp_path, tokens, in_flight, seconds, latency_ms):
    """`in_flight` exchanges at once for `seconds` (wrk, each a fresh token), the sandbox answering Apple's calls after
    `latency_ms`: `in_flight` Apple calls on the wire at once. Returns wrk's BENCH_JSON report."""
    deployment, _ = world
    token_file = tmp_path / "tokens.txt"
    token_file.write_text("\n".join(tokens) + "\n")
    assert deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": latency_ms}).status == 200
    try:
        result = subprocess.run(["wrk", "-t2", f"-c{in_flight}", f"-d{seconds}s", "--timeout", "10s", "-s", str(WRK_SCRIPT), server.url,
                                 "--", str(token_file), deployment.api_keys["main"], "2", "/v1/fallback-tokens"],
                                capture_output=True, text=True, timeout=seconds + 60)
    finally:
        deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 0})
    line = next((l for l in result.stdout.splitlines() if l.startswith("BENCH_JSON ")), None)
    assert line, result.stdout + result.stderr
    return json.loads(line[len("BENCH_JSON "):])


def connections_opened(metrics, host=DEVICECHECK_HOST):
    found = re.search(r'twobits_apple_connections_opened_total\{host="%s"\} (\d+)' % re.escape(host), metrics)
    return int(found.group(1)) if found else 0


def multiplexed_load(world, servers, tmp_path, variant, tokens, in_flight, seconds, at_least):
    """`in_flight` exchanges at once against `variant` for `seconds`, Apple answering after 50 ms: (wrk's report, the
    Apple calls nginx served meanwhile, the server's metrics, the TLS connections they used). Checks every call went
    over HTTP/2 and was answered (499: cancelled by TwoBits when wrk hung up on its request as it stopped)."""
    server = servers(variant, threads=2).start()
    tokens = fresh_tokens(world, tokens)
    first = server.exchange(tokens.pop())
    assert first.status == 201, first
    before = len(server.requests())
    report = load(world, server, tmp_path, tokens, in_flight=in_flight, seconds=seconds, latency_ms=50)
    entries = [e for e in new_entries(server, before, at_least=at_least) if e["uri"].startswith("/v1/")]
    connections = {e["connection"] for e in entries}
    print(f"{len(entries)} Apple calls over {len(connections)} TLS connections; wrk: {report}")
    assert len(entries) >= at_least, report
    assert all(e["protocol"] == "HTTP/2.0" and e["status"] in ("200", "499") for e in entries), [e for e in entries if e["status"] != "200"][:5]
    return report, entries, server.metrics(), connections


def test_at_256_in_flight_over_a_100_stream_limit_calls_share_a_few_connections(world, servers, tmp_path):
    """256 Apple calls on the wire at once (two loops: 128 each, over nginx's 100 streams per connection): each loop
    needs two connections, and calls beyond a connection's streams wait for a stream or the second connection, never
    for a connection of their own; none fails for it."""
    report, entries, metrics, connections = multiplexed_load(world, servers, tmp_path, "good", tokens=20_000, in_flight=256,
                                                             seconds=5, at_least=1000)
    calls = len(entries)
    # Two loops, 128 calls each on a 100-stream limit: two connections per loop, a spare one at most.
    assert len(connections) <= 6, f"{calls} calls over {len(connections)} TLS connections"
    # What the server counts itself agrees with what nginx saw.
    assert connections_opened(metrics) == len(connections), metrics
    # None failed for want of a stream (the calls wrk left in flight when it stopped were cancelled, not failed).
    assert report["errors"]["status"] == 0 and report["errors"]["timeout"] == 0, report
    assert not re.search(r'twobits_http_requests_total\{route="/v1/fallback-tokens",status="5\d\d"\}', metrics), metrics


def test_a_server_with_fewer_streams_than_100_gets_connections_for_its_own_limit(world, servers, tmp_path):
    """A host advertising 16 streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS, below the 100 the client counts
    on), 64 calls on the wire at once (two loops, 32 each): the calls beyond a connection's 16 streams are held by
    curl (nghttp2 sends a stream's HEADERS once the server's limit allows) or go to the next connection, never one
    connection each, and none fails for it."""
    report, entries, metrics, connections = multiplexed_load(world, servers, tmp_path, "few_streams", tokens=8_000, in_flight=64,
                                                             seconds=4, at_least=500)
    # Two connections per loop carry its 32 calls at 16 streams each; at most one more per loop.
    assert len(connections) <= 6, f"{len(entries)} calls over {len(connections)} TLS connections"
    assert connections_opened(metrics) <= 6, metrics
    assert report["errors"]["status"] == 0 and report["errors"]["timeout"] == 0, report
    assert not re.search(r'twobits_http_requests_total\{route="/v1/fallback-tokens",status="5\d\d"\}', metrics), metrics


def test_an_http1_only_host_under_load_keeps_its_connections_alive(world, servers, tmp_path):
    """64 calls in flight to a host without HTTP/2: one connection per call in flight (at most apple.max_connections
    per loop), each kept alive and used again, never one handshake per call."""
    server = servers("http1", threads=2).start()
    tokens = fresh_tokens(world, 8_000)
    before = len(server.requests())
    report = load(world, server, tmp_path, tokens, in_flight=64, seconds=3, latency_ms=50)
    entries = [e for e in new_entries(server, before, at_least=500) if e["uri"].startswith("/v1/")]
    connections = {e["connection"] for e in entries}
    print(f"{len(entries)} Apple calls over {len(connections)} HTTP/1.1 connections; wrk: {report}")
    assert len(entries) >= 500 and all(e["protocol"] == "HTTP/1.1" for e in entries), entries[:5]
    assert len(connections) <= 2 * 64, f"{len(entries)} calls over {len(connections)} connections"
    assert len(entries) >= 10 * len(connections), f"{len(entries)} calls over {len(connections)} connections"
    assert connections_opened(server.metrics()) == len(connections)
    assert report["errors"]["status"] == 0 and report["errors"]["timeout"] == 0, report


def run_concurrently(calls, threads):
    """`calls` (callables) on `threads` threads; their results, in no particular order."""
    results = []
    lock = threading.Lock()

    def work(chunk):
        for call in chunk:
            result = call()
            with lock:
                results.append(result)
    workers = [threading.Thread(target=work, args=(calls[i::threads],)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    return results


def test_a_goaway_after_a_connections_requests_is_retried_and_never_fails_a_call(world, servers):
    """nginx ends each HTTP/2 connection with GOAWAY after 10 requests: the calls caught on a closing connection
    are retried (validate, query, update alike), every answer is Apple's, and the connections are replaced."""
    deployment, _ = world
    server = servers("goaway", threads=2).start()
    devices = [device_token(world) for _ in range(60)]
    before = len(server.requests())
    answers = run_concurrently([lambda t=t: server.claim(t) for _, t in devices], threads=12)
    assert [a.status for a in answers].count(200) == 60, [a for a in answers if a.status != 200][:3]
    assert all(a.json["claimed"] is True for a in answers), answers[:3]
    # Written once each, at Apple.
    for device, _ in devices:
        state = deployment.device(device)
        assert state["bit0"] is True and state["updates"] == 1, state
    entries = new_entries(server, before, at_least=120)
    connections = {e["connection"] for e in entries}
    assert len(connections) >= 120 // fake_apple.REQUESTS_BEFORE_GOAWAY, f"{len(entries)} calls over {len(connections)} connections"
    print(f"{len(entries)} calls over {len(connections)} connections;",
          [l for l in server.metrics().splitlines() if l.startswith("twobits_apple_c")])


def test_a_stream_reset_mid_call_is_retried(world, servers):
    """The first request of each connection is reset mid-stream: an exchange (validate or query) and a claim (query,
    then update) are retried and answered; the update is written once."""
    deployment, _ = world
    server = servers("reset", threads=1).start()
    device, token = device_token(world)
    claimed = server.claim(token)
    assert claimed.status == 200 and claimed.json["claimed"] is True, (claimed, server.log_path.read_text()[-1500:])
    state = deployment.device(device)
    assert state["bit0"] is True and state["updates"] == 1, state
    metrics = server.metrics()
    print([l for l in metrics.splitlines() if l.startswith("twobits_apple_c")])
    assert re.search(r'twobits_apple_calls_total\{endpoint="query_two_bits",outcome="connection_failed"\} 1', metrics), metrics
    statuses = [e["status"] for e in server.requests()]
    assert statuses.count("444") == 1, statuses


def test_an_update_reset_mid_stream_is_of_unknown_outcome_never_a_clean_failure(world, servers):
    """Every update is reset mid-stream once its request is in (validate and query are answered): Apple may have
    written, so the claim fails as Apple unavailable with its write recorded `unknown`, never `failed` (a clean
    failure would let the next claim treat the device as unwritten without asking Apple). Retried updates keep
    that: a later attempt's failure says nothing of the first one's."""
    deployment, _ = world
    server = servers("reset_update", threads=1).start()
    device, token = device_token(world)
    before = len(server.requests())
    claimed = server.claim(token)
    assert claimed.status == 503 and claimed.error_code == "apple_unavailable", (claimed, server.log_path.read_text()[-1500:])
    updates = [e for e in new_entries(server, before, at_least=2) if e["uri"] == "/v1/update_two_bits"]
    assert updates and all(e["status"] == "444" and e["protocol"] == "HTTP/2.0" for e in updates), updates
    # nginx reset every attempt before the sandbox saw it; the client cannot know that.
    assert deployment.device(device)["updates"] == 0
    events = [e for e in server.audit_events() if e["action"] == "promotion.claim"]
    assert [e["result"] for e in events] == ["unknown"], events
    metrics = server.metrics()
    print(f"{len(updates)} update attempts reset;", [l for l in metrics.splitlines() if l.startswith("twobits_apple_calls_total")])
    assert re.search(r'twobits_apple_calls_total\{endpoint="update_two_bits",outcome="connection_failed"\} %d' % len(updates), metrics), metrics


def apple_check(world, variant, apple):
    """`twobits apple-check` with the module's configuration, `apple` merged over its Apple section, Apple's names
    sent to `variant`: (exit code, output)."""
    deployment, fake = world
    config = json.loads(json.dumps(deployment.config))
    config["apple"].update(apple)
    Server.count += 1
    path = deployment.dir / f"config-check{Server.count}.json"
    path.write_text(json.dumps(config))
    command = fake_apple.namespaced([deployment.binary, "apple-check", "--config", str(path)], fake.hosts_file(variant))
    result = subprocess.run(command, cwd=deployment.dir, capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout + result.stderr


def test_apple_check_reports_the_link_and_the_credentials_verdict(world, tmp_path):
    _, fake = world
    trusted = {"ca_file": str(fake.ca_file)}
    code, output = apple_check(world, "good", trusted)
    assert code == 0, output
    assert "apple: https://api.devicecheck.apple.com/v1/query_two_bits" in output, output
    assert re.search(r"^tls: TLSv1\.[23] / \S+", output, re.M) and "http: HTTP/2" in output, output
    assert re.search(r"^latency_ms: \d+$", output, re.M) and "credentials: accepted" in output, output
    code, output = apple_check(world, "http1", trusted)
    assert code == 0 and "http: HTTP/1.1" in output, output
    # Another key under the same key id: Apple cannot verify the developer token.
    other_key = tmp_path / "AuthKey_OTHER.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(other_key)],
                   check=True, capture_output=True)
    code, output = apple_check(world, "good", {**trusted, "private_key_file": str(other_key)})
    assert code == 1 and "credentials: refused by Apple: 401" in output, output
    # No answer: curl's reason, and no verdict on the credentials.
    code, output = apple_check(world, "expired", trusted)
    assert code == 1 and "credentials: unknown: Apple unreachable: " in output and "certificate has expired" in output, output
    code, output = apple_check(world, "good", {})
    assert code == 1 and "unable to get local issuer certificate" in output and "trust: the operating system's store" in output, output


def test_a_call_that_waits_for_a_stream_past_its_timeout_fails_unsent(world, servers):
    """One connection allowed (apple.max_connections 1, one loop), 100 streams, Apple slower than the 1.5 s deadline:
    150 exchanges at once, 100 on the streams (they time out), 50 waiting for a stream. The waiting ones fail within
    their deadline as never sent (`overloaded`), not as timeouts, and no second connection is opened."""
    deployment, _ = world
    server = servers("good", threads=1, apple={"ca_file": str(world[1].ca_file), "max_connections": 1}).start()
    tokens = fresh_tokens(world, 150)
    assert deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 2500}).status == 200
    try:
        started = time.monotonic()
        answers = run_concurrently([lambda t=t: server.exchange(t) for t in tokens], threads=150)
        elapsed = time.monotonic() - started
    finally:
        deployment.sandbox("PUT", "/sandbox/v1/latency", {"milliseconds": 0})
    assert all(a.status == 503 and a.error_code == "apple_unavailable" for a in answers), [a for a in answers if a.status != 503][:3]
    assert elapsed < 5, elapsed
    metrics = server.metrics()
    counted = dict(re.findall(r'twobits_apple_calls_total\{endpoint="\w+",outcome="(\w+)"\} (\d+)', metrics))
    assert int(counted.get("overloaded", 0)) >= 40 and int(counted.get("timeout", 0)) <= 110, counted
    assert connections_opened(metrics) == 1, metrics

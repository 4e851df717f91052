"""docs/examples/relay.py, the main API's side of the client library's relay, in front of a live `twobits serve`:
the app's calls forwarded with the main API's key, `app_attest_status` passed through (and counted by TwoBits),
the user's session added as `binding` (tokens carry `bnd`; verify checks it), TwoBits' answers passed back
unchanged; and the Swift demo client (docs/examples/ClientDemo) running its whole flow through it."""
import base64
import hashlib
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from conftest import REPO, free_port

APP_ID = "TEAMID1234.com.example.relayed"
SESSION = "session-of-a-signed-in-user"
OTHER_SESSION = "session-of-another-user"


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": {"apps": [APP_ID], "environment": "production",
                                                        "root_ca_file": "appattest-root.pem",
                "receipts": {"root_ca_file": "receipt-root.pem", "enabled": False}}})


@pytest.fixture(scope="module")
def relay(deployment, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("relay") / "twobits-key"
    key_file.write_text(deployment.api_keys["main"])
    port = free_port()
    process = subprocess.Popen([sys.executable, str(REPO / "docs" / "examples" / "relay.py"), "--listen", f"127.0.0.1:{port}",
                                "--twobits", deployment.url, "--api-key-file", str(key_file), "--session", SESSION,
                                "--session", OTHER_SESSION],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "relay listening" in process.stdout.readline()
    yield f"http://127.0.0.1:{port}"
    process.kill()
    process.wait(timeout=10)


def post(url, body, session=SESSION):
    headers = {"Content-Type": "application/json"}
    if session:
        headers["Authorization"] = "Bearer " + session
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refusal:
        return refusal.code, json.loads(refusal.read())


def fallback_reasons(deployment):
    """TwoBits' `/metrics` count of fallback tokens per `app_attest_status`."""
    text = deployment.get("/metrics").raw.decode()
    return {m.group(1): int(float(m.group(2)))
            for m in re.finditer(r'^twobits_app_attest_fallback_reasons_total\{reason="([^"]*)"\} (\S+)$', text, re.M)}


def claims(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def bnd(session):
    return base64.urlsafe_b64encode(hashlib.sha256(session.encode()).digest()).rstrip(b"=").decode()


def verify(deployment, token, binding):
    """The main API's check of a token against the session of the request it came with."""
    answer = deployment.post("/v1/fallback-tokens/verify", {"token": token, "binding": binding}, client="main")
    assert answer.status == 200, answer
    return answer.json


def b64(data):
    return base64.b64encode(data).decode()


def test_a_call_without_a_session_is_refused_by_the_relay(relay):
    status, body = post(relay + "/v1/app-attest/challenges", {}, session=None)
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_a_challenge_is_forwarded_with_the_main_apis_key(relay):
    status, body = post(relay + "/v1/app-attest/challenges", {})
    assert status == 201 and len(body["challenge"]) == 43, body


def test_the_fallback_exchange_forwards_app_attest_status_and_passes_refusals_through(relay, deployment):
    before = fallback_reasons(deployment).get("unsupported", 0)
    token = deployment.mint(deployment.new_device())
    status, body = post(relay + "/v1/fallback-tokens", {"device_token": token, "app_attest_status": "unsupported"})
    assert status == 201 and body["tier"] == "devicecheck", body
    assert fallback_reasons(deployment).get("unsupported", 0) == before + 1
    status, body = post(relay + "/v1/fallback-tokens", {"device_token": token})
    assert status == 409 and body["error"]["code"] == "device_token_reused", body
    # TwoBits' own refusal of a status it does not know, passed back unchanged.
    status, body = post(relay + "/v1/fallback-tokens", {"device_token": deployment.mint(deployment.new_device()),
                                                        "app_attest_status": "bored"})
    assert status == 400 and body["error"]["code"] == "bad_request", body


def test_a_fallback_token_is_bound_to_the_relays_session_not_the_apps_word(relay, deployment):
    # The app claims another session: the relay binds to the one it authenticated.
    status, body = post(relay + "/v1/fallback-tokens", {"device_token": deployment.mint(deployment.new_device()),
                                                        "binding": OTHER_SESSION})
    assert status == 201, body
    assert claims(body["token"])["bnd"] == bnd(SESSION)
    assert verify(deployment, body["token"], SESSION)["valid"] is True
    replayed = verify(deployment, body["token"], OTHER_SESSION)
    assert replayed["valid"] is False and replayed["reason"] == "binding_mismatch", replayed

    status, body = post(relay + "/v1/fallback-tokens", {"device_token": deployment.mint(deployment.new_device())},
                        session=OTHER_SESSION)
    assert status == 201 and verify(deployment, body["token"], OTHER_SESSION)["valid"] is True
    assert verify(deployment, body["token"], SESSION)["reason"] == "binding_mismatch"


def test_attestation_and_assertion_tokens_are_bound_to_the_relays_session(relay, deployment):
    def challenge():
        status, body = post(relay + "/v1/app-attest/challenges", {})
        assert status == 201, body
        return body["challenge"]

    key = deployment.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "production"})
    assert key.status == 201, key
    key_id = key.json["key_id"]
    value = challenge()
    raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    signed = deployment.sandbox("POST", "/sandbox/v1/app-attest/attestations",
                                {"key_id": key_id, "client_data_hash": b64(hashlib.sha256(raw).digest())})
    assert signed.status == 200, signed
    status, attested = post(relay + "/v1/app-attest/attestations",
                            {"key_id": key_id, "attestation_object": signed.json["attestation_object"], "challenge": value})
    assert status == 201 and attested["tier"] == "appattest", attested
    assert verify(deployment, attested["token"], SESSION)["valid"] is True
    assert verify(deployment, attested["token"], OTHER_SESSION)["reason"] == "binding_mismatch"

    value = challenge()
    client_data = json.dumps({"challenge": value}).encode()
    signed = deployment.sandbox("POST", "/sandbox/v1/app-attest/assertions",
                                {"key_id": key_id, "client_data_hash": b64(hashlib.sha256(client_data).digest())})
    assert signed.status == 200, signed
    status, asserted = post(relay + "/v1/app-attest/assertions",
                            {"artifact": attested["artifact"], "assertion": signed.json["assertion"],
                             "client_data": b64(client_data), "challenge": value}, session=OTHER_SESSION)
    assert status == 200 and asserted["tier"] == "appattest", asserted
    assert verify(deployment, asserted["token"], OTHER_SESSION)["valid"] is True
    assert verify(deployment, asserted["token"], SESSION)["reason"] == "binding_mismatch"


def test_the_swift_client_runs_its_flow_through_the_relay(relay, deployment):
    before = fallback_reasons(deployment).get("unsupported", 0)
    demo = REPO / "docs" / "examples" / "ClientDemo"
    build = subprocess.run(["swift", "build", "--package-path", str(demo)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-2000:]
    binary = subprocess.run(["swift", "build", "--package-path", str(demo), "--show-bin-path"], capture_output=True, text=True,
                            timeout=120).stdout.strip() + "/client-demo"
    # The demo sends its --api-key as the Authorization bearer: through the relay, that is the user's session.
    result = subprocess.run([binary, "--server", relay, "--sandbox", deployment.sandbox_url, "--api-key", SESSION,
                             "--app-id", APP_ID, "--environment", "production"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "iPhone 1 attests its key: tier appattest" in result.stdout
    assert "iPhone 1 asserts: tier appattest (limited use)" in result.stdout
    assert "iPhone 2 (no App Attest) falls back: tier devicecheck, app_attest_status unsupported" in result.stdout
    # URLSessionRelay sent the reason, relay.py forwarded it, TwoBits counted it.
    assert fallback_reasons(deployment).get("unsupported", 0) == before + 1


def relay_exchange(relay, head, body=b"", shut_write=True):
    """(status, body) of the relay's answer to a raw request whose head the test writes itself; the body is sent
    from a thread (the relay may answer and close before reading it)."""
    import socket
    import threading
    host, port = relay.removeprefix("http://").rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=20)

    def send():
        try:
            s.sendall(head + body)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the relay refused and closed before taking the whole body
    sender = threading.Thread(target=send)
    sender.start()
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except OSError:
        pass
    sender.join(timeout=20)
    s.close()
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split(b" ")[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


def relay_head(length_lines):
    return (b"POST /v1/app-attest/challenges HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + SESSION.encode() +
            b"\r\nContent-Type: application/json\r\n" + length_lines + b"\r\n")


def test_a_negative_content_length_is_refused_before_the_body_is_read(relay):
    # `rfile.read(-1)` read to the end of the connection, past MAX_BODY, and forwarded all 5 MB.
    body = json.dumps({"padding": "a" * 5_000_000}).encode()
    status, answer = relay_exchange(relay, relay_head(b"Content-Length: -1\r\n"), body)
    assert status == 400 and answer["error"]["code"] == "bad_request", answer


@pytest.mark.parametrize("lines", [b"Content-Length: 2x\r\n", b"Content-Length: +2\r\n", b"Content-Length: 1_0\r\n",
                                   b"Content-Length: 2\r\nContent-Length: 2\r\n", b"Content-Length: 2\r\nContent-Length: 9\r\n"],
                         ids=["not-a-number", "plus-sign", "underscore", "repeated", "two-lengths"])
def test_a_content_length_that_is_not_one_plain_number_is_refused(relay, lines):
    status, answer = relay_exchange(relay, relay_head(lines), b"{}", shut_write=False)
    assert status == 400 and answer["error"]["code"] == "bad_request", answer


def test_a_plain_content_length_is_still_forwarded(relay):
    status, answer = relay_exchange(relay, relay_head(b"Content-Length: 2\r\n"), b"{}", shut_write=False)
    assert status == 201 and "challenge" in answer, answer

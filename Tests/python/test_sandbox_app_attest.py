"""The sandbox's App Attest devices over real HTTP, checked by the offline verifier (`twobits app-attest`)
trusting the root the sandbox serves and writes with --app-attest-root."""
import base64
import hashlib
import subprocess

import pytest

from conftest import twobits_binary

APP_ID = "TEAMID1234.com.example.sandboxed"


@pytest.fixture(scope="module")
def sandbox(twobits_module_factory):
    deployment = twobits_module_factory(autostart=False)
    deployment.start_sandbox()
    return deployment


def app_attest(*args):
    return subprocess.run([twobits_binary(), "app-attest", *args], capture_output=True, text=True, timeout=60)


def new_key(sandbox, environment="production", **extra):
    answer = sandbox.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": environment, **extra})
    assert answer.status == 201, answer
    return answer.json["key_id"]


def attest(sandbox, key_id, client_data_hash, fault=None):
    body = {"key_id": key_id, "client_data_hash": base64.b64encode(client_data_hash).decode()}
    if fault:
        body["fault"] = fault
    answer = sandbox.sandbox("POST", "/sandbox/v1/app-attest/attestations", body)
    assert answer.status == 200, answer
    return answer.json["attestation_object"]


def offline_verify(tmp_path, sandbox, key_id, attestation, client_data_hash, environment="production"):
    root = sandbox.sandbox("GET", "/sandbox/v1/app-attest/root.pem")
    assert root.status == 200 and root.headers.get("Content-Type") == "application/x-pem-file"
    (tmp_path / "root.pem").write_bytes(root.raw)
    (tmp_path / "attestation.b64").write_text(attestation)
    return app_attest("verify", "--attestation", str(tmp_path / "attestation.b64"), "--key-id", key_id, "--app-id", APP_ID,
                      "--client-data-hash", client_data_hash.hex(), "--environment", environment, "--root", str(tmp_path / "root.pem"))


def test_an_attestation_over_http_verifies_offline_against_the_served_root(sandbox, tmp_path):
    key_id = new_key(sandbox, validation_category=4, bundle_version="3.1")
    challenge_hash = hashlib.sha256(b"a challenge from the server").digest()
    result = offline_verify(tmp_path, sandbox, key_id, attest(sandbox, key_id, challenge_hash), challenge_hash)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_attestation_over_the_raw_bytes_of_a_challenge_verifies_offline(sandbox, tmp_path):
    """Issue 34: Apple's validation guide built its sample attestation with the raw bytes of its challenge
    string as the client data hash, not their SHA-256; `twobits app-attest verify` takes any length."""
    key_id = new_key(sandbox)
    raw = b"test_server_challenge"
    attestation = attest(sandbox, key_id, raw)
    result = offline_verify(tmp_path, sandbox, key_id, attestation, raw)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified" in result.stdout
    # Bound to exactly those bytes: their SHA-256 is another nonce.
    hashed = offline_verify(tmp_path, sandbox, key_id, attestation, hashlib.sha256(raw).digest())
    assert hashed.returncode == 1 and "nonce_mismatch" in hashed.stdout, hashed.stdout + hashed.stderr
    # Nothing at all is a usage error, not a refusal.
    empty = offline_verify(tmp_path, sandbox, key_id, attestation, b"")
    assert empty.returncode == 2 and "--client-data-hash" in empty.stderr, empty.stdout + empty.stderr


@pytest.mark.parametrize("fault, reason", [("bad_chain", "bad_chain"), ("wrong_nonce", "nonce_mismatch"), ("wrong_app_id", "rp_id_mismatch"),
                                           ("wrong_environment", "aaguid_mismatch"), ("wrong_key_id", "credential_id_mismatch"),
                                           ("expired", "bad_chain")])
def test_each_attestation_fault_is_refused_with_its_reason(sandbox, tmp_path, fault, reason):
    key_id = new_key(sandbox)
    challenge_hash = hashlib.sha256(fault.encode()).digest()
    result = offline_verify(tmp_path, sandbox, key_id, attest(sandbox, key_id, challenge_hash, fault), challenge_hash)
    assert result.returncode == 1, result.stdout + result.stderr
    assert reason in result.stdout + result.stderr


def test_assertions_rise_and_a_replay_repeats_the_counter(sandbox):
    key_id = new_key(sandbox)
    digest = base64.b64encode(hashlib.sha256(b"client data").digest()).decode()
    counters = [sandbox.sandbox("POST", "/sandbox/v1/app-attest/assertions", {"key_id": key_id, "client_data_hash": digest}).json["counter"]
                for _ in range(3)]
    assert counters == [1, 2, 3]
    replay = sandbox.sandbox("POST", "/sandbox/v1/app-attest/assertions", {"key_id": key_id, "client_data_hash": digest, "fault": "replayed_counter"})
    assert replay.status == 200 and replay.json["counter"] == 3


def test_bad_control_requests_are_refused_clearly(sandbox):
    digest = base64.b64encode(b"\0" * 32).decode()
    assert sandbox.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": "nodot", "environment": "production"}).status == 400
    assert sandbox.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "staging"}).status == 400
    assert sandbox.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "production", "device_id": "dev_none"}).status == 404
    assert sandbox.sandbox("POST", "/sandbox/v1/app-attest/attestations", {"key_id": "unknown", "client_data_hash": digest}).status == 404
    key_id = new_key(sandbox)
    # An attestation takes any client data hash attestKey would (1-1024 bytes here); an assertion's is SHA-256.
    empty = sandbox.sandbox("POST", "/sandbox/v1/app-attest/attestations", {"key_id": key_id, "client_data_hash": ""})
    assert empty.status == 400 and "1-1024 bytes" in empty.json["error"], empty
    large = base64.b64encode(b"\0" * 1025).decode()
    assert sandbox.sandbox("POST", "/sandbox/v1/app-attest/attestations", {"key_id": key_id, "client_data_hash": large}).status == 400
    short = sandbox.sandbox("POST", "/sandbox/v1/app-attest/assertions", {"key_id": key_id, "client_data_hash": "AAAA"})
    assert short.status == 400 and "32 bytes" in short.json["error"]
    unknown_fault = sandbox.sandbox("POST", "/sandbox/v1/app-attest/assertions", {"key_id": key_id, "client_data_hash": digest, "fault": "gremlins"})
    assert unknown_fault.status == 400 and "replayed_counter" in unknown_fault.json["error"]


def test_the_sandbox_command_writes_the_root_it_serves(tmp_path, sandbox):
    import json
    import signal
    from conftest import KEY_ID, TEAM_ID, free_port, http, wait_until
    port = free_port()
    root_file = tmp_path / "app-attest-root.pem"
    process = subprocess.Popen([twobits_binary(), "sandbox", "--team-id", TEAM_ID, "--key-id", KEY_ID, "--key-file", str(sandbox.apple_key),
                                "--listen", f"127.0.0.1:{port}", "--app-attest-root", str(root_file),
                                "--receipt-root", str(tmp_path / "receipt-root.pem")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: http("GET", f"http://127.0.0.1:{port}/sandbox/v1/healthz", timeout=2).status == 200, 15, "sandbox", process)
        served = http("GET", f"http://127.0.0.1:{port}/sandbox/v1/app-attest/root.pem")
        assert root_file.read_bytes() == served.raw
        assert served.raw.startswith(b"-----BEGIN CERTIFICATE-----\n")
        # The receipts' root, another certificate.
        receipts = http("GET", f"http://127.0.0.1:{port}/sandbox/v1/app-attest/receipt-root.pem")
        assert (tmp_path / "receipt-root.pem").read_bytes() == receipts.raw != served.raw
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)

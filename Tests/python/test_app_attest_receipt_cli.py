"""`twobits app-attest receipt` offline on receipts the sandbox makes as Apple does (CMS, BER, indefinite
lengths), trusting the receipt root the sandbox serves: every field printed and exit 0; each refusal exits 1
naming its step; usage errors exit 2."""
import base64
import subprocess

import pytest

from conftest import twobits_binary

APP_ID = "TEAMID1234.com.example.receipts"
STEPS = ["container", "signature", "chain", "payload", "app_id", "freshness", "expiration", "public_key"]


@pytest.fixture(scope="module")
def sandbox(twobits_module_factory):
    deployment = twobits_module_factory(autostart=False)
    deployment.start_sandbox()
    return deployment


@pytest.fixture(scope="module")
def attested(sandbox, tmp_path_factory):
    """(receipt base64, public key hex, directory holding root.pem) of one attested sandbox key."""
    key = sandbox.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": "development"})
    assert key.status == 201, key
    digest = base64.b64encode(b"\x01" * 32).decode()
    answer = sandbox.sandbox("POST", "/sandbox/v1/app-attest/attestations", {"key_id": key.json["key_id"], "client_data_hash": digest})
    assert answer.status == 200, answer
    root = sandbox.sandbox("GET", "/sandbox/v1/app-attest/receipt-root.pem")
    assert root.status == 200 and root.headers.get("Content-Type") == "application/x-pem-file"
    directory = tmp_path_factory.mktemp("receipt")
    (directory / "root.pem").write_bytes(root.raw)
    return answer.json["receipt"], base64.b64decode(answer.json["public_key"]).hex(), directory


def receipt(path, *args):
    return subprocess.run([twobits_binary(), "app-attest", "receipt", "--receipt", str(path), *args], capture_output=True, text=True, timeout=60)


def steps(stdout):
    result = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "FAILED", "skipped", "-"):
            result[parts[1]] = parts[0]
    return result


def test_an_attest_receipt_verifies_and_prints_every_field(attested):
    text, public_key, directory = attested
    (directory / "receipt.b64").write_text(text)
    done = receipt(directory / "receipt.b64", "--root", str(directory / "root.pem"), "--app-id", APP_ID, "--public-key", public_key)
    assert done.returncode == 0, done.stdout + done.stderr
    assert steps(done.stdout) == {**{step: "ok" for step in STEPS}, "freshness": "-"}
    for field in ["type:          ATTEST", f"app_id:        {APP_ID}", "environment:   sandbox", "creation:", "not_before:    absent",
                  "expiration:", "risk_metric:   absent", "token:", f"public_key:    {public_key}"]:
        assert field in done.stdout, field
    # The raw DER/BER bytes are read as well, and without --app-id / --public-key those steps are not checked.
    (directory / "receipt.der").write_bytes(base64.b64decode(text))
    raw = receipt(directory / "receipt.der", "--root", str(directory / "root.pem"))
    assert raw.returncode == 0, raw.stdout + raw.stderr
    assert steps(raw.stdout)["app_id"] == "-" and steps(raw.stdout)["public_key"] == "-"


@pytest.mark.parametrize("args, failing", [
    ([], "chain"),  # Apple Root CA - G3, not the sandbox's root
    (["--app-id", "TEAMID1234.com.example.other"], "app_id"),
    (["--public-key", "04" + "11" * 64], "public_key"),
    (["--at", "2001-01-01T00:00:00Z"], "chain"),  # outside the signer certificate's validity
])
def test_each_refusal_exits_1_naming_its_step(attested, args, failing):
    text, _, directory = attested
    (directory / "receipt.b64").write_text(text)
    root = [] if not args else ["--root", str(directory / "root.pem")]
    done = receipt(directory / "receipt.b64", *root, *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert steps(done.stdout)[failing] == "FAILED"
    assert f"refused at step {failing}" in done.stdout


def test_a_flipped_payload_byte_fails_the_signature(attested):
    text, _, directory = attested
    raw = bytearray(base64.b64decode(text))
    at = raw.index(APP_ID.encode())
    raw[at + 3] ^= 0x01
    (directory / "flipped.der").write_bytes(bytes(raw))
    done = receipt(directory / "flipped.der", "--root", str(directory / "root.pem"))
    assert done.returncode == 1 and steps(done.stdout)["signature"] == "FAILED", done.stdout


def test_usage_errors_exit_2(attested, tmp_path):
    _, _, directory = attested
    missing = subprocess.run([twobits_binary(), "app-attest", "receipt"], capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "--receipt" in missing.stderr
    (tmp_path / "r.b64").write_text("AAAA")
    assert receipt(tmp_path / "r.b64", "--at", "yesterday").returncode == 2
    assert receipt(tmp_path / "r.b64", "--app-id", "nodot").returncode == 2
    assert receipt(tmp_path / "r.b64", "--unknown", "x").returncode == 2
    assert receipt(tmp_path / "absent.b64").returncode == 2
    # Bytes that are no receipt at all are a refusal at the container, not a usage error.
    garbage = receipt(tmp_path / "r.b64", "--root", str(directory / "root.pem"))
    assert garbage.returncode == 1 and steps(garbage.stdout)["container"] == "FAILED"

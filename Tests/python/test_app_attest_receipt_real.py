"""`twobits app-attest receipt` offline on the twenty receipts veehaitch captured from real iPhones
(../shared/vectors/app-attest-devicecheck-appattest, or TWOBITS_VECTORS_DIR): it agrees with the Swift suite
(RealReceiptTests) and with the capture's properties, under Apple Root CA - G3 as compiled in. Skipped when the
vectors are absent, failed instead with TWOBITS_REQUIRE_VECTORS=1."""
import base64
import datetime
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import twobits_binary

REPO = Path(__file__).resolve().parents[2]


def vectors_dir():
    return Path(os.environ.get("TWOBITS_VECTORS_DIR") or REPO.parent / "shared" / "vectors")


def real_receipts():
    folder = vectors_dir() / "app-attest-devicecheck-appattest"
    if not folder.is_dir():
        return []
    receipts = []
    for path in sorted(folder.glob("ios-14.*.yaml")):
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("type") == "receipt"]
        for index, document in enumerate(documents, 1):
            receipts.append(pytest.param(document, id=f"{path.name}-{index}"))
    return receipts


RECEIPTS = real_receipts()


@pytest.fixture(autouse=True)
def vectors_present():
    if not RECEIPTS:
        message = f"{vectors_dir()} has no app-attest-devicecheck-appattest captures"
        if os.environ.get("TWOBITS_REQUIRE_VECTORS") == "1":
            pytest.fail(f"TWOBITS_REQUIRE_VECTORS=1 but {message}")
        pytest.skip(f"skipped: {message} (set TWOBITS_VECTORS_DIR)")


def rfc3339(value):
    """A property as text: PyYAML reads an unquoted time as a datetime."""
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return value


def run(tmp_path, document, *args, receipt=None):
    (tmp_path / "receipt.der").write_bytes(receipt if receipt is not None else base64.b64decode(document["receiptBase64"]))
    (tmp_path / "key.pem").write_text(document["publicKey"])
    app_id = f"{document['teamIdentifier']}.{document['bundleIdentifier']}"
    return subprocess.run([twobits_binary(), "app-attest", "receipt", "--receipt", str(tmp_path / "receipt.der"), "--app-id", app_id,
                           "--public-key", str(tmp_path / "key.pem"), *args], capture_output=True, text=True, timeout=60)


def printed(stdout):
    fields = {}
    for line in stdout.splitlines():
        key, _, value = line.strip().partition(":")
        if line.startswith("  ") and value and " " not in key:
            fields[key] = value.strip()
    return fields


def test_there_are_twenty():
    assert len(RECEIPTS) == 20


@pytest.mark.parametrize("document", RECEIPTS)
def test_each_verifies_at_its_creation_with_the_captures_fields(tmp_path, document):
    properties = document["properties"]
    done = run(tmp_path, document, "--at", rfc3339(properties["creationTime"]))
    assert done.returncode == 0, done.stdout + done.stderr
    fields = printed(done.stdout)
    assert fields["type"] == properties["type"]
    assert fields["creation"] == rfc3339(properties["creationTime"])
    assert fields["expiration"] == rfc3339(properties["expirationTime"])
    assert fields["not_before"] == (rfc3339(properties["notBefore"]) if properties["notBefore"] else "absent (ATTEST)")
    assert fields["risk_metric"] == (str(properties["riskMetric"]) if properties["riskMetric"] is not None else "absent (ATTEST)")
    assert fields["token"] == properties["token"]
    assert fields["environment"] == properties["environment"]
    assert fields["client_hash"].split()[0] == base64.b64decode(properties["clientHashBase64"]).hex()


@pytest.mark.parametrize("document", RECEIPTS[:4])
def test_refusals_name_the_same_steps_as_the_swift_suite(tmp_path, document):
    properties = document["properties"]
    expiration = datetime.datetime.fromisoformat(rfc3339(properties["expirationTime"]).replace("Z", "+00:00"))
    late = (expiration + datetime.timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    expired = run(tmp_path, document, "--at", late)
    assert expired.returncode == 1 and "refused at step expiration" in expired.stdout, expired.stdout
    raw = bytearray(base64.b64decode(document["receiptBase64"]))
    raw[raw.index(properties["token"].encode()[:16])] ^= 0x01
    flipped = run(tmp_path, document, "--at", rfc3339(properties["creationTime"]), receipt=bytes(raw))
    assert flipped.returncode == 1 and "refused at step signature" in flipped.stdout, flipped.stdout
    # Past the signer certificate's validity (2021-06-18), the chain fails before the expiration is looked at.
    outside = run(tmp_path, document, "--at", "2021-06-19T00:00:00Z")
    assert outside.returncode == 1 and "refused at step chain" in outside.stdout, outside.stdout

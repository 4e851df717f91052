"""`twobits app-attest verify` and `verify-assertion` offline, on a real capture from an iPhone
(Tests/Fixtures/AppAttest): every step printed, exit 0; a corrupted blob exits 1 naming the failing step."""
import base64
import json
import subprocess

from conftest import REPO, twobits_binary

FIXTURE = json.loads((REPO / "Tests" / "Fixtures" / "AppAttest" / "veehaitch-ios-14.4.json").read_text())
STEPS = ["decode", "format", "chain", "nonce", "key_id", "rp_id", "counter", "aaguid", "credential_id", "public_key"]


def run(*args):
    return subprocess.run([twobits_binary(), "app-attest", *args], capture_output=True, text=True, timeout=60)


def verify(tmp_path, attestation, *extra):
    path = tmp_path / "attestation.b64"
    path.write_text(attestation)
    return run("verify", "--attestation", str(path), "--key-id", FIXTURE["key_id"], "--app-id", FIXTURE["app_id"],
               "--client-data-hash", FIXTURE["client_data_hash"], "--environment", FIXTURE["environment"], *extra)


def step_lines(stdout):
    """{step: status} from the lines '  ok       chain ...'."""
    result = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "FAILED", "skipped"):
            result[parts[1]] = parts[0]
    return result


def test_a_real_attestation_and_its_assertion_verify_step_by_step(tmp_path):
    done = verify(tmp_path, FIXTURE["attestation"], "--at", FIXTURE["verify_at"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert step_lines(done.stdout) == {step: "ok" for step in STEPS}
    assert "verified" in done.stdout
    public_key = next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("  public_key:"))

    assertion = FIXTURE["assertions"][0]
    (tmp_path / "assertion.cbor").write_bytes(base64.b64decode(assertion["assertion"]))  # raw CBOR is accepted too
    (tmp_path / "client-data").write_bytes(base64.b64decode(assertion["client_data"]))
    common = ["--assertion", str(tmp_path / "assertion.cbor"), "--public-key", public_key, "--app-id", FIXTURE["app_id"],
              "--client-data", str(tmp_path / "client-data")]
    ok = run("verify-assertion", *common, "--counter", "0")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert step_lines(ok.stdout) == {"decode": "ok", "signature": "ok", "rp_id": "ok", "counter": "ok"}
    replayed = run("verify-assertion", *common, "--counter", str(assertion["counter_after"]))
    assert replayed.returncode == 1
    assert "counter_not_increasing" in replayed.stdout and step_lines(replayed.stdout)["counter"] == "FAILED"


def test_a_corrupted_or_expired_attestation_names_the_failing_step(tmp_path):
    raw = bytearray(base64.b64decode(FIXTURE["attestation"]))
    header = raw.index(b"authData") + len(b"authData")
    assert raw[header] == 0x58  # a byte string with a one-byte length (authData is 164 bytes)
    authdata_start = header + 2
    raw[authdata_start + 5] ^= 0x01  # a byte of the RP ID hash
    corrupted = verify(tmp_path, base64.b64encode(bytes(raw)).decode(), "--at", FIXTURE["verify_at"])
    assert corrupted.returncode == 1
    steps = step_lines(corrupted.stdout)
    assert steps["chain"] == "ok" and steps["nonce"] == "FAILED" and steps["key_id"] == "skipped"
    assert "refused: nonce_mismatch at step nonce" in corrupted.stdout

    expired = verify(tmp_path, FIXTURE["attestation"])  # --at defaults to now
    assert expired.returncode == 1
    assert step_lines(expired.stdout)["chain"] == "FAILED"
    assert "bad_chain: certificate has expired" in expired.stdout

    usage = run("verify", "--attestation", str(tmp_path / "missing"), "--key-id", FIXTURE["key_id"])
    assert usage.returncode == 2 and "cannot read --attestation" in usage.stderr


def test_every_form_of_the_stored_public_key_is_read(tmp_path):
    done = verify(tmp_path, FIXTURE["attestation"], "--at", FIXTURE["verify_at"])
    point = bytes.fromhex(next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("  public_key:")))
    assert len(point) == 65 and point[0] == 0x04
    assertion = FIXTURE["assertions"][0]
    (tmp_path / "assertion.b64").write_text(assertion["assertion"])
    client_data_hex = base64.b64decode(assertion["client_data"]).hex()

    def verify_assertion(public_key, client_data=("--client-data-hex", client_data_hex)):
        return run("verify-assertion", "--assertion", str(tmp_path / "assertion.b64"), "--public-key", str(public_key),
                   "--app-id", FIXTURE["app_id"], *client_data, "--counter", "0")

    # The key as a file: hex, base64, the raw 65 bytes, or a PEM PUBLIC KEY (SubjectPublicKeyInfo of the point).
    spki = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200") + point
    pem = "-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(spki).decode() + "\n-----END PUBLIC KEY-----\n"
    for name, content in {"hex": point.hex() + "\n", "base64": base64.b64encode(point).decode(), "raw": point, "pem": pem}.items():
        path = tmp_path / f"key.{name}"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        ok = verify_assertion(path)
        assert ok.returncode == 0 and step_lines(ok.stdout)["signature"] == "ok", (name, ok.stdout, ok.stderr)

    # Another key, well formed: read, then refused at the signature.
    other = tmp_path / "other.pem"
    private = subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                             capture_output=True, check=True).stdout
    other.write_bytes(subprocess.run(["openssl", "pkey", "-pubout"], input=private, capture_output=True, check=True).stdout)
    refused = verify_assertion(other)
    assert refused.returncode == 1 and step_lines(refused.stdout)["signature"] == "FAILED", refused.stdout

    # What is not a key is a usage error, exit 2, naming the option.
    (tmp_path / "short.hex").write_text(point.hex()[:-2])
    short = verify_assertion(tmp_path / "short.hex")
    assert short.returncode == 2 and "--public-key must be a 65-byte uncompressed P-256 point" in short.stderr, short.stderr
    (tmp_path / "bad.pem").write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    bad_pem = verify_assertion(tmp_path / "bad.pem")
    assert bad_pem.returncode == 2 and f"--public-key {tmp_path / 'bad.pem'}:" in bad_pem.stderr, bad_pem.stderr
    not_hex = verify_assertion(tmp_path / "key.hex", client_data=("--client-data-hex", "zz"))
    assert not_hex.returncode == 2 and "--client-data-hex is not hex" in not_hex.stderr


def test_help_and_an_unreadable_root(tmp_path):
    help = run("--help")
    assert help.returncode == 0 and help.stdout.startswith("usage: twobits app-attest verify")
    root = tmp_path / "root.pem"
    root.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    refused = verify(tmp_path, FIXTURE["attestation"], "--at", FIXTURE["verify_at"], "--root", str(root))
    assert refused.returncode == 2 and f"--root {root}:" in refused.stderr, refused.stderr

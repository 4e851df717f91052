"""Runs docs/examples/verify_fallback_token.py (the main API's verification example) against a live server."""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from conftest import AUDIENCE, ISSUER, REPO

sys.path.insert(0, str(REPO / "docs" / "examples"))
import verify_fallback_token as example  # noqa: E402


class FakeJWKS:
    """A tiny JWKS server with a key the test controls, to sign tokens TwoBits never would."""

    def __init__(self):
        self.private_key = ec.generate_private_key(ec.SECP256R1())
        self.pem = self.private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption())
        jwk = ECAlgorithm.to_jwk(self.private_key.public_key(), as_dict=True)
        self.kid = "fake-" + str(int(time.time() * 1000))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "ES256"})
        body = json.dumps({"keys": [jwk]}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def sign(self, **overrides):
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "install-1", "iat": now, "exp": now + 300,
                  "jti": "AAAAAAAAAAAAAAAAAAAAAA", "tier": "devicecheck"}
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, self.pem, algorithm="ES256", headers={"kid": self.kid, "typ": "JWT"})

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def twobits(twobits_module_factory):
    """One live deployment for this module; every test mints its own devices."""
    return twobits_module_factory()


@pytest.fixture
def fake_jwks():
    server = FakeJWKS()
    yield server
    server.close()


def live_token(deployment, **fields):
    device = deployment.new_device()
    answer = deployment.exchange(deployment.mint(device), **fields)
    assert answer.status == 201, answer
    return answer.json["token"]


def test_a_live_devicecheck_token_passes_and_is_gated_by_tier(twobits):
    token = live_token(twobits, install_id="install-7")
    claims = example.verify(token, twobits.jwks_url(), ISSUER, AUDIENCE)
    assert claims["tier"] == "devicecheck"
    assert claims["sub"] == "install-7"
    assert example.allowed(claims, "read")
    assert example.allowed(claims, "limited_write")
    assert not example.allowed(claims, "sensitive")
    assert not example.allowed(claims, "no-such-route-class")


def test_a_live_debug_token_gets_less_and_nothing_unless_debug_is_accepted(twobits, monkeypatch):
    created = twobits.post("/v1/admin/debug-secrets", {"name": "example-ci"}, client="ops")
    assert created.status == 201, created
    secret = created.json["debug_secret"]
    answer = twobits.exchange(debug_secret=secret)
    assert answer.status == 201, answer
    claims = example.verify(answer.json["token"], twobits.jwks_url(), ISSUER, AUDIENCE)
    assert claims["tier"] == "debug"
    # A production main API (the default) refuses debug tokens everywhere.
    assert not any(example.allowed(claims, route_class) for route_class in example.ROUTE_CLASS_TIERS)
    # A development deployment that opts in lets them read, and no more.
    monkeypatch.setattr(example, "ACCEPT_DEBUG_TIER", True)
    assert example.allowed(claims, "read")
    assert not example.allowed(claims, "limited_write")
    assert not example.allowed(claims, "sensitive")


def test_the_configured_issuer_and_audience_are_enforced(twobits):
    token = live_token(twobits)
    with pytest.raises(jwt.InvalidAudienceError):
        example.verify(token, twobits.jwks_url(), ISSUER, "another-api")
    with pytest.raises(jwt.InvalidIssuerError):
        example.verify(token, twobits.jwks_url(), "someone-else", AUDIENCE)


def test_a_tampered_live_token_is_refused(twobits):
    token = live_token(twobits)
    header, payload, signature = token.split(".")
    # Flip one character of the signature.
    tampered = ".".join([header, payload, ("A" if signature[5] != "A" else "B").join([signature[:5], signature[6:]])])
    with pytest.raises(jwt.InvalidSignatureError):
        example.verify(tampered, twobits.jwks_url(), ISSUER, AUDIENCE)


def test_a_token_without_tier_is_rejected_never_a_pass(fake_jwks):
    # The control: the fake key set works, so the refusal below is about the claim alone.
    good = example.verify(fake_jwks.sign(), fake_jwks.url, ISSUER, AUDIENCE)
    assert good["tier"] == "devicecheck"

    no_tier = fake_jwks.sign(tier=None)
    with pytest.raises(jwt.MissingRequiredClaimError):
        example.verify(no_tier, fake_jwks.url, ISSUER, AUDIENCE)
    # Whatever a careless caller does with the raw claims, allowed() denies them.
    raw = jwt.decode(no_tier, options={"verify_signature": False})
    assert not any(example.allowed(raw, route_class) for route_class in example.ROUTE_CLASS_TIERS)


@pytest.mark.parametrize("tier", ["premium", "", "DEVICECHECK", "none", 1, True, ["devicecheck"]])
def test_an_unknown_tier_is_rejected(fake_jwks, tier):
    token = fake_jwks.sign(tier=tier)
    with pytest.raises(jwt.InvalidTokenError):
        example.verify(token, fake_jwks.url, ISSUER, AUDIENCE)


def test_an_expired_token_is_rejected(fake_jwks):
    past = int(time.time()) - 3600
    with pytest.raises(jwt.ExpiredSignatureError):
        example.verify(fake_jwks.sign(iat=past - 300, exp=past), fake_jwks.url, ISSUER, AUDIENCE)


def test_a_token_of_a_key_outside_the_jwks_is_rejected(twobits, fake_jwks):
    # Signed by the fake key, checked against TwoBits' real key set: no key for that kid.
    with pytest.raises(jwt.PyJWKClientError):
        example.verify(fake_jwks.sign(), twobits.jwks_url(), ISSUER, AUDIENCE)


def test_the_example_runs_as_a_script(twobits):
    import subprocess

    token = live_token(twobits)
    script = Path(example.__file__)
    result = subprocess.run([sys.executable, str(script), token, "--jwks-url", twobits.jwks_url(),
                             "--issuer", ISSUER, "--audience", AUDIENCE], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert '"tier": "devicecheck"' in result.stdout
    assert "sensitive: refused" in result.stdout

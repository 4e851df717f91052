"""Issue 4, the fallback token tier, checked from outside with PyJWT against a live server and sandbox."""
import base64
import hashlib
import json
import threading
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import AUDIENCE, ISSUER

TTL = 600
LIMITED_TTL = 120


TOKENS = {"ttl_seconds": TTL, "limited_use_ttl_seconds": LIMITED_TTL}


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    """One deployment for the tests that do not change its keys; each test uses its own devices."""
    return twobits_module_factory(tokens=TOKENS)


@pytest.fixture
def own_deployment(twobits_factory):
    """A deployment of its own, for tests that rotate keys."""
    return twobits_factory(tokens=TOKENS)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unverified(token):
    return jwt.get_unverified_header(token), jwt.decode(token, options={"verify_signature": False})


def verify_with_jwks(deployment, token):
    """What the main API does: fetch the JWKS, pick the key by kid, check signature, iss, aud and exp."""
    client = jwt.PyJWKClient(deployment.jwks_url(), cache_jwk_set=False, cache_keys=False)
    key = client.get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=["ES256"], audience=AUDIENCE, issuer=ISSUER,
                      options={"require": ["iss", "aud", "sub", "iat", "exp", "jti", "tier"]})


def fresh_token(deployment, device_id=None):
    device_id = device_id or deployment.new_device()
    return device_id, deployment.mint(device_id)


def exchange_ok(deployment, **fields):
    _, device_token = fresh_token(deployment)
    answer = deployment.exchange(device_token, **fields)
    assert answer.status == 201, answer
    return answer.json["token"]


def signing_key_files(deployment):
    return sorted(p for p in Path(deployment.keys_dir).iterdir() if p.suffix == ".pem")


def server_signing_key(deployment, index=-1):
    """The deployment's own signing key (the test owns the key directory), with its kid."""
    path = signing_key_files(deployment)[index]
    kid = path.stem.split("-", 1)[1]
    return path.read_bytes(), kid


def sign(claims, key_pem, kid):
    return jwt.encode(claims, key_pem, algorithm="ES256", headers={"kid": kid, "typ": "JWT"})


def valid_claims(**overrides):
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "install-x", "iat": now, "exp": now + 300,
              "jti": b64url(b"0123456789abcdef"), "tier": "devicecheck"}
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


# -- exchange and the token ---------------------------------------------------------------------


def test_exchange_issues_a_token_pyjwt_verifies_against_the_served_jwks(deployment):
    device_id, device_token = fresh_token(deployment)
    answer = deployment.exchange(device_token, install_id="install-42")
    assert answer.status == 201, answer
    body = answer.json
    assert body["token_type"] == "Bearer"
    assert body["tier"] == "devicecheck"
    assert body["expires_in"] == TTL

    claims = verify_with_jwks(deployment, body["token"])
    assert claims["iss"] == ISSUER
    assert claims["aud"] == AUDIENCE
    assert claims["exp"] - claims["iat"] == TTL
    assert abs(claims["iat"] - time.time()) < 60
    assert claims["tier"] == "devicecheck"
    assert claims["sub"] == "install-42"
    assert "lim" not in claims
    assert len(base64.urlsafe_b64decode(claims["jti"] + "=" * (-len(claims["jti"]) % 4))) == 16

    header = jwt.get_unverified_header(body["token"])
    assert header["alg"] == "ES256"
    assert header["typ"] == "JWT"
    jwks = deployment.get("/.well-known/jwks.json").json
    (jwk,) = [k for k in jwks["keys"] if k["kid"] == header["kid"]]
    # The kid is the key's RFC 7638 thumbprint, recomputed here.
    canonical = json.dumps({"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"], "y": jwk["y"]}, separators=(",", ":"), sort_keys=True)
    assert header["kid"] == b64url(hashlib.sha256(canonical.encode()).digest())

    # The exchange validated the token with Apple without writing the device's bits.
    assert deployment.device(device_id)["updates"] == 0


def test_pyjwt_refuses_the_token_for_another_audience_or_issuer(deployment):
    token = exchange_ok(deployment)
    client = jwt.PyJWKClient(deployment.jwks_url())
    key = client.get_signing_key_from_jwt(token).key
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(token, key, algorithms=["ES256"], audience="someone-else", issuer=ISSUER)
    with pytest.raises(jwt.InvalidIssuerError):
        jwt.decode(token, key, algorithms=["ES256"], audience=AUDIENCE, issuer="someone-else")


def test_jwks_is_public_and_cacheable(deployment):
    answer = deployment.get("/.well-known/jwks.json")
    assert answer.status == 200
    assert answer.headers["Cache-Control"] == "public, max-age=300"
    assert answer.headers["Content-Type"].startswith("application/json")
    (key,) = answer.json["keys"]
    assert {key["kty"], key["crv"], key["alg"], key["use"]} == {"EC", "P-256", "ES256", "sig"}
    assert "d" not in key


def test_without_install_id_the_subject_is_a_fresh_random_id(deployment):
    subjects = {unverified(exchange_ok(deployment))[1]["sub"] for _ in range(3)}
    assert len(subjects) == 3


def test_exchange_needs_the_tokens_role(deployment):
    _, device_token = fresh_token(deployment)
    assert deployment.post("/v1/fallback-tokens", {"device_token": device_token}).status == 401
    assert deployment.post("/v1/fallback-tokens", {"device_token": device_token}, client="marketing").status == 403
    # Refused before Apple was asked: the token is still good for the right client.
    assert deployment.exchange(device_token).status == 201


def test_a_reused_device_token_is_refused(deployment):
    _, device_token = fresh_token(deployment)
    assert deployment.exchange(device_token).status == 201
    again = deployment.exchange(device_token)
    assert again.status == 409, again
    assert again.error_code == "device_token_reused"
    # Also with another install id or as a limited-use request: the token itself is spent.
    assert deployment.exchange(device_token, install_id="other", limited_use=True).error_code == "device_token_reused"


def test_a_token_apple_does_not_know_is_invalid(deployment):
    answer = deployment.exchange(base64.b64encode(b"x" * 2400).decode())
    assert answer.status == 400, answer
    assert answer.error_code == "invalid_device_token"


# -- bans -----------------------------------------------------------------------------------------


def test_a_banned_device_is_refused(deployment):
    device_id, first = fresh_token(deployment)
    ban = deployment.post("/v1/admin/bans", {"device_token": first, "reason": "chargeback fraud"}, client="ops")
    assert ban.status == 200, ban
    assert ban.json["banned"] is True and ban.json["applied"] is True
    assert deployment.device(device_id)["bit1"] is True

    answer = deployment.exchange(deployment.mint(device_id))
    assert answer.status == 403, answer
    assert answer.error_code == "device_banned"

    # Another device is unaffected.
    assert deployment.exchange(fresh_token(deployment)[1]).status == 201


def test_a_pending_ban_by_install_id_is_applied_at_the_next_exchange(deployment):
    device_id, device_token = fresh_token(deployment)
    order = deployment.post("/v1/admin/bans", {"install_id": "install-evil", "reason": "scripted signups"}, client="ops")
    assert order.status == 202, order
    assert order.json["banned"] is True and order.json["applied"] is False
    pending = deployment.get("/v1/admin/bans/pending", client="ops").json["pending"]
    assert "install-evil" in [p["install_id"] for p in pending]
    assert deployment.device(device_id)["bit1"] is False

    # An exchange without that install id is not affected.
    assert deployment.exchange(fresh_token(deployment)[1], install_id="install-good").status == 201

    answer = deployment.exchange(device_token, install_id="install-evil")
    assert answer.status == 403, answer
    assert answer.error_code == "device_banned"

    # The ban is now in the physical device's bits (seen by Apple, i.e. the sandbox) ...
    bits = deployment.device(device_id)
    assert bits["bit1"] is True
    assert bits["last_update_time"] is not None
    # ... so every later token of that device is refused, whatever install id it claims.
    later = deployment.exchange(deployment.mint(device_id), install_id="install-reinstalled")
    assert later.error_code == "device_banned"
    # The order is no longer pending, and the write is audited.
    assert "install-evil" not in [p["install_id"] for p in deployment.get("/v1/admin/bans/pending", client="ops").json["pending"]]
    subjects = [(e["action"], e.get("subject"), e["result"]) for e in deployment.audit_events()]
    assert any(s == "install-evil" and r == "ok" and "ban" in a for a, s, r in subjects), subjects


# -- rotation -------------------------------------------------------------------------------------


def wait_for_new_kid(deployment, old_kid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        token = exchange_ok(deployment)
        if jwt.get_unverified_header(token)["kid"] != old_kid:
            return token
        time.sleep(0.1)
    raise AssertionError(f"the server kept signing with {old_kid} after SIGHUP\n{deployment.server_log()}")


def test_rotation_signs_with_the_new_key_and_old_tokens_keep_verifying(own_deployment):
    deployment = own_deployment
    old_token = exchange_ok(deployment)
    old_kid = jwt.get_unverified_header(old_token)["kid"]

    rotated = deployment.cli("keys", "rotate", "--dir", str(deployment.keys_dir)).stdout
    new_kid = rotated.split("kid ", 1)[1].split()[0]
    assert new_kid != old_kid
    # A rotated key signs only after a reload.
    assert jwt.get_unverified_header(exchange_ok(deployment))["kid"] == old_kid

    deployment.reload_keys()
    new_token = wait_for_new_kid(deployment, old_kid)
    assert jwt.get_unverified_header(new_token)["kid"] == new_kid

    kids = [k["kid"] for k in deployment.get("/.well-known/jwks.json").json["keys"]]
    assert sorted(kids) == sorted([old_kid, new_kid])
    for token in (old_token, new_token):
        assert verify_with_jwks(deployment, token)["tier"] == "devicecheck"
        answer = deployment.verify(token)
        assert answer.status == 200 and answer.json["valid"] is True, answer

    # Prune with the real token lifetime: the old key may still have live tokens, so it stays.
    pruned = deployment.cli("keys", "prune", "--dir", str(deployment.keys_dir), "--max-ttl", str(TTL)).stdout
    assert "nothing to prune" in pruned
    assert len(signing_key_files(deployment)) == 2
    listing = deployment.cli("keys", "list", "--dir", str(deployment.keys_dir), "--max-ttl", str(TTL)).stdout
    assert f"{old_kid}" in listing and "verifying" in listing and "signing" in listing

    # After another reload the old token still verifies (the retired key is still within its window).
    deployment.reload_keys()
    time.sleep(0.5)
    assert deployment.verify(old_token).json["valid"] is True
    assert verify_with_jwks(deployment, old_token)["sub"]


def test_prune_removes_a_retired_key_only_after_activation_plus_the_given_lifetime(own_deployment):
    # With --max-ttl 1 the operator says no token lives longer than a second, so the test need not
    # wait out a real TTL; the rules are those of a real prune.
    deployment = own_deployment
    keys = str(deployment.keys_dir)
    (first,) = signing_key_files(deployment)
    old_kid = first.stem.split("-", 1)[1]
    exchange_ok(deployment)
    deployment.cli("keys", "rotate", "--dir", keys)
    time.sleep(1.2)
    # Rotated but not yet activated by the server: the old key is still signing, so it stays.
    assert "nothing to prune" in deployment.cli("keys", "prune", "--dir", keys, "--max-ttl", "1").stdout
    assert first.exists()

    deployment.reload_keys()
    wait_for_new_kid(deployment, old_kid)
    # Activated just now: the old key's tokens may live up to --max-ttl longer.
    assert "nothing to prune" in deployment.cli("keys", "prune", "--dir", keys, "--max-ttl", "60").stdout
    time.sleep(1.2)
    out = deployment.cli("keys", "prune", "--dir", keys, "--max-ttl", "1").stdout
    assert f"removed {old_kid}" in out
    remaining = signing_key_files(deployment)
    assert len(remaining) == 1 and remaining[0] != first
    # The signing key is never pruned.
    time.sleep(1.2)
    assert "nothing to prune" in deployment.cli("keys", "prune", "--dir", keys, "--max-ttl", "1").stdout
    assert exchange_ok(deployment)


def test_the_server_refuses_a_group_readable_key(twobits_factory):
    deployment = twobits_factory(autostart=False)
    (key,) = signing_key_files(deployment)
    key.chmod(0o640)
    deployment.start_sandbox()
    result = deployment.cli("serve", "--config", str(deployment.config_path), check=False)
    assert result.returncode != 0
    assert "chmod 600" in result.stderr


def test_the_server_refuses_an_empty_key_directory_naming_the_fix(twobits_factory):
    deployment = twobits_factory(autostart=False)
    for key in signing_key_files(deployment):
        key.unlink()
    result = deployment.cli("serve", "--config", str(deployment.config_path), check=False)
    assert result.returncode != 0
    assert f"twobits keys generate --dir {deployment.keys_dir}" in result.stderr


def test_keys_generate_writes_owner_only_files(twobits_factory):
    deployment = twobits_factory(autostart=False)
    deployment.cli("keys", "rotate", "--dir", str(deployment.keys_dir))
    files = signing_key_files(deployment)
    assert len(files) == 2
    for path in files:
        assert path.stat().st_mode & 0o777 == 0o600, path
        millis, kid = path.stem.split("-", 1)
        assert millis.isdigit() and len(kid) == 43
    assert deployment.keys_dir.stat().st_mode & 0o777 == 0o700


# -- verify and consume ---------------------------------------------------------------------------


def test_a_limited_use_token_is_consumed_exactly_once_under_concurrency(deployment):
    token = exchange_ok(deployment, limited_use=True)
    claims = verify_with_jwks(deployment, token)
    assert claims["lim"] is True
    assert claims["exp"] - claims["iat"] == LIMITED_TTL

    threads_count = 12
    barrier = threading.Barrier(threads_count)
    answers = [None] * threads_count

    def consume(i):
        barrier.wait()
        answers[i] = deployment.verify(token, consume=True)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(threads_count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(a is not None and a.status == 200 and a.json["valid"] is True for a in answers), answers
    firsts = [a for a in answers if a.json["already_consumed"] is False]
    assert len(firsts) == 1, answers
    # Later consumes see it used; a plain verify does not consume.
    assert deployment.verify(token, consume=True).json["already_consumed"] is True
    assert deployment.verify(token).json["valid"] is True


def test_consume_is_only_for_limited_use_tokens(deployment):
    token = exchange_ok(deployment)
    answer = deployment.verify(token, consume=True)
    assert answer.status == 400, answer
    assert answer.error_code == "bad_request"


def verify_reason(deployment, token):
    answer = deployment.verify(token)
    assert answer.status == 200, answer
    assert answer.json["valid"] is False, answer
    return answer.json["reason"]


def test_a_tampered_token_is_a_bad_signature(deployment):
    token = exchange_ok(deployment)
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "someone-else"
    forged = ".".join([header, b64url(json.dumps(claims).encode()), signature])
    assert verify_reason(deployment, forged) == "bad_signature"
    with pytest.raises(jwt.InvalidSignatureError):
        verify_with_jwks(deployment, forged)


def test_reasons_for_tokens_signed_with_the_servers_own_key(deployment):
    # The test owns the deployment's key directory, so it can sign what the server never would.
    key_pem, kid = server_signing_key(deployment)
    assert verify_reason(deployment, sign(valid_claims(aud="other-api"), key_pem, kid)) == "wrong_audience"
    assert verify_reason(deployment, sign(valid_claims(iss="other-issuer"), key_pem, kid)) == "wrong_issuer"
    past = int(time.time()) - 3600
    assert verify_reason(deployment, sign(valid_claims(iat=past - 300, exp=past), key_pem, kid)) == "expired"
    # No tier: invalid, never a pass.
    assert verify_reason(deployment, sign(valid_claims(tier=None), key_pem, kid)) == "malformed"
    assert verify_reason(deployment, sign(valid_claims(tier="premium"), key_pem, kid)) == "malformed"
    # The control: the same signing path with good claims is valid.
    good = deployment.verify(sign(valid_claims(), key_pem, kid))
    assert good.json["valid"] is True, good


def test_reasons_for_tokens_signed_with_a_foreign_key(deployment):
    foreign = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    # Our key, our kid: the server does not know it.
    assert verify_reason(deployment, sign(valid_claims(), foreign, "not-a-twobits-kid")) == "unknown_key"
    # Wrong audience, signed with a key the server does not have: the key is checked first.
    assert verify_reason(deployment, sign(valid_claims(aud="other-api"), foreign, "x")) == "unknown_key"
    # Borrowing the server's kid does not help.
    _, kid = server_signing_key(deployment)
    assert verify_reason(deployment, sign(valid_claims(), foreign, kid)) == "bad_signature"


def test_a_real_token_with_its_kid_changed_is_an_unknown_key(deployment):
    token = exchange_ok(deployment)
    _, payload, signature = token.split(".")
    header = b64url(json.dumps({"alg": "ES256", "kid": "unknown-kid", "typ": "JWT"}).encode())
    assert verify_reason(deployment, ".".join([header, payload, signature])) == "unknown_key"


@pytest.mark.parametrize("garbage", ["", "garbage", "a.b.c", "e30.e30.e30", "eyJhbGciOiJub25lIn0.e30."])
def test_garbage_is_malformed(deployment, garbage):
    assert verify_reason(deployment, garbage) == "malformed"


# -- debug secrets --------------------------------------------------------------------------------


def test_debug_secrets_issue_debug_tier_tokens_in_development(deployment):
    created = deployment.post("/v1/admin/debug-secrets", {"name": "ci-runner"}, client="ops")
    assert created.status == 201, created
    secret = created.json["debug_secret"]
    assert secret

    # Shown once: the list has names only.
    listed = deployment.get("/v1/admin/debug-secrets", client="ops")
    assert "ci-runner" in [s["name"] for s in listed.json["debug_secrets"]]
    assert secret not in listed.raw.decode()

    answer = deployment.exchange(debug_secret=secret)
    assert answer.status == 201, answer
    assert answer.json["tier"] == "debug"
    claims = verify_with_jwks(deployment, answer.json["token"])
    assert claims["tier"] == "debug"
    assert claims["exp"] - claims["iat"] == TTL

    assert deployment.exchange(debug_secret="dbg_wrong").status == 401
    assert deployment.exchange(debug_secret=secret, device_token=fresh_token(deployment)[1]).status == 400

    assert deployment.request("DELETE", "/v1/admin/debug-secrets/ci-runner", client="ops").status == 204
    revoked = deployment.exchange(debug_secret=secret)
    assert revoked.status == 401, revoked
    assert revoked.error_code == "invalid_debug_secret"


def test_at_most_20_debug_secrets(twobits_factory):
    deployment = twobits_factory()
    for i in range(20):
        assert deployment.post("/v1/admin/debug-secrets", {"name": f"s{i}"}, client="ops").status == 201
    too_many = deployment.post("/v1/admin/debug-secrets", {"name": "s20"}, client="ops")
    assert too_many.status == 409, too_many
    assert deployment.post("/v1/admin/debug-secrets", {"name": "s0"}, client="ops").status == 409  # exists
    assert deployment.request("DELETE", "/v1/admin/debug-secrets/s0", client="ops").status == 204
    assert deployment.post("/v1/admin/debug-secrets", {"name": "s20"}, client="ops").status == 201


def test_debug_secrets_are_refused_in_production(twobits_factory):
    deployment = twobits_factory(environment="production")
    created = deployment.post("/v1/admin/debug-secrets", {"name": "leftover"}, client="ops")
    assert created.status == 201, created
    answer = deployment.exchange(debug_secret=created.json["debug_secret"])
    assert answer.status == 403, answer
    assert answer.error_code == "debug_disabled"
    # Real device tokens still work in production.
    token = exchange_ok(deployment)
    assert verify_with_jwks(deployment, token)["tier"] == "devicecheck"
    # A restart warns that the stored debug secrets are useless here.
    deployment.restart_server()
    assert "debug secrets exist but are refused in production" in deployment.server_log()


def test_a_production_server_sharing_the_key_directory_does_not_vouch_for_debug_tokens(twobits_factory):
    """Issue 34: a development server and a production server share `tokens.keys_dir`, so the production
    server knows the key that signed a development debug token. Its verify route refuses the debug tier
    (`debug_tier`), with `consume` too, and consumes nothing; the development server still vouches for it."""
    development = twobits_factory(tokens=TOKENS)
    production = twobits_factory(environment="production", tokens={**TOKENS, "keys_dir": str(development.keys_dir)})
    secret = development.post("/v1/admin/debug-secrets", {"name": "simulator"}, client="ops").json["debug_secret"]
    debug_token = development.exchange(debug_secret=secret).json["token"]
    limited = development.exchange(debug_secret=secret, limited_use=True).json["token"]
    assert unverified(debug_token)[1]["tier"] == "debug"

    for token, consume in [(debug_token, None), (limited, True)]:
        answer = production.verify(token, consume=consume)
        assert answer.status == 200, answer
        assert answer.json == {"valid": False, "reason": "debug_tier"}, answer
    assert 'twobits_fallback_verifications_total{result="debug_tier"} 2' in production.get("/metrics").raw.decode()

    # The control: production vouches for its own devicecheck tokens, development for the debug ones.
    assert production.verify(exchange_ok(production)).json["valid"] is True
    assert development.verify(debug_token).json["valid"] is True
    consumed = development.verify(limited, consume=True)
    assert consumed.json["valid"] is True and consumed.json["already_consumed"] is False, consumed


def test_token_routes_answer_not_enabled_without_a_tokens_section(twobits_factory):
    deployment = twobits_factory(tokens=False)
    answer = deployment.exchange(fresh_token(deployment)[1])
    assert answer.status == 409, answer
    assert answer.error_code == "not_enabled"
    assert deployment.get("/.well-known/jwks.json").status == 409

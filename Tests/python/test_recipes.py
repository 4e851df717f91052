"""The main API's verification recipes (docs/examples: Go, Node, Python) run against a live `twobits serve`.

Each is run as its users would run it, through its command line: accepted tokens print their claims and
exit 0; refused ones print `invalid token: <reason>` and exit 1.
"""
import os
import shutil
import subprocess
import sys
import time

import jwt
import pytest

from conftest import AUDIENCE, ISSUER, REPO
from test_main_api_example import FakeJWKS

EXAMPLES = REPO / "docs" / "examples"


@pytest.fixture(scope="module")
def go_recipe(tmp_path_factory):
    go = shutil.which("go")
    if go is None:
        pytest.fail("go is missing: .ci/install-deps.sh --test installs Debian's golang-go")
    binary = tmp_path_factory.mktemp("go") / "verify"
    cache = tmp_path_factory.mktemp("gocache")
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=EXAMPLES / "go", check=True, capture_output=True, timeout=300,
                   env={**os.environ, "GOCACHE": str(cache), "GOFLAGS": "-mod=mod", "GO111MODULE": "on"})
    return [str(binary)]


@pytest.fixture(scope="module", params=["go", "node", "python"])
def recipe(request):
    if request.param == "go":
        return request.getfixturevalue("go_recipe")
    if request.param == "node":
        node = shutil.which("node")
        if node is None:
            pytest.fail("node is missing: .ci/install-deps.sh --test installs Debian's nodejs")
        return [node, str(EXAMPLES / "node" / "verify.mjs")]
    return [sys.executable, str(EXAMPLES / "verify_fallback_token.py")]


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory()


@pytest.fixture(scope="module")
def fake_jwks():
    server = FakeJWKS()
    yield server
    server.close()


def run(recipe, token, jwks_url, audience=AUDIENCE, tiers="devicecheck", consume=None, binding=None):
    arguments = [*recipe, "--jwks-url", jwks_url, "--issuer", ISSUER, "--audience", audience, "--tiers", tiers]
    if binding is not None:
        arguments += ["--binding", binding]
    if consume:
        arguments += ["--consume-url", consume[0], "--api-key", consume[1]]
    return subprocess.run([*arguments, token], capture_output=True, text=True, timeout=60)


def refused(result, reason):
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "invalid token" in result.stderr, result.stderr
    assert reason.lower() in result.stderr.lower(), result.stderr
    return True


def fresh_token(deployment, **fields):
    answer = deployment.exchange(deployment.mint(deployment.new_device()), **fields)
    assert answer.status == 201, answer
    return answer.json["token"]


def test_a_fresh_token_from_twobits_is_accepted(recipe, deployment):
    result = run(recipe, fresh_token(deployment, install_id="install-recipe"), deployment.jwks_url())
    assert result.returncode == 0, result.stderr
    assert '"install-recipe"' in result.stdout and '"devicecheck"' in result.stdout


def test_a_tampered_signature_is_refused(recipe, deployment):
    header, payload, signature = fresh_token(deployment).split(".")
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    assert refused(run(recipe, ".".join([header, payload, flipped]), deployment.jwks_url()), "signature")


def test_a_tampered_payload_is_refused(recipe, deployment):
    header, payload, signature = fresh_token(deployment).split(".")
    claims = jwt.decode(fresh_token(deployment), options={"verify_signature": False})
    claims["tier"] = "devicecheck"
    claims["sub"] = "someone-else"
    forged = jwt.utils.base64url_encode(jwt.api_jws.json.dumps(claims, separators=(",", ":")).encode()).decode()
    assert refused(run(recipe, ".".join([header, forged, signature]), deployment.jwks_url()), "signature")


def test_the_wrong_audience_is_refused(recipe, deployment):
    assert refused(run(recipe, fresh_token(deployment), deployment.jwks_url(), audience="another-api"), "audience")


def test_the_control_a_token_signed_by_the_served_key_is_accepted(recipe, fake_jwks):
    result = run(recipe, fake_jwks.sign(), fake_jwks.url)
    assert result.returncode == 0, result.stderr


def test_an_expired_token_is_refused(recipe, fake_jwks):
    now = int(time.time())
    assert refused(run(recipe, fake_jwks.sign(iat=now - 900, exp=now - 60), fake_jwks.url), "expired")


def test_a_tier_not_in_the_allowed_list_is_refused(recipe, fake_jwks):
    assert refused(run(recipe, fake_jwks.sign(tier="debug"), fake_jwks.url, tiers="devicecheck"), "tier")
    assert run(recipe, fake_jwks.sign(tier="debug"), fake_jwks.url, tiers="devicecheck,debug").returncode == 0


def test_an_appattest_token_is_accepted_where_the_route_lists_its_tier(recipe, fake_jwks):
    # The docs send every team to these recipes for both tiers: an App Attest token is one of TwoBits' tiers.
    result = run(recipe, fake_jwks.sign(tier="appattest"), fake_jwks.url, tiers="appattest")
    assert result.returncode == 0, result.stderr
    assert '"appattest"' in result.stdout
    assert refused(run(recipe, fake_jwks.sign(tier="appattest"), fake_jwks.url, tiers="devicecheck"), "tier")


def test_a_token_signed_by_a_key_not_in_the_jwks_is_refused(recipe, fake_jwks):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    stranger = ec.generate_private_key(ec.SECP256R1()).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                                      serialization.NoEncryption())
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "s", "iat": now, "exp": now + 300, "jti": "j" * 22, "tier": "devicecheck"}
    # Under the served key's kid: the signature does not verify.
    same_kid = jwt.encode(claims, stranger, algorithm="ES256", headers={"kid": fake_jwks.kid, "typ": "JWT"})
    assert refused(run(recipe, same_kid, fake_jwks.url), "signature")
    # Under a kid the JWKS does not list (even after the one refetch): an unknown key.
    other_kid = jwt.encode(claims, stranger, algorithm="ES256", headers={"kid": "stranger", "typ": "JWT"})
    result = run(recipe, other_kid, fake_jwks.url)
    assert result.returncode == 1 and "invalid token" in result.stderr, result.stderr


def test_a_limited_use_token_is_accepted_once_after_consuming_it(recipe, deployment):
    token = fresh_token(deployment, limited_use=True)
    consume = (deployment.url + "/v1/fallback-tokens/verify", deployment.api_keys["main"])
    assert refused(run(recipe, token, deployment.jwks_url()), "limited")
    first = run(recipe, token, deployment.jwks_url(), consume=consume)
    assert first.returncode == 0, first.stderr
    assert refused(run(recipe, token, deployment.jwks_url(), consume=consume), "already_consumed")


def test_a_bound_token_is_accepted_only_with_its_binding(recipe, deployment):
    session = "sess_9d2e-é-41"
    token = fresh_token(deployment, binding=session)
    accepted = run(recipe, token, deployment.jwks_url(), binding=session)
    assert accepted.returncode == 0, accepted.stderr
    for other in (session + "x", session[:-1], "sess_9d2e-e-41"):
        assert refused(run(recipe, token, deployment.jwks_url(), binding=other), "binding_mismatch")
    # A route without a session does not check bindings: the bound token passes as before.
    assert run(recipe, token, deployment.jwks_url()).returncode == 0


def test_an_unbound_token_is_refused_where_a_binding_is_checked(recipe, deployment):
    assert refused(run(recipe, fresh_token(deployment), deployment.jwks_url(), binding="sess_1"), "binding_mismatch")


def test_a_bound_limited_use_token_is_consumed_only_under_its_binding(recipe, deployment):
    token = fresh_token(deployment, binding="sess_owner", limited_use=True)
    consume = (deployment.url + "/v1/fallback-tokens/verify", deployment.api_keys["main"])
    assert refused(run(recipe, token, deployment.jwks_url(), consume=consume, binding="sess_thief"), "binding_mismatch")
    first = run(recipe, token, deployment.jwks_url(), consume=consume, binding="sess_owner")
    assert first.returncode == 0, first.stderr

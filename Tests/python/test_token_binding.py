"""Issue 35, part 4: tokens bound to a session. Every exchange (fallback, App Attest attestation and
assertion) takes an optional `binding` (the user's session id or OAuth token, 1-1,024 bytes of UTF-8);
the token carries `bnd`, the base64url SHA-256 of it, and `POST /v1/fallback-tokens/verify` with a
binding answers `binding_mismatch` unless the token is bound to exactly that one. The binding is a
credential: it is never logged nor echoed."""
import base64
import hashlib

import jwt
import pytest

from test_app_attest import APP_ATTEST, assert_key, assertion_request, attest, new_key


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": APP_ATTEST})


def bnd(binding):
    return base64.urlsafe_b64encode(hashlib.sha256(binding.encode()).digest()).decode().rstrip("=")


def claims_of(token):
    return jwt.decode(token, options={"verify_signature": False})


def exchange(deployment, **fields):
    return deployment.exchange(deployment.mint(deployment.new_device()), **fields)


def verify(deployment, token, **fields):
    answer = deployment.post("/v1/fallback-tokens/verify", {"token": token, **fields}, client="main")
    assert answer.status == 200, answer
    return answer.json


def test_a_bound_fallback_token_verifies_only_with_its_binding(deployment):
    session = "sess_4f9a2c71e0b84d6a"
    answer = exchange(deployment, binding=session)
    assert answer.status == 201, answer
    token = answer.json["token"]
    assert claims_of(token)["bnd"] == bnd(session)

    same = verify(deployment, token, binding=session)
    assert same["valid"] is True and same["claims"]["bnd"] == bnd(session), same
    for other in (session + "x", session[:-1], "sess_4f9a2c71e0b84d6b", session.upper()):
        assert verify(deployment, token, binding=other) == {"valid": False, "reason": "binding_mismatch"}, other
    # Without a binding the token is valid (a main API that does not check bindings keeps working); the
    # claims show it is bound.
    unchecked = verify(deployment, token)
    assert unchecked["valid"] is True and unchecked["claims"]["bnd"] == bnd(session), unchecked


def test_an_unbound_token_verified_with_a_binding_is_a_mismatch(deployment):
    token = exchange(deployment).json["token"]
    assert "bnd" not in claims_of(token)
    assert verify(deployment, token, binding="sess_anything") == {"valid": False, "reason": "binding_mismatch"}
    answer = verify(deployment, token)
    assert answer["valid"] is True and "bnd" not in answer["claims"], answer


def test_a_bound_limited_use_token_is_not_consumed_under_another_binding(deployment):
    token = exchange(deployment, binding="sess_owner", limited_use=True).json["token"]
    assert verify(deployment, token, binding="sess_thief", consume=True) == {"valid": False, "reason": "binding_mismatch"}
    first = verify(deployment, token, binding="sess_owner", consume=True)
    assert first["valid"] is True and first["already_consumed"] is False, first
    again = verify(deployment, token, binding="sess_owner", consume=True)
    assert again["valid"] is True and again["already_consumed"] is True, again


def test_bindings_are_counted_in_utf8_bytes_from_1_to_1024(deployment):
    for accepted in ("a", "a" * 1024, "é" * 512, "🔑" * 256):
        answer = exchange(deployment, binding=accepted)
        assert answer.status == 201, (len(accepted.encode()), answer)
        token = answer.json["token"]
        assert claims_of(token)["bnd"] == bnd(accepted)
        assert verify(deployment, token, binding=accepted)["valid"] is True
    # 513 code points of two bytes: 1,026 bytes, refused although it is under 1,024 characters.
    for refused in ("", "a" * 1025, "é" * 513, 42, True, ["a"], {"a": 1}):
        answer = exchange(deployment, binding=refused)
        assert answer.status == 400 and answer.error_code == "bad_request", (refused, answer)
        answer = deployment.post("/v1/fallback-tokens/verify", {"token": "x.y.z", "binding": refused}, client="main")
        assert answer.status == 400 and answer.error_code == "bad_request", (refused, answer)


def test_app_attest_tokens_are_bound_by_the_attestation_and_by_each_assertion(deployment):
    key_id = new_key(deployment)
    attested = attest(deployment, key_id, binding="sess_strong_1")
    assert attested.status == 201, attested
    assert claims_of(attested.json["token"])["bnd"] == bnd("sess_strong_1")
    assert verify(deployment, attested.json["token"], binding="sess_strong_1")["valid"] is True
    assert verify(deployment, attested.json["token"], binding="sess_strong_2")["reason"] == "binding_mismatch"

    asserted = assert_key(deployment, attested.json["artifact"], assertion_request(deployment, key_id), binding="sess_strong_2")
    assert asserted.status == 200, asserted
    assert claims_of(asserted.json["token"])["bnd"] == bnd("sess_strong_2")
    assert verify(deployment, asserted.json["token"], binding="sess_strong_2")["valid"] is True
    assert verify(deployment, asserted.json["token"], binding="sess_strong_1")["reason"] == "binding_mismatch"
    unbound = assert_key(deployment, attested.json["artifact"], assertion_request(deployment, key_id))
    assert unbound.status == 200 and "bnd" not in claims_of(unbound.json["token"]), unbound

    for refused in ("", "b" * 1025):
        answer = attest(deployment, new_key(deployment), binding=refused)
        assert answer.status == 400 and answer.error_code == "bad_request", answer
        answer = assert_key(deployment, attested.json["artifact"], assertion_request(deployment, key_id), binding=refused)
        assert answer.status == 400 and answer.error_code == "bad_request", answer


def test_the_binding_is_never_logged_nor_echoed(deployment):
    secret = "oauth-at-7c1e5b0d93f24a8e"
    token = exchange(deployment, binding=secret).json["token"]
    verify(deployment, token, binding=secret + "-other")
    too_long = secret + "z" * 1024
    answer = exchange(deployment, binding=too_long)
    assert answer.status == 400 and secret not in answer.raw.decode(), answer
    assert secret not in deployment.server_log()

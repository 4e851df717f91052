"""Issue 11, the strong tier over real HTTP: the sandbox's simulated iPhones attest keys and sign
assertions; `twobits serve` verifies them (trusting the root the sandbox wrote) and issues `appattest`
tokens that PyJWT verifies with the JWKS. Every refusal carries its reason; bans hold in this tier too."""
import base64
import hashlib
import json

import jwt
import pytest

from conftest import AUDIENCE, ISSUER

APP_ID = "TEAMID1234.com.example.strong"
APP_ATTEST = {"apps": [APP_ID], "environment": "production", "root_ca_file": "appattest-root.pem",
                "receipts": {"root_ca_file": "receipt-root.pem", "enabled": False}}


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": APP_ATTEST})


def b64(data):
    return base64.b64encode(data).decode()


def challenge(deployment):
    answer = deployment.post("/v1/app-attest/challenges", {}, client="main")
    assert answer.status == 201, answer
    assert 250 <= answer.json["expires_in"] <= 300
    return answer.json["challenge"]


def challenge_bytes(value):
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def new_key(deployment, environment="production"):
    answer = deployment.sandbox("POST", "/sandbox/v1/app-attest/keys", {"app_id": APP_ID, "environment": environment})
    assert answer.status == 201, answer
    return answer.json["key_id"]


def attestation_object(deployment, key_id, value, fault=None):
    """What DCAppAttestService.attestKey returns for clientDataHash = SHA-256 of the challenge's bytes."""
    body = {"key_id": key_id, "client_data_hash": b64(hashlib.sha256(challenge_bytes(value)).digest())}
    if fault:
        body["fault"] = fault
    answer = deployment.sandbox("POST", "/sandbox/v1/app-attest/attestations", body)
    assert answer.status == 200, answer
    return answer.json["attestation_object"]


def attest(deployment, key_id, value=None, fault=None, **fields):
    value = value or challenge(deployment)
    body = {"key_id": key_id, "attestation_object": attestation_object(deployment, key_id, value, fault), "challenge": value, **fields}
    return deployment.post("/v1/app-attest/attestations", body, client="main")


def attested(deployment):
    key_id = new_key(deployment)
    answer = attest(deployment, key_id)
    assert answer.status == 201, answer
    return key_id, answer.json["artifact"]


def assertion_request(deployment, key_id, value=None, fault=None):
    value = value or challenge(deployment)
    client_data = json.dumps({"challenge": value, "action": "purchase"}).encode()
    body = {"key_id": key_id, "client_data_hash": b64(hashlib.sha256(client_data).digest())}
    if fault:
        body["fault"] = fault
    signed = deployment.sandbox("POST", "/sandbox/v1/app-attest/assertions", body)
    assert signed.status == 200, signed
    return {"assertion": signed.json["assertion"], "client_data": b64(client_data), "challenge": value}


def assert_key(deployment, artifact, request, **fields):
    return deployment.post("/v1/app-attest/assertions", {"artifact": artifact, **request, **fields}, client="main")


def verify_with_jwks(deployment, token):
    client = jwt.PyJWKClient(deployment.jwks_url(), cache_jwk_set=False, cache_keys=False)
    key = client.get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=["ES256"], audience=AUDIENCE, issuer=ISSUER,
                      options={"require": ["iss", "aud", "sub", "iat", "exp", "jti", "tier"]})


def refused(answer, status, code, reason=None):
    assert answer.status == status, answer
    assert answer.error_code == code, answer
    if reason:
        assert answer.json["error"]["reason"] == reason, answer


# -- the flow -------------------------------------------------------------------------------------


def test_attestation_then_rising_assertions_get_appattest_tokens_the_jwks_verifies(deployment):
    key_id = new_key(deployment)
    answer = attest(deployment, key_id, install_id="install-strong-1")
    assert answer.status == 201, answer
    assert answer.json["tier"] == "appattest" and answer.json["token_type"] == "Bearer" and answer.json["counter"] == 0
    claims = verify_with_jwks(deployment, answer.json["token"])
    assert claims["tier"] == "appattest" and claims["sub"] == "install-strong-1"
    assert claims["exp"] - claims["iat"] == answer.json["expires_in"]
    artifact = answer.json["artifact"]

    for expected in (1, 2, 3):
        step = assert_key(deployment, artifact, assertion_request(deployment, key_id))
        assert step.status == 200, step
        assert step.json["counter"] == expected and step.json["tier"] == "appattest"
        assert verify_with_jwks(deployment, step.json["token"])["sub"].startswith("key_")

    # The key id works as well as the artifact.
    by_id = deployment.post("/v1/app-attest/assertions", {"key_id": key_id, **assertion_request(deployment, key_id)}, client="main")
    assert by_id.status == 200 and by_id.json["counter"] == 4, by_id

    view = deployment.get(f"/v1/admin/app-attest/keys/{artifact}", client="ops")
    assert view.status == 200, view
    assert view.json["key_id"] == key_id and view.json["counter"] == 4 and view.json["app_id"] == APP_ID
    assert view.json["environment"] == "production" and view.json["revoked"] is False and view.json["receipt_bytes"] > 0


def test_a_limited_use_appattest_token_is_consumed_once(deployment):
    key_id, artifact = attested(deployment)
    answer = assert_key(deployment, artifact, assertion_request(deployment, key_id), limited_use=True)
    assert answer.status == 200, answer
    token = answer.json["token"]
    assert verify_with_jwks(deployment, token)["lim"] is True
    first = deployment.verify(token, consume=True)
    second = deployment.verify(token, consume=True)
    assert first.json["valid"] and first.json["already_consumed"] is False and first.json["claims"]["tier"] == "appattest"
    assert second.json["already_consumed"] is True


# -- refusals, each with its reason ---------------------------------------------------------------


@pytest.mark.parametrize("fault, reason", [("bad_chain", "bad_chain"), ("wrong_nonce", "nonce_mismatch"), ("wrong_app_id", "rp_id_mismatch"),
                                           ("wrong_environment", "aaguid_mismatch"), ("wrong_key_id", "credential_id_mismatch"),
                                           ("expired", "bad_chain"),
                                           # The attestation's own receipt: only this key's fresh ATTEST receipt passes.
                                           ("garbage_receipt", "receipt_invalid"), ("empty_receipt", "receipt_invalid"),
                                           ("nested_receipt", "receipt_invalid"), ("foreign_receipt", "receipt_invalid"),
                                           ("stale_receipt", "receipt_invalid"), ("refreshed_receipt", "receipt_invalid"),
                                           ("other_environment_receipt", "receipt_invalid")])
def test_a_wrong_attestation_is_refused_with_its_reason_and_leaves_the_challenge_usable(deployment, fault, reason):
    key_id = new_key(deployment)
    value = challenge(deployment)
    refused(attest(deployment, key_id, value, fault), 401, "attestation_invalid", reason)
    # Verification writes nothing: the same challenge still serves the honest attestation.
    assert attest(deployment, key_id, value).status == 201


def test_a_development_key_is_refused_by_a_production_server(deployment):
    refused(attest(deployment, new_key(deployment, "development")), 401, "attestation_invalid", "aaguid_mismatch")


def test_a_challenge_counts_once_and_only_issued_ones_count(deployment):
    value = challenge(deployment)
    assert attest(deployment, new_key(deployment), value).status == 201
    refused(attest(deployment, new_key(deployment), value), 401, "attestation_invalid", "challenge_unknown_or_used")
    never_issued = base64.urlsafe_b64encode(b"\x07" * 32).rstrip(b"=").decode()
    refused(attest(deployment, new_key(deployment), never_issued), 401, "attestation_invalid", "challenge_unknown_or_used")


def test_a_key_is_attested_once(deployment):
    key_id, _ = attested(deployment)
    refused(attest(deployment, key_id), 409, "key_already_attested")


def test_a_replayed_counter_and_a_reused_assertion_are_refused(deployment):
    key_id, artifact = attested(deployment)
    request = assertion_request(deployment, key_id)
    assert assert_key(deployment, artifact, request).status == 200
    # The same assertion again: its counter is no longer above the stored one.
    refused(assert_key(deployment, artifact, request), 401, "assertion_invalid", "counter_not_increasing")
    # A device replaying its counter over fresh client data.
    refused(assert_key(deployment, artifact, assertion_request(deployment, key_id, fault="replayed_counter")),
            401, "assertion_invalid", "counter_not_increasing")
    tampered = assertion_request(deployment, key_id)
    tampered["client_data"] = b64(json.dumps({"challenge": tampered["challenge"], "action": "refund"}).encode())
    refused(assert_key(deployment, artifact, tampered), 401, "assertion_invalid", "bad_signature")
    refused(assert_key(deployment, artifact, assertion_request(deployment, key_id, fault="bad_signature")), 401, "assertion_invalid", "bad_signature")


def test_an_assertion_by_an_unknown_key_or_without_its_challenge_is_refused(deployment):
    key_id = new_key(deployment)
    refused(deployment.post("/v1/app-attest/assertions", {"key_id": key_id, **assertion_request(deployment, key_id)}, client="main"),
            401, "assertion_invalid", "key_unknown")
    known, artifact = attested(deployment)
    request = assertion_request(deployment, known)
    request["challenge"] = challenge(deployment)   # client_data names another challenge
    refused(assert_key(deployment, artifact, request), 401, "assertion_invalid", "client_data_mismatch")


def test_malformed_requests_are_refused_never_500(deployment):
    key_id = new_key(deployment)
    value = challenge(deployment)
    cases = [
        {"key_id": "short", "attestation_object": b64(b"x"), "challenge": value},
        {"key_id": key_id, "attestation_object": "%%%", "challenge": value},
        {"key_id": key_id, "attestation_object": b64(b"\xa1\x63fmt\x63bad"), "challenge": value},
        {"key_id": key_id, "attestation_object": b64(b"x"), "challenge": "not-a-challenge"},
        {"key_id": key_id, "attestation_object": b64(b"x"), "challenge": value, "surprise": 1},
    ]
    for body in cases:
        answer = deployment.post("/v1/app-attest/attestations", body, client="main")
        assert answer.status in (400, 401), (body, answer)
    # An artifact this server never issued names no key.
    client_data = b64(json.dumps({"challenge": value}).encode())
    refused(deployment.post("/v1/app-attest/assertions", {"artifact": "aa1.nope", "assertion": "AA==", "client_data": client_data, "challenge": value},
                            client="main"), 401, "assertion_invalid", "key_unknown")
    refused(deployment.post("/v1/app-attest/assertions", {"key_id": key_id, "artifact": "aa1.x", "assertion": "AA==", "client_data": "AA==",
                                                          "challenge": value}, client="main"), 400, "bad_request")


def test_the_routes_need_the_tokens_role(deployment):
    assert deployment.post("/v1/app-attest/challenges", {}, client="marketing").status == 403
    assert deployment.post("/v1/app-attest/challenges", {}).status == 401


# -- bans and revocation --------------------------------------------------------------------------


def test_a_banned_device_is_refused_in_the_strong_tier_too(deployment):
    device = deployment.new_device()
    ban = deployment.post("/v1/admin/bans", {"device_token": deployment.mint(device), "reason": "chargeback fraud"}, client="ops")
    assert ban.status == 200, ban
    key_id = new_key(deployment)
    value = challenge(deployment)
    refused(attest(deployment, key_id, value, device_token=deployment.mint(device)), 403, "device_banned")
    # The refusal used nothing up; a device in good standing attests with the same challenge.
    assert attest(deployment, key_id, value, device_token=deployment.mint(deployment.new_device())).status == 201


def test_a_revoked_key_asserts_no_more_and_the_revocation_is_audited(deployment):
    key_id, artifact = attested(deployment)
    assert assert_key(deployment, artifact, assertion_request(deployment, key_id)).status == 200
    revoke = deployment.post(f"/v1/admin/app-attest/keys/{artifact}/revoke", {"reason": "jailbroken device"}, client="ops")
    assert revoke.status == 200, revoke
    assert revoke.json["revoked"] is True and revoke.json["revoked_reason"] == "jailbroken device"
    refused(assert_key(deployment, artifact, assertion_request(deployment, key_id)), 403, "assertion_invalid", "key_revoked")
    events = [e for e in deployment.audit_events() if e["action"] == "app_attest.revoke" and e["subject"] == key_id]
    assert len(events) == 1 and events[0]["client"] == "ops" and events[0]["reason"] == "jailbroken device"
    assert deployment.post(f"/v1/admin/app-attest/keys/{artifact}/revoke", {}, client="ops").status == 400   # reason required
    unknown = base64.urlsafe_b64encode(b"\x01" * 32).rstrip(b"=").decode()
    assert deployment.post(f"/v1/admin/app-attest/keys/{unknown}/revoke", {"reason": "x"}, client="ops").status == 404
    assert deployment.post(f"/v1/admin/app-attest/keys/{artifact}/revoke", {"reason": "x"}, client="main").status == 403


def test_refusals_are_counted_by_reason(deployment):
    attest(deployment, new_key(deployment), fault="wrong_nonce")
    metrics = deployment.get("/metrics").raw.decode()
    assert 'twobits_app_attest_refusals_total{reason="nonce_mismatch"}' in metrics
    assert 'twobits_fallback_tokens_issued_total{tier="appattest",limited_use="false"}' in metrics


# -- configuration --------------------------------------------------------------------------------


def test_without_an_app_attest_section_the_routes_say_so(twobits):
    refused(twobits.post("/v1/app-attest/challenges", {}, client="main"), 409, "not_enabled")


def test_a_required_device_token_is_required(twobits_factory):
    deployment = twobits_factory(extra={"app_attest": {**APP_ATTEST, "require_device_token": True}})
    key_id = new_key(deployment)
    value = challenge(deployment)
    refused(attest(deployment, key_id, value), 400, "device_token_required")
    assert attest(deployment, key_id, value, device_token=deployment.mint(deployment.new_device())).status == 201


@pytest.mark.parametrize("section, field", [
    ({"apps": []}, "app_attest.apps"),
    ({"apps": ["nodot"]}, "app_attest.apps[0]"),
    ({"apps": [APP_ID], "environment": "staging"}, "app_attest.environment"),
    ({"apps": [APP_ID], "root_ca_file": "missing.pem"}, "app_attest.root_ca_file"),
    ({"apps": [APP_ID], "validation_categories": ["app_shop"]}, "app_attest.validation_categories[0]"),
    ({"apps": [APP_ID], "require_device_token": "yes"}, "app_attest.require_device_token"),
    ({"apps": [APP_ID], "colour": "blue"}, "app_attest.colour"),
])
def test_a_wrong_app_attest_section_stops_the_server_naming_the_field(twobits_factory, section, field):
    deployment = twobits_factory(autostart=False, extra={"app_attest": section})
    result = deployment.cli("serve", "--config", str(deployment.config_path), check=False)
    assert result.returncode != 0
    assert field in result.stderr + result.stdout


def test_app_attest_needs_the_tokens_section(twobits_factory):
    deployment = twobits_factory(autostart=False, tokens=False, extra={"app_attest": {"apps": [APP_ID]}})
    result = deployment.cli("serve", "--config", str(deployment.config_path), check=False)
    assert result.returncode != 0 and "tokens" in result.stderr + result.stdout

"""Request proofs over real HTTP: the sandbox's simulated iPhones sign a request (its method, path and body
digest, over a `request_proof` challenge), the main API forwards the proof with what it received to
`POST /v1/app-attest/request-proofs/verify`, and `twobits serve` answers each refusal with its reason and a valid
proof exactly once, also when two requests, or two replicas on PostgreSQL, receive the same proof at once."""
import base64
import hashlib
import json

import pytest

import test_app_attest as aa
import test_app_attest_risk as risk
from test_replicas import APP_ATTEST as REPLICA_APP_ATTEST, at_once, replica_options

PATH = "/v1/payouts?x=1"
BODY = json.dumps({"amount": 100, "currency": "EUR", "to": "acct-42"}, separators=(",", ":")).encode()


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": aa.APP_ATTEST})


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def digest(body):
    return b64url(hashlib.sha256(body).digest())


def proof_challenge(replica):
    answer = replica.post("/v1/app-attest/challenges", {"purpose": "request_proof"}, client="main")
    assert answer.status == 201, answer
    assert 250 <= answer.json["expires_in"] <= 300, answer
    return answer.json["challenge"]


def sign(deployment, key_id, value, method="POST", path=PATH, body=BODY, fault=None):
    """What the app sends with its request: the three TwoBits-Proof-* headers (docs/app-attest.md)."""
    client_data = json.dumps({"challenge": value, "method": method, "path": path, "body_sha256": digest(body)},
                             separators=(",", ":")).encode()
    request = {"key_id": key_id, "client_data_hash": aa.b64(hashlib.sha256(client_data).digest())}
    if fault:
        request["fault"] = fault
    signed = deployment.sandbox("POST", "/sandbox/v1/app-attest/assertions", request)
    assert signed.status == 200, signed
    assertion = base64.b64decode(signed.json["assertion"])
    return {"client_data": b64url(client_data), "assertion": b64url(assertion)}


def verify(replica, artifact, headers, method="POST", path=PATH, body=BODY, **fields):
    """The main API's call: the headers as received, and the method, path and body digest it computed itself."""
    return replica.post("/v1/app-attest/request-proofs/verify",
                        {"artifact": artifact, **headers, "method": method, "path": path, "body_sha256": digest(body), **fields},
                        client="main")


def valid(answer):
    assert answer.status == 200 and answer.json["valid"] is True, answer
    return answer.json


def refused(answer, reason):
    assert answer.status == 200, answer
    assert answer.json == {"valid": False, "reason": reason}, answer


def proof_refusals(deployment, key_id):
    return [e for e in deployment.audit_events() if e["action"] == "app_attest.proof_refused" and e.get("subject") == key_id]


# -- the flow -------------------------------------------------------------------------------------


def test_a_valid_proof_is_accepted_exactly_once_and_mints_nothing(deployment):
    key_id, artifact = aa.attested(deployment)
    headers = sign(deployment, key_id, proof_challenge(deployment))
    verdict = valid(verify(deployment, artifact, headers, install_id="install-proof-1", device_token=deployment.mint(deployment.new_device())))
    assert verdict == {"valid": True, "artifact": artifact, "counter": 1, "install_id": "install-proof-1"}, verdict
    assert "token" not in verdict
    refused(verify(deployment, artifact, headers), "counter_not_increasing")
    # The next request's proof goes on from the counter the first one left.
    assert valid(verify(deployment, artifact, sign(deployment, key_id, proof_challenge(deployment))))["counter"] == 2
    view = deployment.get(f"/v1/admin/app-attest/keys/{artifact}", client="ops")
    assert view.json["counter"] == 2, view


def test_a_body_changed_by_one_byte_a_method_or_a_path_is_refused_and_uses_nothing(deployment):
    key_id, artifact = aa.attested(deployment)
    headers = sign(deployment, key_id, proof_challenge(deployment))
    tampered = bytearray(BODY)
    tampered[BODY.index(b"100")] = ord("9")   # 900 instead of 100, on the way from the app to the main API
    refused(verify(deployment, artifact, headers, body=bytes(tampered)), "payload_mismatch")
    refused(verify(deployment, artifact, headers, body=BODY + b" "), "payload_mismatch")
    refused(verify(deployment, artifact, headers, method="PUT"), "method_mismatch")
    refused(verify(deployment, artifact, headers, path="/v1/payouts?x=2"), "path_mismatch")
    refused(verify(deployment, artifact, headers, path="/v1/account/recovery"), "path_mismatch")
    # Audited for the key (reason and key id, never the body or its digest).
    events = proof_refusals(deployment, key_id)
    assert [e["reason"] for e in events] == ["path_mismatch", "path_mismatch", "method_mismatch", "payload_mismatch", "payload_mismatch"]
    text = json.dumps(events)
    assert digest(BODY) not in text and digest(bytes(tampered)) not in text and "amount" not in text
    # Nothing was used up: the request as signed is served, once.
    valid(verify(deployment, artifact, headers))
    refused(verify(deployment, artifact, headers), "counter_not_increasing")


def test_a_challenge_of_another_purpose_never_serves_a_proof_nor_a_proofs_a_token(deployment):
    key_id, artifact = aa.attested(deployment)
    for purpose in ("attestation", "assertion"):
        other = deployment.post("/v1/app-attest/challenges", {"purpose": purpose}, client="main").json["challenge"]
        refused(verify(deployment, artifact, sign(deployment, key_id, other)), "challenge_unknown_or_used")
        # It still serves its own purpose: the refused proof used nothing.
        assert aa.assert_key(deployment, artifact, aa.assertion_request(deployment, key_id, other)).status == 200
    never_issued = b64url(b"\x05" * 32)
    refused(verify(deployment, artifact, sign(deployment, key_id, never_issued)), "challenge_unknown_or_used")
    value = proof_challenge(deployment)
    aa.refused(aa.assert_key(deployment, artifact, aa.assertion_request(deployment, key_id, value)), 401, "assertion_invalid",
               "challenge_unknown_or_used")
    aa.refused(aa.attest(deployment, aa.new_key(deployment), value), 401, "attestation_invalid", "challenge_unknown_or_used")
    valid(verify(deployment, artifact, sign(deployment, key_id, value)))


def test_forged_unknown_and_revoked_proofs_are_refused_with_their_reason(deployment):
    key_id, artifact = aa.attested(deployment)
    valid(verify(deployment, artifact, sign(deployment, key_id, proof_challenge(deployment))))
    value = proof_challenge(deployment)
    # The device signing again with the counter it just used (a replay over a fresh challenge).
    refused(verify(deployment, artifact, sign(deployment, key_id, value, fault="replayed_counter")), "counter_not_increasing")
    refused(verify(deployment, artifact, sign(deployment, key_id, value, fault="bad_signature")), "bad_signature")
    refused(verify(deployment, artifact, sign(deployment, key_id, value, fault="wrong_app_id")), "rp_id_mismatch")
    # An assertion's client data (the challenge alone) is not a proof's.
    token_shaped = aa.assertion_request(deployment, key_id, value)
    refused(verify(deployment, artifact, {"client_data": b64url(base64.b64decode(token_shaped["client_data"])),
                                          "assertion": b64url(base64.b64decode(token_shaped["assertion"]))}), "client_data_mismatch")
    stranger = aa.new_key(deployment)
    refused(verify(deployment, "aa1." + b64url(base64.b64decode(stranger)), sign(deployment, stranger, value)), "key_unknown")
    refused(verify(deployment, "aa1.not-ours", sign(deployment, key_id, value)), "key_unknown")
    # Forgeries are counted, not audited: only the proofs the key signed left an event.
    assert [e["reason"] for e in proof_refusals(deployment, key_id)] == ["rp_id_mismatch", "counter_not_increasing"]
    assert deployment.post(f"/v1/admin/app-attest/keys/{artifact}/revoke", {"reason": "stolen"}, client="ops").status == 200
    refused(verify(deployment, artifact, sign(deployment, key_id, value)), "key_revoked")


def test_a_banned_device_is_refused_and_the_proof_stays_usable(deployment):
    device = deployment.new_device()
    assert deployment.post("/v1/admin/bans", {"device_token": deployment.mint(device), "reason": "payout fraud"}, client="ops").status == 200
    key_id, artifact = aa.attested(deployment)
    headers = sign(deployment, key_id, proof_challenge(deployment))
    refused(verify(deployment, artifact, headers, device_token=deployment.mint(device)), "device_banned")
    assert [e["reason"] for e in proof_refusals(deployment, key_id)] == ["device_banned"]
    valid(verify(deployment, artifact, headers, device_token=deployment.mint(deployment.new_device())))


def test_apple_unavailable_for_the_device_token_is_a_503_without_a_verdict_and_the_proof_stays_usable(deployment):
    key_id, artifact = aa.attested(deployment)
    headers = sign(deployment, key_id, proof_challenge(deployment))
    token = deployment.mint(deployment.new_device())
    assert deployment.sandbox("POST", "/sandbox/v1/faults", {"kind": "status", "status": 503, "count": 1000}).status == 201
    try:
        answer = verify(deployment, artifact, headers, device_token=token)
        assert answer.status == 503 and answer.error_code == "apple_unavailable", answer
        assert answer.headers.get("Retry-After"), answer
    finally:
        assert deployment.sandbox("DELETE", "/sandbox/v1/faults").status == 200
    valid(verify(deployment, artifact, headers, device_token=token))
    metrics = deployment.get("/metrics").raw.decode()
    assert 'twobits_app_attest_request_proofs_total{result="unanswered",reason="apple_unavailable"}' in metrics


def test_two_verifications_of_one_proof_at_once_give_one_valid_verdict(deployment):
    key_id, artifact = aa.attested(deployment)
    for _ in range(5):
        headers = sign(deployment, key_id, proof_challenge(deployment))
        answers = at_once([lambda: verify(deployment, artifact, headers) for _ in range(2)])
        assert all(a.status == 200 for a in answers), answers
        assert [a.json["valid"] for a in answers].count(True) == 1, answers
        assert {a.json.get("reason") for a in answers if not a.json["valid"]} <= {"challenge_unknown_or_used", "counter_not_increasing"}, answers


def test_malformed_calls_are_400_and_each_verdict_is_counted(deployment):
    key_id, artifact = aa.attested(deployment)
    headers = sign(deployment, key_id, proof_challenge(deployment))
    for fields in ({"body_sha256": hashlib.sha256(BODY).hexdigest()}, {"body_sha256": digest(BODY) + "="}, {"path": "v1/payouts"},
                   {"path": "/v1/pay outs"}, {"method": ""}, {"method": "PO ST"}, {"client_data": "%%%"}, {"surprise": 1}):
        answer = deployment.post("/v1/app-attest/request-proofs/verify",
                                 {"artifact": artifact, **headers, "method": "POST", "path": PATH, "body_sha256": digest(BODY), **fields},
                                 client="main")
        assert answer.status == 400 and answer.error_code == "bad_request", (fields, answer)
    assert deployment.post("/v1/app-attest/request-proofs/verify", {}, client="marketing").status == 403
    answer = deployment.post("/v1/app-attest/challenges", {"purpose": "proof"}, client="main")
    assert answer.status == 400 and "request_proof" in answer.json["error"]["message"], answer
    refused(verify(deployment, artifact, headers, path="/elsewhere"), "path_mismatch")
    valid(verify(deployment, artifact, headers))
    metrics = deployment.get("/metrics").raw.decode()
    assert 'twobits_app_attest_request_proofs_total{result="refused",reason="path_mismatch"}' in metrics
    assert 'twobits_app_attest_request_proofs_total{result="valid",reason="none"}' in metrics
    # And in the console's overview, per hour.
    overview = deployment.get("/v1/admin/overview", client="ops")
    assert overview.status == 200, overview
    hours = overview.json["request_proofs_per_hour"]
    assert sum(h["valid"] for h in hours) >= 1 and sum(h["refused"].get("path_mismatch", 0) for h in hours) >= 1, hours


def test_without_an_app_attest_section_the_verdict_route_says_so(twobits):
    answer = twobits.post("/v1/app-attest/request-proofs/verify", {"artifact": "aa1.x", "client_data": "AA", "assertion": "AA",
                                                                    "method": "POST", "path": "/", "body_sha256": digest(b"")}, client="main")
    assert answer.status == 409 and answer.error_code == "not_enabled", answer


def test_the_risk_policy_holds_for_proofs_and_the_verdict_carries_the_metric(twobits_factory):
    """A farm's key (one phone, four keys, over `max_metric` 3) is refused `risk_metric_exceeded`; an honest phone's
    proof is valid and carries its metric."""
    deployment = twobits_factory(environment=risk.PRODUCTION, extra={"app_attest": risk.app_attest(risk=risk.RISK_REFRESHED_LATER)})
    farm_keys, (honest_id, honest) = risk.farm_and_honest_phone(deployment, 4)
    for key_id, artifact in farm_keys.items():
        refused(verify(deployment, artifact, sign(deployment, key_id, proof_challenge(deployment))), "risk_metric_exceeded")
    verdict = valid(verify(deployment, honest, sign(deployment, honest_id, proof_challenge(deployment))))
    assert verdict["risk_metric"] == 1, verdict


def test_a_required_device_token_is_required_with_a_proof(twobits_factory):
    deployment = twobits_factory(extra={"app_attest": {**aa.APP_ATTEST, "require_device_token": True}})
    key_id = aa.new_key(deployment)
    attested = aa.attest(deployment, key_id, device_token=deployment.mint(deployment.new_device()))
    assert attested.status == 201, attested
    artifact = attested.json["artifact"]
    headers = sign(deployment, key_id, proof_challenge(deployment))
    refused(verify(deployment, artifact, headers), "device_token_required")
    valid(verify(deployment, artifact, headers, device_token=deployment.mint(deployment.new_device())))


# -- two replicas, one PostgreSQL ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair(twobits_module_factory, postgres):
    deployment = twobits_module_factory("proof-pair", autostart=False,
                                        **replica_options(postgres.create_database("proofs"), app_attest=REPLICA_APP_ATTEST))
    deployment.start_sandbox()
    deployment.start_replicas(2)
    return deployment


def test_two_replicas_receiving_the_same_proof_at_once_give_one_valid_verdict(pair):
    first, second = pair.replicas
    key_id = aa.new_key(pair)
    value = aa.challenge(first)
    attested = first.post("/v1/app-attest/attestations", {"key_id": key_id, "challenge": value,
                                                          "attestation_object": aa.attestation_object(pair, key_id, value)}, client="main")
    assert attested.status == 201, attested
    artifact = attested.json["artifact"]
    for round_ in range(6):
        # The challenge from either replica: the ledger they share holds it.
        headers = sign(pair, key_id, proof_challenge(pair.replicas[round_ % 2]))
        answers = at_once([lambda r=r: verify(r, artifact, headers) for r in (first, second)])
        assert all(not isinstance(a, Exception) and a.status == 200 for a in answers), answers
        assert [a.json["valid"] for a in answers].count(True) == 1, answers
        for replica in (first, second):
            refused(verify(replica, artifact, headers), "counter_not_increasing")

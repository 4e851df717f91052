"""The route-table middlewares of docs/examples (Go: go/guard.go, Node: node/guard.mjs, Python: route_guard.py) in front of their demo app, run as their users
would run them, against a live `twobits serve` and the sandbox's simulated iPhones: each route's requirement
enforced over HTTP, a request proof served once, and a fallback-tier caller refused with a clear error."""
import http.client
import json
import os
import shutil
import subprocess
import sys

import pytest

import test_app_attest as aa
from conftest import AUDIENCE, ISSUER, REPO
from test_recipes import go_recipe  # noqa: F401 (a fixture)
from test_request_proof import digest, proof_challenge, sign

EXAMPLES = REPO / "docs" / "examples"
BODY = json.dumps({"amount": 100, "currency": "EUR", "to": "acct-42"}, separators=(",", ":")).encode()
TARGET = "/v1/payouts?x=1"


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": aa.APP_ATTEST})


@pytest.fixture(scope="module", params=["go", "node", "python"])
def guard(request, deployment):
    if request.param == "go":
        # The Go recipe's binary, built as test_recipes.py builds it: `--listen` serves the demo behind its guard.
        command = request.getfixturevalue("go_recipe")
    elif request.param == "node":
        node = shutil.which("node")
        if node is None:
            pytest.fail("node is missing: .ci/install-deps.sh --test installs Debian's nodejs")
        command = [node, str(EXAMPLES / "node" / "guard.mjs")]
    else:
        command = [sys.executable, str(EXAMPLES / "route_guard.py")]
    process = subprocess.Popen([*command, "--listen", "127.0.0.1:0", "--twobits-url", deployment.url,
                                "--jwks-url", deployment.jwks_url(), "--issuer", ISSUER, "--audience", AUDIENCE],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TWOBITS_API_KEY": deployment.api_keys["main"]})
    line = process.stdout.readline()
    assert line.startswith("listening on http://"), (line, process.poll())
    host, port = line.split("http://", 1)[1].strip().rsplit(":", 1)
    yield (host, int(port))
    process.terminate()
    process.wait(timeout=10)


def send(guard, method, target, body=b"", headers=None):
    """One request with the target and the body exactly as given (http.client rewrites neither)."""
    connection = http.client.HTTPConnection(*guard, timeout=30)
    try:
        connection.request(method, target, body=body, headers={"Content-Length": str(len(body)), **(headers or {})})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def proof_headers(deployment, key_id, artifact, method="POST", target=TARGET, body=BODY):
    signed = sign(deployment, key_id, proof_challenge(deployment), method=method, path=target, body=body)
    return {"TwoBits-Proof-Key": artifact, "TwoBits-Proof-Client-Data": signed["client_data"],
            "TwoBits-Proof-Assertion": signed["assertion"]}


def served(answer):
    status, json_body = answer
    assert status == 200, answer
    return json_body


def refused(answer, status, code, reason=None):
    assert answer[0] == status, answer
    assert answer[1]["error"]["code"] == code, answer
    if reason is not None:
        assert answer[1]["error"].get("reason") == reason, answer
    assert "served" not in answer[1]
    return answer[1]["error"]


def devicecheck_token(deployment):
    answer = deployment.exchange(deployment.mint(deployment.new_device()))
    assert answer.status == 201, answer
    return answer.json["token"]


def appattest_token(deployment):
    key_id, artifact = aa.attested(deployment)
    answer = aa.assert_key(deployment, artifact, aa.assertion_request(deployment, key_id))
    assert answer.status == 200 and answer.json["tier"] == "appattest", answer
    return answer.json["token"]


def test_a_valid_proof_is_served_once_and_its_replay_refused(guard, deployment):
    key_id, artifact = aa.attested(deployment)
    headers = proof_headers(deployment, key_id, artifact)
    answer = served(send(guard, "POST", TARGET, BODY, headers))
    assert answer == {"served": "POST " + TARGET, "body_sha256": digest(BODY), "artifact": artifact}, answer
    refused(send(guard, "POST", TARGET, BODY, headers), 403, "request_proof_refused", "counter_not_increasing")


def test_a_body_changed_by_one_byte_a_path_or_a_method_is_refused(guard, deployment):
    key_id, artifact = aa.attested(deployment)
    headers = proof_headers(deployment, key_id, artifact)
    tampered = bytearray(BODY)
    tampered[BODY.index(b"100")] = ord("9")
    # The guard hashes what it received: the app's signed digest (unchanged in the header) does not count.
    refused(send(guard, "POST", TARGET, bytes(tampered), headers), 403, "request_proof_refused", "payload_mismatch")
    refused(send(guard, "POST", "/v1/payouts?x=2", BODY, headers), 403, "request_proof_refused", "path_mismatch")
    # Signed for another method: the guard forwards the method it received.
    put = proof_headers(deployment, key_id, artifact, method="PUT")
    refused(send(guard, "POST", TARGET, BODY, put), 403, "request_proof_refused", "method_mismatch")
    # Nothing was used up: the request as signed is served.
    served(send(guard, "POST", TARGET, BODY, headers))


def test_a_devicecheck_caller_on_a_proof_route_is_refused_with_a_clear_error(guard, deployment):
    error = refused(send(guard, "POST", TARGET, BODY, {"X-Device-Token": "Bearer " + devicecheck_token(deployment)}),
                    403, "request_proof_required")
    assert "devicecheck" in error["message"] and "not accepted" in error["message"], error
    # Even an appattest token does not stand in for a proof.
    refused(send(guard, "POST", TARGET, BODY, {"X-Device-Token": appattest_token(deployment)}), 403, "request_proof_required")
    refused(send(guard, "POST", TARGET, BODY), 403, "request_proof_required")


def test_token_routes_take_the_tiers_their_table_says(guard, deployment):
    fallback, strong = devicecheck_token(deployment), appattest_token(deployment)
    assert served(send(guard, "GET", "/v1/feed", headers={"X-Device-Token": "Bearer " + fallback}))["tier"] == "devicecheck"
    assert served(send(guard, "GET", "/v1/feed", headers={"X-Device-Token": "Bearer " + strong}))["tier"] == "appattest"
    assert served(send(guard, "POST", "/v1/settings", b"{}", {"X-Device-Token": strong}))["tier"] == "appattest"
    refused(send(guard, "POST", "/v1/settings", b"{}", {"X-Device-Token": fallback}), 403, "tier_not_allowed")
    refused(send(guard, "GET", "/v1/feed"), 401, "token_required")
    refused(send(guard, "GET", "/v1/feed", headers={"X-Device-Token": fallback[:-2] + "AA"}), 401, "invalid_token")
    # Deny by default; an open route needs nothing.
    refused(send(guard, "DELETE", "/v1/feed", headers={"X-Device-Token": strong}), 403, "route_not_listed")
    served(send(guard, "GET", "/healthz"))

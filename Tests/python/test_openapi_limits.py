"""The limits docs/openapi.yaml states are the ones the server enforces, read from the document itself.

Each was a mismatch schemathesis found (issue 12, item 11): a device_token past the documented
length, `null` in an optional field, a ban without a reason, a reason counted in grapheme clusters
where the document's maxLength counts code points, and X-Request-Id (documented as never refused).
test_openapi_schemathesis.py checks the whole document; these pin each settled mismatch on its own,
with the answer the document promises (400 naming the field).
"""
import re

import pytest
import yaml

from conftest import REPO

SPEC = yaml.safe_load((REPO / "docs" / "openapi.yaml").read_text())
SCHEMAS = SPEC["components"]["schemas"]
DEVICE_TOKEN_MAX = SCHEMAS["DeviceToken"]["maxLength"]
REASON_MAX = SCHEMAS["BanOrder"]["properties"]["reason"]["maxLength"]

# Every route that takes a device_token, with a client holding its role.
TOKEN_ROUTES = [
    ("/v1/devices/validate", "main", {}),
    ("/v1/installs", "main", {}),
    ("/v1/fallback-tokens", "main", {}),
    ("/v1/promotions/spring/claim", "marketing", {}),
    ("/v1/promotions/spring/eligibility", "marketing", {}),
    ("/v1/admin/bans", "ops", {"reason": "test"}),
    ("/v1/admin/unbans", "ops", {}),
    ("/v1/admin/devices/state", "ops", {}),
]


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory("limits", promotions=[{"id": "spring", "starts": "2020-01"}])


def test_the_document_states_the_limits_checked_here():
    assert DEVICE_TOKEN_MAX == 16384
    assert REASON_MAX == 500
    assert "maxLength" not in SPEC["components"]["parameters"]["XRequestId"]["schema"], \
        "X-Request-Id is never refused; a maxLength would promise a refusal"


@pytest.mark.parametrize("path,client,extra", TOKEN_ROUTES, ids=[route[0] for route in TOKEN_ROUTES])
def test_device_token_past_the_documented_length_is_a_bad_request_naming_it(deployment, path, client, extra):
    too_long = "A" * (DEVICE_TOKEN_MAX + 4)  # well-formed base64 otherwise, so only the length can refuse it
    answer = deployment.post(path, {**extra, "device_token": too_long}, client=client)
    assert answer.status == 400, answer
    assert answer.error_code == "bad_request", answer
    assert "device_token" in answer.json["error"]["message"] and str(DEVICE_TOKEN_MAX) in answer.json["error"]["message"], answer


def test_device_token_at_the_documented_length_reaches_apple(deployment):
    # Within the limit the token goes to Apple, which does not know it: the sandbox's verdict, not a length refusal.
    answer = deployment.post("/v1/admin/devices/state", {"device_token": "A" * DEVICE_TOKEN_MAX}, client="ops")
    assert answer.status == 400 and answer.error_code == "invalid_device_token", answer
    assert deployment.post("/v1/devices/validate", {"device_token": "A" * DEVICE_TOKEN_MAX}, client="main").json == {"valid": False}


@pytest.mark.parametrize("path,client,body,field", [
    ("/v1/fallback-tokens", "main", {"install_id": None}, "install_id"),
    ("/v1/fallback-tokens", "main", {"limited_use": None}, "limited_use"),
    ("/v1/installs", "main", {"install_id": None}, "install_id"),
    ("/v1/admin/bans", "ops", {"install_id": None, "reason": "test"}, "install_id"),
    ("/v1/admin/unbans", "ops", {"reason": None}, "reason"),
], ids=["exchange-install_id", "exchange-limited_use", "installs-install_id", "bans-install_id", "unbans-reason"])
def test_null_in_an_optional_field_is_refused_naming_it(deployment, path, client, body, field):
    token = deployment.mint(deployment.new_device())
    answer = deployment.post(path, {"device_token": token, **body}, client=client)
    assert answer.status == 400 and answer.error_code == "bad_request", answer
    assert answer.json["error"]["message"].startswith(field + " must be"), answer


def test_null_consume_is_refused(deployment):
    answer = deployment.post("/v1/fallback-tokens/verify", {"token": "x.y.z", "consume": None}, client="main")
    assert answer.status == 400 and answer.error_code == "bad_request", answer
    assert answer.json["error"]["message"].startswith("consume must be"), answer


def test_leaving_an_optional_field_out_is_still_fine(deployment):
    token = deployment.mint(deployment.new_device())
    answer = deployment.exchange(token)
    assert answer.status == 201, answer
    assert deployment.post("/v1/admin/unbans", {"install_id": "limits-unban"}, client="ops").status == 202


def test_a_ban_needs_a_non_empty_reason_an_unban_does_not(deployment):
    answer = deployment.post("/v1/admin/bans", {"install_id": "limits-empty-reason", "reason": ""}, client="ops")
    assert answer.status == 400 and answer.error_code == "bad_request" and "reason" in answer.json["error"]["message"], answer
    answer = deployment.post("/v1/admin/unbans", {"install_id": "limits-empty-reason", "reason": ""}, client="ops")
    assert answer.status == 202, answer


def test_reason_length_counts_code_points_like_the_document(deployment):
    # "e" + COMBINING ACUTE ACCENT: one grapheme cluster, two code points. JSON Schema's maxLength counts code points.
    over = "e\u0301" * (REASON_MAX // 2 + 10)
    answer = deployment.post("/v1/admin/bans", {"install_id": "limits-combining", "reason": over}, client="ops")
    assert answer.status == 400 and answer.error_code == "bad_request" and "reason" in answer.json["error"]["message"], answer
    at_limit = "e\u0301" * (REASON_MAX // 2)
    answer = deployment.post("/v1/admin/bans", {"install_id": "limits-combining", "reason": at_limit}, client="ops")
    assert answer.status == 202, answer


@pytest.mark.parametrize("given,echoed", [
    ("a" * 128, True),
    ("a" * 129, False),
    ("has space", False),
])
def test_request_id_is_never_refused(deployment, given, echoed):
    answer = deployment.get("/healthz", headers={"X-Request-Id": given})
    assert answer.status == 200, answer
    returned = answer.headers["X-Request-Id"]
    if echoed:
        assert returned == given
    else:
        assert re.fullmatch(r"[0-9a-f]{24}", returned), returned

"""Schemathesis hooks for test_openapi_schemathesis.py (loaded through SCHEMATHESIS_HOOKS).

Schemathesis makes up device tokens; Apple (here the sandbox) knows none of them, so every
schema-valid request would end in 400 `invalid_device_token` and the success answers would never be
checked against the document. Before each call a `device_token` that the schema accepts is swapped for
a fresh token of a fresh sandbox device, and a valid `Idempotency-Key` is made unique (one key per
logical claim: reusing one for another device is a 422 by design). Values the schema refuses are left
as generated, so the negative cases still reach the server as schemathesis meant them.

Every answer is also appended to TWOBITS_STATUS_LOG as "METHOD /path with-key|without-key STATUS"
(with-key: sent with the client's own key, TWOBITS_API_KEY), so the test can tell what each role got.

Needs TWOBITS_SANDBOX_URL (the sandbox's control API). Standard library only, besides schemathesis.
"""
import itertools
import json
import os
import re
import urllib.request

import schemathesis

SANDBOX = os.environ["TWOBITS_SANDBOX_URL"]
STATUS_LOG = os.environ.get("TWOBITS_STATUS_LOG")

# docs/openapi.yaml, components.schemas.DeviceToken and the Idempotency-Key header.
DEVICE_TOKEN = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
DEVICE_TOKEN_MAX = 16384
IDEMPOTENCY_KEY = re.compile(r"[!-~]{1,255}")

_serial = itertools.count(1)


def _sandbox(path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(SANDBOX + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def fresh_device_token():
    """A token the sandbox accepts, of a device nothing has touched yet (so no test depends on order)."""
    device = _sandbox("/sandbox/v1/devices")["device_id"]
    return _sandbox(f"/sandbox/v1/devices/{device}/tokens", {})["device_token"]


def schema_valid_token(value):
    return isinstance(value, str) and 4 <= len(value) <= DEVICE_TOKEN_MAX and DEVICE_TOKEN.fullmatch(value) is not None


@schemathesis.hook
def before_call(context, case, kwargs):
    if isinstance(case.body, dict) and schema_valid_token(case.body.get("device_token")):
        case.body = {**case.body, "device_token": fresh_device_token()}
    headers = case.headers or {}
    for name in list(headers):
        value = headers[name]
        if name.lower() == "idempotency-key" and isinstance(value, str) and IDEMPOTENCY_KEY.fullmatch(value):
            headers[name] = f"{next(_serial)}-{value}"[:255]


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but three the document states in words, as no schema can: a `binding` of at
    most 1,024 characters but over 1,024 bytes of UTF-8 answers 400 (JSON Schema counts characters); `consume: true` on
    a token that verifies but is not limited-use answers 400 (schemathesis replays tokens it saw in
    the exchange's answers, and those are not limited-use unless asked), and an admin order whose
    `confirm` is not the last 6 characters of the device's digest prefix answers 400 `confirmation_mismatch`."""
    if failure.code == "ST202" and response.status_code == 400 and isinstance(case.body, dict) \
            and isinstance(case.body.get("binding"), str) and len(case.body["binding"].encode("utf-8", "surrogatepass")) > 1024:
        try:
            return not response.json()["error"].get("message", "").startswith("binding must be")
        except (ValueError, KeyError, TypeError, AttributeError):
            return True
    if failure.code == "ST202" and case.operation.path in ("/v1/admin/bans", "/v1/admin/unbans") and response.status_code == 400:
        # `confirm` must be the last 6 characters of the token's digest prefix: no schema can say that.
        try:
            return response.json()["error"].get("code") != "confirmation_mismatch"
        except (ValueError, KeyError, TypeError, AttributeError):
            return True
    if failure.code == "ST202" and case.operation.path == "/v1/fallback-tokens/verify" and response.status_code == 400:
        try:
            error = response.json()["error"]
        except (ValueError, KeyError, TypeError):
            return True
        return not (error.get("code") == "bad_request" and error.get("message", "").startswith("consume is only for limited-use tokens"))
    return True


@schemathesis.hook
def after_call(context, case, response):
    if STATUS_LOG:
        # schemathesis also sends no key and made-up keys (they must answer 401); only the client's own counts.
        own = response.request.headers.get("Authorization") == f"Bearer {os.environ.get('TWOBITS_API_KEY')}"
        key = "with-key" if own else "without-key"
        with open(STATUS_LOG, "a") as log:
            log.write(f"{case.operation.label} {key} {response.status_code}\n")

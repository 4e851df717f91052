"""`twobits admin app-attest key ARTIFACT` and `twobits admin app-attest keys --min-risk-metric N` against a
real server whose refresher renewed each key's receipt at the sandbox: a device farm's keys (metric 3) and
an honest phone's key (metric 1)."""
import json

import pytest

from test_app_attest_risk import PRODUCTION, app_attest, farm_and_honest_phone, key_view


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(environment=PRODUCTION, extra={"app_attest": app_attest()})


@pytest.fixture(scope="module")
def keys(deployment):
    farm_keys, (_, honest) = farm_and_honest_phone(deployment, 3)
    return {"honest": honest, "farm": farm_keys}


def admin(deployment, *args, check=True):
    return deployment.cli("admin", *args, "--server", deployment.url, check=check,
                          env={"TWOBITS_ADMIN_KEY": deployment.api_keys["ops"]})


def test_key_prints_the_metric_its_time_the_receipt_and_the_history(deployment, keys):
    view = key_view(deployment, keys["honest"])
    out = admin(deployment, "app-attest", "key", keys["honest"]).stdout
    assert f"artifact:           {keys['honest']}" in out, out
    assert "risk metric:        1\n" in out, out
    for name in ("risk_metric_at", "receipt_not_before", "receipt_expires_at", "key_id"):
        assert view[name] and view[name] in out, (name, out)
    assert "risk history (newest first):\n  " + view["risk_history"][0]["at"] + "  1" in out, out
    # A key id in standard base64 (as the API prints it) finds the same key.
    key_id, artifact = next(iter(keys["farm"].items()))
    by_id = admin(deployment, "app-attest", "key", key_id).stdout
    assert f"artifact:           {artifact}" in by_id and "risk metric:        3\n" in by_id, by_id
    as_json = json.loads(admin(deployment, "app-attest", "key", keys["honest"], "--json").stdout)
    assert as_json["risk_metric"] == 1 and as_json["receipt_expires_at"] == view["receipt_expires_at"]


def test_an_unknown_key_is_an_error_and_a_malformed_one_a_usage_error(deployment, keys):
    missing = admin(deployment, "app-attest", "key", "aa1." + "A" * 43, check=False)
    assert missing.returncode == 1 and "error 404 not_found" in missing.stdout, missing
    # Only base64 and artifact characters reach the path; `/` becomes `_`, so no other route is reachable.
    for hostile in ("x?min_risk_metric=0", "x#y", "x%2F..%2Fbans"):
        malformed = admin(deployment, "app-attest", "key", hostile, check=False)
        assert malformed.returncode == 2 and "is not an artifact or a key id" in malformed.stderr, malformed
    dotted = admin(deployment, "app-attest", "key", "../bans/pending", check=False)
    assert dotted.returncode == 1 and "error 404 not_found" in dotted.stdout, dotted
    assert admin(deployment, "app-attest", check=False).returncode == 2
    assert admin(deployment, "app-attest", "keys", "extra", check=False).returncode == 2


def test_keys_lists_by_minimum_metric_and_pages(deployment, keys):
    first = admin(deployment, "app-attest", "keys", "--min-risk-metric", "3", "--limit", "2").stdout
    lines = first.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("more: --after "), first
    after = lines[-1].split()[-1]
    second = admin(deployment, "app-attest", "keys", "--min-risk-metric", "3", "--limit", "2", "--after", after).stdout
    listed = [line.split()[0] for line in lines[:2] + second.splitlines() if not line.startswith("more:")]
    assert sorted(listed) == sorted(keys["farm"].values()), (first, second)
    assert all("risk 3 at " in line for line in lines[:2]), first
    everyone = admin(deployment, "app-attest", "keys", "--min-risk-metric", "1").stdout
    assert keys["honest"] in everyone and len(everyone.splitlines()) == 4, everyone
    assert "no keys with a risk metric that high" in admin(deployment, "app-attest", "keys", "--min-risk-metric", "4").stdout
    refused = admin(deployment, "app-attest", "keys", "--min-risk-metric", "-1", check=False)
    assert refused.returncode == 1 and "error 400 bad_request" in refused.stdout, refused


def test_revoke_revokes_the_key_and_needs_a_reason(deployment, keys):
    # Last in this file: the other tests read the farm's keys unrevoked.
    key_id, artifact = next(iter(keys["farm"].items()))
    no_reason = admin(deployment, "app-attest", "revoke", artifact, check=False)
    assert no_reason.returncode == 2 and "needs --reason" in no_reason.stderr, no_reason
    assert key_view(deployment, artifact)["revoked"] is False
    hostile = admin(deployment, "app-attest", "revoke", "x?y", "--reason", "farm", check=False)
    assert hostile.returncode == 2 and "is not an artifact or a key id" in hostile.stderr, hostile
    missing = admin(deployment, "app-attest", "revoke", "aa1." + "A" * 43, "--reason", "farm", check=False)
    assert missing.returncode == 1 and "error 404 not_found" in missing.stdout, missing

    out = admin(deployment, "app-attest", "revoke", artifact, "--reason", "device farm, ticket 7").stdout
    assert f"artifact:           {artifact}" in out and "revoked:            yes" in out, out
    assert "device farm, ticket 7" in out, out
    view = key_view(deployment, artifact)
    assert view["revoked"] is True and view["revoked_reason"] == "device farm, ticket 7", view

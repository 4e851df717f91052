"""Issue 35, part 2: the App Attest adoption signal. The fallback exchange takes an optional
`app_attest_status` (why the app used the DeviceCheck tier); issued tokens are counted by it on
`/metrics` (`twobits_app_attest_fallback_reasons_total{reason}`) and per hour in the overview, beside the
strong-tier tokens and the strong share."""
import re

import pytest

from test_app_attest import APP_ATTEST, attested

REASONS = ["unsupported", "not_enrolled", "throttled", "attest_failed", "assert_failed", "network"]


@pytest.fixture(params=["sqlite", "postgres"])
def deployment(request, twobits_factory):
    if request.param == "postgres":
        database = request.getfixturevalue("postgres").create_database("adoption")
        return twobits_factory(extra={"app_attest": APP_ATTEST, "database": database})
    return twobits_factory(extra={"app_attest": APP_ATTEST})


def exchange(deployment, **fields):
    return deployment.exchange(deployment.mint(deployment.new_device()), **fields)


def reasons_on_metrics(deployment):
    text = deployment.get("/metrics").raw.decode()
    return {m.group(1): int(float(m.group(2)))
            for m in re.finditer(r'^twobits_app_attest_fallback_reasons_total\{reason="([^"]*)"\} (\S+)$', text, re.M)}


def adoption(deployment):
    """The overview's adoption hours summed (a test may straddle an hour)."""
    answer = deployment.get("/v1/admin/overview", client="ops")
    assert answer.status == 200, answer
    total = {"strong_tier": 0, "fallback": 0, "fallback_unreported": 0, "fallback_by_reason": {}}
    for hour in answer.json["app_attest_adoption_per_hour"]:
        for field in ("strong_tier", "fallback", "fallback_unreported"):
            total[field] += hour[field]
        for reason, count in hour["fallback_by_reason"].items():
            total["fallback_by_reason"][reason] = total["fallback_by_reason"].get(reason, 0) + count
        if hour["strong_tier"] + hour["fallback"] > 0:
            assert hour["strong_share"] == pytest.approx(hour["strong_tier"] / (hour["strong_tier"] + hour["fallback"])), hour
    return total, answer.json["app_attest_adoption_per_hour"]


def test_fallback_reasons_are_counted_with_the_strong_tier_and_its_share(deployment):
    for reason in ["unsupported", "unsupported", "network", *REASONS]:
        answer = exchange(deployment, app_attest_status=reason)
        assert answer.status == 201 and answer.json["tier"] == "devicecheck", (reason, answer)
    assert exchange(deployment).status == 201  # no reason given
    attested(deployment)
    attested(deployment)

    counted = reasons_on_metrics(deployment)
    assert counted == {"unsupported": 3, "not_enrolled": 1, "throttled": 1, "attest_failed": 1, "assert_failed": 1, "network": 2}, counted

    total, hours = adoption(deployment)
    assert total == {"strong_tier": 2, "fallback": 10, "fallback_unreported": 1,
                     "fallback_by_reason": {"unsupported": 3, "not_enrolled": 1, "throttled": 1, "attest_failed": 1,
                                            "assert_failed": 1, "network": 2}}, total
    if len(hours) == 1:
        assert hours[0]["strong_share"] == pytest.approx(2 / 12), hours


def test_an_unknown_reason_is_refused_and_counts_nothing(deployment):
    for wrong in ["UNSUPPORTED", "unsupported ", "", "other", "jailbroken", 1, None, ["network"]]:
        answer = exchange(deployment, app_attest_status=wrong)
        assert answer.status == 400 and answer.error_code == "bad_request", (wrong, answer)
    assert reasons_on_metrics(deployment) == {}
    total, _ = adoption(deployment)
    assert total["fallback"] == 0 and total["fallback_by_reason"] == {}, total


def test_a_refused_exchange_counts_no_reason(deployment):
    token = deployment.mint(deployment.new_device())
    assert deployment.exchange(token, app_attest_status="unsupported").status == 201
    # The same device token again: 409 device_token_reused, no token, so no reason counted.
    again = deployment.exchange(token, app_attest_status="unsupported")
    assert again.status == 409, again
    assert reasons_on_metrics(deployment) == {"unsupported": 1}
    total, _ = adoption(deployment)
    assert total["fallback_by_reason"] == {"unsupported": 1}, total

"""Issue 35, Apple's risk metric end to end: `twobits serve` refreshes each attested key's receipt at the
sandbox's `POST /v1/attestationData` (as strict as Apple's), verifies the new receipt under the root it is
told to trust, keeps the metric, and `app_attest.risk` refuses a device farm (one phone, many keys) while an
honest phone's tokens carry `risk: 1`. Three replicas on one PostgreSQL renew each key once; a 429 storm is
backed off, not hammered. With the sandbox's receipt interval shortened to seconds
(`PUT /sandbox/v1/app-attest/receipt-interval`) and the refresher looking for due keys every 0.2 s
(`app_attest.receipts.idle_poll_seconds`), a key is renewed again once its Not Before passes, a 304 keeps the
old receipt and holds the key back an hour, and a 404 stops the key for good."""
import time

import pytest

import test_app_attest as aa
from test_replicas import replica_options

RISK = {"max_metric": 3, "action": "refuse"}
# The refresher's path alone: the attestation does not renew its receipt at once.
RISK_REFRESHED_LATER = {**RISK, "check_at_attestation": False}
# The keys are production keys (aa.APP_ATTEST): the sandbox, like Apple's production data host, answers 400
# Incorrect Environment to any other receipt, so it runs in production too.
PRODUCTION = "production"


def app_attest(**fields):
    return {**aa.APP_ATTEST, "receipts": {"root_ca_file": "receipt-root.pem"}, **fields}


def farm_key(deployment, device_id):
    answer = deployment.sandbox("POST", "/sandbox/v1/app-attest/keys",
                                {"app_id": aa.APP_ID, "environment": "production", "device_id": device_id})
    assert answer.status == 201, answer
    return answer.json["key_id"]


def attested(deployment, key_id, replica=None):
    """Attests `key_id` (a sandbox key) through `replica` (default: the deployment's server)."""
    replica = replica or deployment
    value = aa.challenge(replica)
    body = {"key_id": key_id, "attestation_object": aa.attestation_object(deployment, key_id, value), "challenge": value}
    answer = replica.post("/v1/app-attest/attestations", body, client="main")
    assert answer.status == 201, answer
    return answer.json["artifact"]


def key_view(deployment, artifact):
    answer = deployment.get(f"/v1/admin/app-attest/keys/{artifact}", client="ops")
    assert answer.status == 200, answer
    return answer.json


def wait_for_metrics(deployment, artifacts, seconds=60):
    """Polls the admin API until every key has a metric (the refresher looks for due keys every 10 s)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        views = {a: key_view(deployment, a) for a in artifacts}
        if all(v.get("risk_metric") is not None for v in views.values()):
            return {a: v["risk_metric"] for a, v in views.items()}
        time.sleep(0.5)
    pytest.fail(f"no metric after {seconds} s: {views}")


def farm_and_honest_phone(deployment, farm_size):
    """`farm_size` keys attested on one simulated phone and one key on another, each renewed once by the
    refresher: returns (the farm's {key id: artifact}, the honest phone's (key id, artifact))."""
    farm = deployment.new_device()
    farm_keys = {}
    for _ in range(farm_size):
        key_id = farm_key(deployment, farm)
        farm_keys[key_id] = attested(deployment, key_id)
    honest_id = farm_key(deployment, deployment.new_device())
    honest = attested(deployment, honest_id)
    metrics = wait_for_metrics(deployment, [honest, *farm_keys.values()])
    assert metrics[honest] == 1 and all(metrics[a] == farm_size for a in farm_keys.values()), metrics
    return farm_keys, (honest_id, honest)


def attestation_data_calls(deployment):
    return deployment.sandbox("GET", "/sandbox/v1/counters").json["calls"].get("attestation_data", 0)


def sandbox_statuses(deployment):
    """The sandbox's answers by status (only the refresher calls Apple in these tests)."""
    return deployment.sandbox("GET", "/sandbox/v1/counters").json["statuses"]


# The refresher looks for due keys every 0.2 s instead of 10 s, so a receipt due in seconds is renewed in seconds.
QUICK_RECEIPTS = {"root_ca_file": "receipt-root.pem", "max_refreshes_per_second": 5, "idle_poll_seconds": 0.2}


def quick_renewals(twobits_factory, interval_seconds):
    """A deployment whose sandbox makes receipts due `interval_seconds` after their creation (Apple: 24 h)."""
    deployment = twobits_factory(environment=PRODUCTION, extra={"app_attest": app_attest(receipts=QUICK_RECEIPTS)})
    answer = deployment.sandbox("PUT", "/sandbox/v1/app-attest/receipt-interval", {"seconds": interval_seconds})
    assert answer.status == 200 and answer.json == {"seconds": interval_seconds}, answer
    return deployment


def set_app_attest_clock(deployment, offset_seconds):
    answer = deployment.sandbox("PUT", "/sandbox/v1/app-attest/clock", {"offset_seconds": offset_seconds})
    assert answer.status == 200, answer


def poll(what, probe, seconds=15):
    """Calls `probe` every 0.1 s until it returns something true, and returns that."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not after {seconds} s")
        time.sleep(0.1)


def views_with_renewals(deployment, artifacts, count):
    """The keys' admin views once each has at least `count` renewals in its `risk_history`."""
    def ready():
        views = {a: key_view(deployment, a) for a in artifacts}
        return views if all(len(v["risk_history"]) >= count for v in views.values()) else None
    return poll(f"{count} renewals of each key", ready)


def stopped_views(deployment, artifacts):
    """The keys' admin views once each is stopped (`receipt_stopped_at`)."""
    def ready():
        views = {a: key_view(deployment, a) for a in artifacts}
        return views if all(v.get("receipt_stopped_at") for v in views.values()) else None
    return poll("each key stopped", ready)


def risk_claim(deployment, answer):
    return aa.verify_with_jwks(deployment, answer.json["token"]).get("risk")


def test_a_device_farm_crosses_max_metric_and_is_refused_while_an_honest_phone_is_not(twobits_factory):
    deployment = twobits_factory(environment=PRODUCTION, extra={"app_attest": app_attest(risk=RISK_REFRESHED_LATER)})
    farm = deployment.new_device()
    farm_artifacts = {}
    for _ in range(4):
        key_id = farm_key(deployment, farm)
        farm_artifacts[key_id] = attested(deployment, key_id)
    honest_key = farm_key(deployment, deployment.new_device())
    honest = attested(deployment, honest_key)
    # Before a refresh the metric is unknown: the token has no `risk`, and nothing is refused.
    first = aa.assert_key(deployment, honest, aa.assertion_request(deployment, honest_key))
    assert first.status == 200 and risk_claim(deployment, first) is None, first

    metrics = wait_for_metrics(deployment, [honest, *farm_artifacts.values()])
    assert metrics[honest] == 1
    assert all(metrics[a] == 4 for a in farm_artifacts.values()), metrics
    view = key_view(deployment, honest)
    assert view["receipt_not_before"] and view["receipt_expires_at"] and len(view["risk_history"]) == 1, view
    # Each key was renewed once: its next renewal waits for the new receipt's Not Before (a day).
    assert attestation_data_calls(deployment) == 5
    # Counted with the other Apple calls (issue 35): each attempt, and its latency.
    metrics = deployment.get("/metrics", client="ops").raw.decode()
    assert 'twobits_apple_calls_total{endpoint="attestation_data",outcome="ok"} 5' in metrics, metrics
    assert 'twobits_apple_call_seconds_count{endpoint="attestation_data"} 5' in metrics, metrics

    for key_id, artifact in farm_artifacts.items():
        answer = aa.assert_key(deployment, artifact, aa.assertion_request(deployment, key_id))
        assert answer.status == 403 and answer.error_code == "assertion_invalid", answer
        assert answer.json["error"]["reason"] == "risk_metric_exceeded", answer
    answer = aa.assert_key(deployment, honest, aa.assertion_request(deployment, honest_key))
    assert answer.status == 200 and risk_claim(deployment, answer) == 1, answer
    listed = deployment.get("/v1/admin/app-attest/keys?min_risk_metric=4", client="ops")
    assert listed.status == 200 and len(listed.json["keys"]) == 4, listed


def test_a_farm_attesting_a_fresh_key_per_session_meets_the_policy_at_attestation(twobits_factory):
    """With `refuse`, an attestation renews its ATTEST receipt at once: Apple's metric counts the device's other
    keys, so the key that takes the device over `max_metric` is refused before any token (limited-use too), its
    challenge left usable; a phone with one key is attested with its metric in its first token."""
    deployment = twobits_factory(environment=PRODUCTION, extra={"app_attest": app_attest(risk=RISK)})
    farm = deployment.new_device()
    for _ in range(3):
        attested(deployment, farm_key(deployment, farm))
    over = farm_key(deployment, farm)
    for limited_use in (False, True):
        value = aa.challenge(deployment)
        body = {"key_id": over, "attestation_object": aa.attestation_object(deployment, over, value), "challenge": value,
                "limited_use": limited_use}
        answer = deployment.post("/v1/app-attest/attestations", body, client="main")
        assert answer.status == 403 and answer.error_code == "attestation_invalid", answer
        assert answer.json["error"]["reason"] == "risk_metric_exceeded", answer
    honest_key = farm_key(deployment, deployment.new_device())
    value = aa.challenge(deployment)
    answer = deployment.post("/v1/app-attest/attestations", {"key_id": honest_key, "challenge": value,
                                                               "attestation_object": aa.attestation_object(deployment, honest_key, value)}, client="main")
    assert answer.status == 201 and risk_claim(deployment, answer) == 1, answer
    view = key_view(deployment, answer.json["artifact"])
    assert view["risk_metric"] == 1 and view["receipt_not_before"], view
    # One renewal per attestation (three farm keys, two refusals, the phone); none by the refresher yet.
    assert attestation_data_calls(deployment) == 6
    listed = deployment.get("/v1/admin/app-attest/keys?min_risk_metric=3", client="ops")
    assert listed.status == 200 and len(listed.json["keys"]) == 1, listed


@pytest.mark.parametrize("receipts, says", [
    # The App Attestation root given for receipts by mistake: it signs attestations, never receipts.
    ({"root_ca_file": "given-by-mistake.pem"}, "App Attestation root"),
    # The sandbox's attestation root with Apple's receipt root: every attestation's receipt would fail.
    ({}, "is required when app_attest.root_ca_file"),
])
def test_a_receipt_root_that_cannot_verify_these_receipts_stops_the_server_at_start(twobits_factory, receipts, says):
    deployment = twobits_factory(autostart=False, environment=PRODUCTION, extra={"app_attest": {**aa.APP_ATTEST, "receipts": receipts}})
    deployment.start_sandbox()
    (deployment.dir / "given-by-mistake.pem").write_bytes((deployment.dir / "appattest-root.pem").read_bytes())
    result = deployment.cli("serve", "--config", str(deployment.config_path), check=False)
    assert result.returncode != 0
    assert "app_attest.receipts.root_ca_file" in result.stderr + result.stdout and says in result.stderr + result.stdout, result


def test_a_429_storm_is_backed_off_not_hammered(twobits_factory):
    """Apple throttles the team, not a key: one 429 pauses every renewal (at least 15 s at first), so a storm
    sees one call, not one per key and per pass."""
    deployment = twobits_factory(environment=PRODUCTION, extra={"app_attest": app_attest(receipts=QUICK_RECEIPTS)})
    assert deployment.sandbox("POST", "/sandbox/v1/faults",
                              {"kind": "status", "status": 429, "count": 1000, "endpoint": "attestation_data"}).status == 201
    artifacts = [attested(deployment, aa.new_key(deployment)) for _ in range(3)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and attestation_data_calls(deployment) == 0:
        time.sleep(0.2)
    time.sleep(8)
    assert attestation_data_calls(deployment) == 1
    metrics = deployment.get("/metrics", client="ops").raw.decode()
    assert 'twobits_app_attest_receipt_refreshes_total{outcome="throttled"} 1' in metrics, metrics
    assert 'twobits_apple_calls_total{endpoint="attestation_data",outcome="throttled"} 1' in metrics, metrics
    assert all(key_view(deployment, a).get("risk_metric") is None for a in artifacts)


def test_three_replicas_renew_each_key_once(twobits_module_factory, postgres):
    deployment = twobits_module_factory("risk-trio", autostart=False, environment=PRODUCTION,
                                        **replica_options(postgres.create_database("risktrio"), app_attest=app_attest(receipts=QUICK_RECEIPTS)))
    deployment.start_sandbox()
    replicas = deployment.start_replicas(3)
    keys = [aa.new_key(deployment) for _ in range(9)]
    # Attested through the three replicas in turn: each replica's refresher sees every key as due.
    artifacts = [attested(deployment, k, replicas[i % 3]) for i, k in enumerate(keys)]
    metrics = wait_for_metrics(deployment, artifacts)
    assert all(m == 1 for m in metrics.values()), metrics
    time.sleep(2)
    assert attestation_data_calls(deployment) == len(keys)


def test_a_key_is_renewed_again_once_its_not_before_passes_and_not_sooner(twobits_factory):
    """ATTEST -> RECEIPT -> RECEIPT: with receipts due 3 s after their creation, each key's second renewal
    comes once the first receipt's Not Before has passed, never before it (the sandbox would answer 304)."""
    deployment = quick_renewals(twobits_factory, 3)
    artifacts = [attested(deployment, aa.new_key(deployment)) for _ in range(2)]
    views = views_with_renewals(deployment, artifacts, 2)
    # Read at once: a third renewal is 3 s away.
    statuses = sandbox_statuses(deployment)
    assert attestation_data_calls(deployment) == 4 and "304" not in statuses, statuses
    for view in views.values():
        history = view["risk_history"]
        assert [sample["metric"] for sample in history] == [1, 1], view
        # The newer receipt holds the key back until its own Not Before, after the second renewal.
        assert view["receipt_not_before"] > history[0]["at"] and view.get("receipt_stopped_at") is None, view


def test_a_304_keeps_the_old_receipt_and_the_key_waits(twobits_factory):
    """The sandbox's App Attest clock runs two minutes behind (less than the 5 minutes of freshness the
    refresher allows Apple's new receipts): the first renewal's receipt, due 2 s after its creation, is due at
    once for the service but not yet for Apple, which answers 304. The receipt and its metric stay, and the key
    waits an hour (`notYetDelay`): one 304 a key, however often the refresher looks."""
    deployment = quick_renewals(twobits_factory, 2)
    # Before the keys exist, so the 304 follows the first renewal whatever the machine's speed.
    set_app_attest_clock(deployment, -120)
    artifacts = [attested(deployment, aa.new_key(deployment)) for _ in range(2)]
    renewed = views_with_renewals(deployment, artifacts, 1)
    poll("a 304 for each key", lambda: sandbox_statuses(deployment).get("304", 0) >= len(artifacts))
    time.sleep(1)  # five looks of the refresher: a key not held back would be asked again
    statuses = sandbox_statuses(deployment)
    assert statuses.get("304") == len(artifacts) and attestation_data_calls(deployment) == 2 * len(artifacts), statuses
    for artifact in artifacts:
        view = key_view(deployment, artifact)
        assert view["risk_metric"] == 1 and len(view["risk_history"]) == 1, view
        assert view["receipt_not_before"] == renewed[artifact]["receipt_not_before"], (view, renewed[artifact])
        assert view.get("receipt_stopped_at") is None, view
    metrics = deployment.get("/metrics", client="ops").raw.decode()
    assert f'twobits_app_attest_receipt_refreshes_total{{outcome="not_yet"}} {len(artifacts)}' in metrics, metrics


def test_a_404_after_thirty_quiet_days_stops_the_key_for_good(twobits_factory):
    """After a first renewal the sandbox's App Attest clock jumps 31 days: Apple has no data for the key any
    more and answers 404; the key is stopped (`receipt_stopped_at`), keeps its last metric, and is not asked
    again."""
    deployment = quick_renewals(twobits_factory, 2)
    artifacts = [attested(deployment, aa.new_key(deployment)) for _ in range(2)]
    views_with_renewals(deployment, artifacts, 1)
    set_app_attest_clock(deployment, 31 * 86_400)
    stopped = stopped_views(deployment, artifacts)
    time.sleep(1)  # five looks of the refresher: a stopped key must not be asked again
    # Every call was a renewal (in its key's history) or the one 404 of each key: a second renewal that slipped
    # in before the clock moved is counted too, so the test does not depend on how soon that was.
    renewals = sum(len(v["risk_history"]) for v in stopped.values())
    statuses = sandbox_statuses(deployment)
    assert statuses.get("404") == len(artifacts) and attestation_data_calls(deployment) == renewals + len(artifacts), statuses
    for artifact, view in stopped.items():
        assert view["risk_metric"] == 1 and key_view(deployment, artifact) == view, view

"""Issue 3: with Apple failing (503s, timeouts) a claim answers 503 with Retry-After and writes
nothing half-way; after recovery the same request succeeds. Issue 4: the same for token exchanges."""
import time

import pytest

from conftest import current_month

PROMOTION = "launch"


@pytest.fixture
def deployment(twobits_factory):
    # A short Apple deadline keeps the failing calls (and their retries) quick.
    return twobits_factory(layout={"bit0": "promotion", "bit1": "ban"},
                           promotions=[{"id": PROMOTION, "starts": current_month()}],
                           extra={"apple": {"timeout_ms": 1000}, "server": {"request_deadline_ms": 5000}})


def untouched(state):
    return state["bit0"] is False and state["bit1"] is False and state["last_update_time"] is None and state["updates"] == 0


def claim(deployment, token, key=None):
    headers = {"Idempotency-Key": key} if key else {}
    return deployment.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": token}, client="marketing", headers=headers)


def assert_unavailable(answer):
    assert answer.status == 503, answer
    assert answer.error_code == "apple_unavailable", answer
    retry_after = answer.headers.get("Retry-After")
    assert retry_after is not None and retry_after.isdigit() and int(retry_after) >= 1, answer.headers


@pytest.mark.parametrize("idempotency_key", [None, "retry-me-1"])
def test_a_claim_during_apple_503s_answers_503_and_succeeds_after_recovery(deployment, idempotency_key):
    device_id = deployment.new_device()
    token = deployment.mint(device_id)
    fault = deployment.sandbox("POST", "/sandbox/v1/faults", {"kind": "status", "status": 503, "count": 1000})
    assert fault.status == 201, fault

    answer = claim(deployment, token, idempotency_key)
    assert_unavailable(answer)
    assert untouched(deployment.device(device_id))
    # Still failing on a second try; still nothing written.
    assert_unavailable(claim(deployment, token, idempotency_key))
    assert untouched(deployment.device(device_id))

    assert deployment.sandbox("DELETE", "/sandbox/v1/faults").status == 200
    recovered = claim(deployment, token, idempotency_key)
    assert recovered.status == 200, recovered
    assert recovered.json == {"promotion": PROMOTION, "claimed": True, "claimed_month": current_month()}
    state = deployment.device(device_id)
    assert state["bit0"] is True and state["bit1"] is False and state["updates"] == 1
    if idempotency_key:
        # The 503s were not final: the key stayed open, and now replays the success.
        replay = claim(deployment, token, idempotency_key)
        assert replay.status == 200 and replay.headers.get("Idempotent-Replayed") == "true", replay


def test_a_failing_write_after_a_good_read_writes_nothing_half_way(deployment):
    device_id = deployment.new_device()
    token = deployment.mint(device_id)
    fault = deployment.sandbox("POST", "/sandbox/v1/faults",
                               {"kind": "status", "status": 503, "count": 1000, "endpoint": "update_two_bits"})
    assert fault.status == 201, fault

    assert_unavailable(claim(deployment, token, "half-way-1"))
    assert untouched(deployment.device(device_id))
    # The failed attempt is in the audit trail, marked failed.
    failed = [e for e in deployment.audit_events() if e["action"] == "promotion.claim"]
    assert failed and all(e["result"] == "failed" for e in failed), failed

    deployment.sandbox("DELETE", "/sandbox/v1/faults")
    answer = claim(deployment, token, "half-way-1")
    assert answer.status == 200 and answer.json["claimed"] is True, answer
    assert deployment.device(device_id)["bit0"] is True


def test_a_claim_during_apple_timeouts_answers_503_in_time(deployment):
    device_id = deployment.new_device()
    token = deployment.mint(device_id)
    deployment.sandbox("POST", "/sandbox/v1/faults", {"kind": "timeout", "count": 1000, "delay_ms": 3000})

    started = time.monotonic()
    assert_unavailable(claim(deployment, token))
    assert time.monotonic() - started < 4.5
    deployment.sandbox("DELETE", "/sandbox/v1/faults")
    # A held call answers only after its delay; let it finish before looking at the bits.
    time.sleep(3.2)
    assert untouched(deployment.device(device_id))

    answer = claim(deployment, token)
    assert answer.status == 200 and answer.json["claimed"] is True, answer


def test_an_exchange_during_apple_503s_can_be_retried_with_the_same_device_token(twobits_factory):
    deployment = twobits_factory(extra={"apple": {"timeout_ms": 1000}})
    device_id = deployment.new_device()
    token = deployment.mint(device_id)
    deployment.sandbox("POST", "/sandbox/v1/faults", {"kind": "status", "status": 503, "count": 1000})
    assert_unavailable(deployment.exchange(token))

    deployment.sandbox("DELETE", "/sandbox/v1/faults")
    # No verdict on the token was reached, so it is not "reused".
    answer = deployment.exchange(token)
    assert answer.status == 201, answer
    assert deployment.exchange(token).error_code == "device_token_reused"

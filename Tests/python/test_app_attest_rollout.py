"""Issue 35, part 3: a controlled ramp-up of App Attest. `app_attest.rollout` asks a share of installs to
attest (`enroll` on the challenge), decided per install id by a hash bucket this file computes on its own
from docs/app-attest.md; `app_attest.max_attestations_per_second` answers `enroll: false` beyond its rate;
keys already attested keep asserting whatever the rollout says."""
import hashlib
import time
from datetime import datetime, timezone

import pytest

from test_app_attest import APP_ATTEST, assert_key, assertion_request, attest, attested, new_key

PREFIX = b"twobits.app-attest.rollout.v1\x00"


def bucket(install_id):
    """The documented bucket: the first 8 bytes of SHA-256(prefix + install id), big-endian, mod 10,000."""
    return int.from_bytes(hashlib.sha256(PREFIX + install_id.encode()).digest()[:8], "big") % 10_000


def with_bucket(wanted):
    """An install id that falls in bucket `wanted` (about 10,000 tries)."""
    return next(f"probe-{n}" for n in range(10**6) if bucket(f"probe-{n}") == wanted)


def ask(deployment, **body):
    answer = deployment.post("/v1/app-attest/challenges", body, client="main")
    assert answer.status == 201, answer
    assert len(answer.json["challenge"]) == 43
    return answer.json["enroll"]


def reconfigure(deployment, **app_attest):
    deployment.config["app_attest"] = {**APP_ATTEST, **app_attest}
    for name in ("rollout", "max_attestations_per_second"):
        if app_attest.get(name) is None:
            deployment.config["app_attest"].pop(name, None)
    deployment.config_path.write_text(__import__("json").dumps(deployment.config, indent=2))
    deployment.restart_server()


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": {**APP_ATTEST, "rollout": 30}})


IDS = [f"install-{n:05d}" for n in range(2_000)]


def test_thirty_percent_enrolls_the_installs_of_the_lower_buckets_and_the_same_ones_after_a_restart(deployment):
    reconfigure(deployment, rollout=30)
    answers = {install: ask(deployment, install_id=install) for install in IDS}
    assert answers == {install: bucket(install) < 3_000 for install in IDS}
    # The boundary: bucket 2,999 is in at 30 %, bucket 3,000 is not.
    assert ask(deployment, install_id=with_bucket(2_999)) is True
    assert ask(deployment, install_id=with_bucket(3_000)) is False
    share = sum(answers.values()) / len(IDS)
    assert 0.27 <= share <= 0.33, share
    # Deterministic: a restarted server (no state kept for this) answers the same for every install.
    deployment.restart_server()
    assert {install: ask(deployment, install_id=install) for install in IDS[:300]} == {install: answers[install] for install in IDS[:300]}
    # The purpose does not change the rollout's answer; without an id, only a full rollout enrolls.
    inside = next(i for i in IDS if answers[i])
    outside = next(i for i in IDS if not answers[i])
    assert ask(deployment, install_id=inside, purpose="assertion") is True
    assert ask(deployment, install_id=outside, purpose="assertion") is False
    assert ask(deployment) is False
    assert deployment.post("/v1/app-attest/challenges", None, client="main").json["enroll"] is False


def test_without_a_rollout_every_install_is_enrolled_and_a_full_one_enrolls_installs_without_an_id(deployment):
    reconfigure(deployment)
    assert all(ask(deployment, install_id=install) for install in IDS[:100])
    assert ask(deployment) is True
    assert deployment.post("/v1/app-attest/challenges", None, client="main").json["enroll"] is True
    reconfigure(deployment, rollout=100)
    assert all(ask(deployment, install_id=install) for install in IDS[:100]) and ask(deployment) is True
    reconfigure(deployment, rollout=0)
    assert not any(ask(deployment, install_id=install) for install in IDS[:100]) and ask(deployment) is False
    assert ask(deployment, install_id=with_bucket(0)) is False


def basis_points(start, end, start_bp, end_bp, now):
    if now <= start:
        return start_bp
    if now >= end:
        return end_bp
    return start_bp + int((end_bp - start_bp) * (now - start) / (end - start))


def test_a_ramp_between_two_times_interpolates_the_share(deployment):
    # 2000 to 2100, 10 % to 90 %: about 30 % today, moving a hundredth of a percent every five days.
    start = datetime(2000, 1, 1, tzinfo=timezone.utc).timestamp()
    end = datetime(2100, 1, 1, tzinfo=timezone.utc).timestamp()
    reconfigure(deployment, rollout={"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z", "from_percent": 10, "to_percent": 90})
    low = basis_points(start, end, 1_000, 9_000, time.time())
    answers = {install: ask(deployment, install_id=install) for install in IDS}
    high = basis_points(start, end, 1_000, 9_000, time.time())
    for install, enrolled in answers.items():
        if bucket(install) < low:
            assert enrolled, install
        elif bucket(install) >= high:
            assert not enrolled, install
    # Not the start's 10 % nor the end's 90 %: the share in between (about 30 % in 2026).
    share = sum(answers.values()) / len(IDS)
    assert abs(share - low / 10_000) < 0.04, (share, low)

    # Before the ramp: its start; after it: its end (0 -> 100 % by default).
    reconfigure(deployment, rollout={"from": "2999-01-01T00:00:00Z", "to": "3000-01-01T00:00:00Z", "from_percent": 12.5})
    assert {i: ask(deployment, install_id=i) for i in IDS[:300]} == {i: bucket(i) < 1_250 for i in IDS[:300]}
    reconfigure(deployment, rollout={"from": "2000-01-01T00:00:00Z", "to": "2001-01-01T00:00:00+01:00"})
    assert all(ask(deployment, install_id=i) for i in IDS[:100]) and ask(deployment) is True


def test_beyond_the_attestation_cap_the_challenge_answers_enroll_false_and_assertions_take_no_room(deployment):
    reconfigure(deployment, max_attestations_per_second=2)
    started = time.monotonic()
    answers = [ask(deployment, install_id=install) for install in IDS[:40]]
    elapsed = time.monotonic() - started
    # A bucket of 2 a second holding 2 at the start: at most 2 + 2 per elapsed second, and no errors beyond.
    assert answers.count(True) <= 2 + 2 * elapsed + 1, (answers, elapsed)
    assert answers.count(False) >= 1, (answers, elapsed)
    # A challenge for an assertion never reaches Apple: never refused room, even with the bucket empty.
    for install in IDS[:20]:
        ask(deployment, install_id=install)
    assert all(ask(deployment, install_id=install, purpose="assertion") for install in IDS[:20])


def test_keys_already_attested_keep_asserting_outside_the_rollout(deployment):
    reconfigure(deployment)
    key_id, artifact = attested(deployment)
    reconfigure(deployment, rollout=0)
    assert ask(deployment, install_id="install-strong-1", purpose="assertion") is False
    for expected in (1, 2):
        answer = assert_key(deployment, artifact, assertion_request(deployment, key_id))
        assert answer.status == 200 and answer.json["counter"] == expected and answer.json["tier"] == "appattest", answer


def challenge_and_enroll(deployment, **body):
    answer = deployment.post("/v1/app-attest/challenges", body, client="main")
    assert answer.status == 201, answer
    return answer.json["challenge"], answer.json["enroll"]


def test_a_challenges_purpose_and_enroll_bind_the_attestation(deployment):
    """`enroll: false` and `purpose: assertion` are not advice an app may ignore: such a challenge never admits an
    attestation (401 challenge_unknown_or_used), and the same key attests with an enrolled challenge."""
    reconfigure(deployment, rollout=0)
    key_id = new_key(deployment)
    excluded, enroll = challenge_and_enroll(deployment, install_id="install-bound-1")
    assert enroll is False
    refused = attest(deployment, key_id, excluded)
    assert refused.status == 401 and refused.json["error"]["reason"] == "challenge_unknown_or_used", refused
    reconfigure(deployment)
    for_assertion, enroll = challenge_and_enroll(deployment, install_id="install-bound-1", purpose="assertion")
    assert enroll is True
    refused = attest(deployment, key_id, for_assertion)
    assert refused.status == 401 and refused.json["error"]["reason"] == "challenge_unknown_or_used", refused
    enrolled, enroll = challenge_and_enroll(deployment, install_id="install-bound-1")
    assert enroll is True and attest(deployment, key_id, enrolled).status == 201


def test_one_install_cannot_drain_the_attestation_cap(deployment):
    """An install id is enrolled twice per challenge lifetime at most (a retry), so one app user asking again and
    again through the relay takes no room from the others; challenges without an id take at most half."""
    reconfigure(deployment, max_attestations_per_second=1000)
    answers = [ask(deployment, install_id="install-greedy") for _ in range(10)]
    assert answers == [True, True] + [False] * 8, answers
    assert ask(deployment, install_id="install-patient") is True


@pytest.mark.parametrize("body, message", [
    ({"install_id": ""}, "install_id"), ({"install_id": "a" * 129}, "install_id"), ({"install_id": "bad id"}, "install_id"),
    ({"install_id": 7}, "install_id"), ({"purpose": "both"}, "purpose"), ({"other": 1}, "other"),
])
def test_a_challenge_request_with_a_bad_field_is_refused(deployment, body, message):
    answer = deployment.post("/v1/app-attest/challenges", body, client="main")
    assert answer.status == 400 and answer.error_code == "bad_request", answer
    assert message in answer.json["error"]["message"], answer

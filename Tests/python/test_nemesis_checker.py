"""The fault campaign's checker bites (issue 44): a small clean history passes, and each property, given a
history or final state doctored with its defect, is reported under its own name. No cluster, no binary."""
import copy
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nemesis"))
import checker  # noqa: E402

MONTH = "2026-12"
_ids = iter(range(1, 10**6))


def op(op, invoke, complete, status, body=None, outcome=None, replica="r1", **args):
    return {"type": "op", "id": next(_ids), "client": "c0", "replica": replica, "op": op, "args": args, "invoke": invoke,
            "complete": complete, "status": status, "body": body,
            "outcome": outcome or ("ok" if status and status < 300 else "unknown" if status is None or status >= 500 else "fail")}


T0 = 1_796_083_200_000  # 2026-12-01T00:00:00Z in milliseconds: time 0 of the histories below


def event(action, prefix, result="ok", tx=None, intent=None, subject=None, at=0.0, bits=None):
    """An audit event at `at` seconds, writing `bits` ("(1,0)") when it is a write."""
    iso = datetime.fromtimestamp((T0 + at * 1000) / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    e = {"id": next(_ids), "action": action, "result": result, "client": "x", "intent_id": intent or f"i{next(_ids)}", "at": iso}
    if prefix:
        e["token_sha256_prefix"] = prefix
    if tx:
        e["transaction_id"] = tx
    if subject:
        e["subject"] = subject
    if bits and result != "failed":
        e["bits_after"] = f"{bits}@{MONTH}"
    return e


def write(device, bits, tx, at):
    """An entry of the sandbox's write log: `bits` "(1,0)" written to `device` at `at` seconds."""
    return {"sequence": next(_ids), "at_ms": T0 + int(at * 1000), "device_id": device, "bit0": bits[1] == "1",
            "bit1": bits[3] == "1", "transaction_id": tx}


def audited_write(final, action, prefix, device, bits, tx, at, **fields):
    """An audit event that Apple confirmed, and its entry in Apple's write log."""
    final["audit"].append(event(action, prefix, tx=tx, at=at, bits=bits, **fields))
    final["writes"].append(write(device, bits, tx, at + 0.2))
    final["devices"][device]["updates"] = final["devices"][device].get("updates", 0) + 1


def clean():
    history = [
        op("claim", 1, 2, 200, {"claimed": True, "claimed_month": MONTH}, device="D1", token="p1", key="K1", attempt=0),
        op("claim", 2.5, 2.6, 200, {"claimed": True, "claimed_month": MONTH}, device="D1", token="p1", key="K1", attempt=1),
        op("claim", 2.7, 2.8, 409, {"code": "already_claimed"}, device="D1", token="p3"),
        op("ban", 3, 4, 200, {"banned": True, "applied": True}, device="D1", token="p2"),
        op("consume", 5, 6, 200, {"valid": True, "already_consumed": False}, jti="J"),
        op("consume", 6.5, 7, 200, {"valid": True, "already_consumed": True}, jti="J"),
        op("attest", 7, 7.5, 201, {"tier": "appattest"}, key_id="A"),
        op("assert", 8, 8.5, 200, {"counter": 1}, key_id="A", counter=1),
        op("assert", 9, 9.5, 200, {"counter": 5}, key_id="A", counter=5),
        op("assert", 9.6, 9.7, 401, {"code": "invalid_assertion", "reason": "counter_not_increasing"}, key_id="A", counter=5),
        op("ban.pending", 10, 10.2, 202, {"banned": True, "applied": False}, install="I"),
        {"type": "liveness", "id": next(_ids), "replica": "r1", "healed": 20, "first_ok": 21},
        {"type": "liveness", "id": next(_ids), "replica": "r2", "healed": 20, "first_ok": 35},
    ]
    final = {"month": MONTH, "counters": {"updates_missing_bit": 0},
             "devices": {"D1": {"bit0": True, "bit1": True, "last_update_time": MONTH}},
             "audit": [], "writes": []}
    audited_write(final, "promotion.claim", "p1", "D1", "(1,0)", "t1", 1.1)
    audited_write(final, "ban", "p2", "D1", "(1,1)", "t2", 3.1)
    final["audit"].append(event("ban.pending", None, result="pending", subject="I", at=10.1))
    return history, final


def tags(history, final):
    return {a.split("]")[0].lstrip("[") for a in checker.check(history, final)}


def test_a_clean_history_has_no_anomaly():
    assert checker.check(*clean()) == []


def test_two_grants_one_after_the_other_are_reported():
    history, final = clean()
    history.append(op("claim", 11, 12, 200, {"claimed": True, "claimed_month": MONTH}, device="D1", token="p4"))
    audited_write(final, "promotion.claim", "p4", "D1", "(1,1)", "t4", 11.1)
    assert tags(history, final) == {"promotion-once"}


def test_two_grants_explained_by_an_overlapping_write_are_not():
    """Apple has no compare-and-set: an unban that read before the claim wrote and wrote after it erases it."""
    history, final = clean()
    history.append(op("unban", 1.5, 2.2, 200, {"banned": False, "applied": True}, device="D1", token="p5"))
    history.append(op("claim", 11, 12, 200, {"claimed": True, "claimed_month": MONTH}, device="D1", token="p4"))
    audited_write(final, "unban", "p5", "D1", "(0,0)", "t5", 1.6)
    audited_write(final, "promotion.claim", "p4", "D1", "(1,1)", "t4", 11.1)
    assert checker.check(history, final) == []


def test_an_acknowledged_claim_missing_at_apple_is_reported():
    history, final = clean()
    final["devices"]["D1"]["bit0"] = False
    assert tags(history, final) == {"claim-at-apple"}


def test_a_key_with_two_outcomes_or_none_is_reported():
    history, final = clean()
    history.append(op("claim", 13, 14, 409, {"code": "already_claimed"}, device="D1", token="p1", key="K1", attempt=2))
    assert tags(history, final) == {"idempotency"}
    history, final = clean()
    history.append(op("claim", 13, 14, None, device="D1", token="p6", key="K2", attempt=0))
    history.append(op("claim", 15, 16, 409, {"code": "request_in_progress"}, device="D1", token="p6", key="K2", attempt=1))
    assert any("K2 never resolved" in a for a in checker.check(history, final))


def test_a_limited_use_token_consumed_twice_is_reported():
    history, final = clean()
    history.append(op("consume", 8, 9, 200, {"valid": True, "already_consumed": False}, replica="r2", jti="J"))
    assert tags(history, final) == {"consume-once"}


def test_app_attest_counters_accepted_twice_or_going_back_and_a_key_attested_twice_are_reported():
    history, final = clean()
    history.append(op("assert", 10, 10.5, 200, {"counter": 5}, key_id="A", counter=5))
    assert tags(history, final) == {"counter-once"}
    history, final = clean()
    history.append(op("assert", 10, 10.5, 200, {"counter": 3}, key_id="A", counter=3))
    assert tags(history, final) == {"counter-increasing"}
    history, final = clean()
    history.append(op("attest", 11, 11.5, 201, {"tier": "appattest"}, key_id="A"))
    assert tags(history, final) == {"attest-once"}


def test_a_ban_missing_from_the_audit_trail_or_from_apple_is_reported():
    history, final = clean()
    final["audit"] = [e for e in final["audit"] if e["action"] != "ban"]
    assert "ban-audited" in tags(history, final)
    history, final = clean()
    final["audit"] = [e for e in final["audit"] if e["action"] != "ban.pending"]
    assert tags(history, final) == {"ban-audited"}
    history, final = clean()
    final["devices"]["D1"]["bit1"] = False
    assert tags(history, final) == {"ban-at-apple"}
    # An unban invoked after the ban may have lifted it: not an anomaly.
    history.append(op("unban", 20, 21, None, device="D1", token="p7"))
    assert checker.check(history, final) == []


def test_apple_writes_and_audit_events_not_matched_one_by_one_are_reported():
    history, final = clean()
    final["writes"].append(write("D1", "(1,1)", "t-nobody", 5))  # an Apple write with no event
    assert tags(history, final) == {"write-audited"}
    history, final = clean()
    del final["writes"][1]  # an event that says Apple wrote, not in Apple's log
    assert tags(history, final) == {"write-audited"}
    history, final = clean()
    final["writes"].append(dict(final["writes"][1], sequence=next(_ids)))  # one event matched by two writes
    assert tags(history, final) == {"write-audited"}
    history, final = clean()
    final["writes"][1]["bit1"] = False  # the event's transaction wrote other bits
    assert tags(history, final) == {"write-audited"}
    history, final = clean()
    final["audit"][1]["intent_id"] = final["audit"][0]["intent_id"]
    assert tags(history, final) == {"write-audited"}
    history, final = clean()
    del final["writes"]
    assert tags(history, final) == {"write-audited"}


def test_an_unknown_write_accounts_for_at_most_one_write_of_its_bits_in_its_time():
    def unknown_unban(writes_at):
        history, final = clean()
        history.append(op("unban", 20, 21, None, device="D1", token="p8"))
        final["audit"].append(event("unban", "p8", result="unknown", at=20.1, bits="(1,0)"))
        final["writes"] += [write("D1", "(1,0)", f"u{i}", at) for i, at in enumerate(writes_at)]
        return tags(history, final)
    assert unknown_unban([]) == set()
    assert unknown_unban([21.5]) == set()
    assert unknown_unban([21.5, 22]) == {"write-audited"}   # the event matched twice
    assert unknown_unban([20.1 + checker.UNKNOWN_REACH + 1]) == {"write-audited"}  # too late to be its write
    history, final = clean()
    final["writes"].append(write("D1", "(0,1)", "u", 21.5))  # bits the unknown event did not intend
    history.append(op("unban", 20, 21, None, device="D1", token="p8"))
    final["audit"].append(event("unban", "p8", result="unknown", at=20.1, bits="(1,0)"))
    assert tags(history, final) == {"write-audited"}


@pytest.mark.parametrize("first_ok", [None, 51])
def test_a_replica_not_back_within_30_s_is_reported(first_ok):
    history, final = clean()
    history[-1] = dict(history[-1], first_ok=first_ok)
    assert tags(history, final) == {"liveness"}


def test_a_500_is_reported():
    history, final = clean()
    history.append(op("exchange", 30, 31, 500, {"code": "internal"}, device="D1", token="p9"))
    assert tags(history, final) == {"no-500"}


def test_the_checker_reads_a_run_directory(tmp_path):
    import json
    history, final = clean()
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in history))
    (tmp_path / "final.json").write_text(json.dumps(final))
    assert checker.check(checker.load(tmp_path / "history.jsonl"), copy.deepcopy(final)) == []


def test_an_install_that_does_not_count_one_more_is_reported():
    history, final = clean()
    history += [op("install", 40, 41, 200, {"reinstalls": 0, "banned": False}, device="D2", token="q1"),
                op("install", 42, 43, 200, {"reinstalls": 1, "banned": False}, device="D2", token="q2")]
    final["devices"]["D2"] = {"bit0": True, "bit1": False, "last_update_time": MONTH}
    audited_write(final, "install.register", "q1", "D2", "(1,0)", "u1", 40.1)
    audited_write(final, "install.register", "q2", "D2", "(1,0)", "u2", 42.1)
    assert checker.check(history, final) == []
    history[-1]["body"]["reinstalls"] = 0
    assert tags(history, final) == {"reinstall-counter"}
    # An unban between may have reset the counter: not an anomaly.
    history.append(op("unban", 41.5, 41.8, None, device="D2", token="q3"))
    assert checker.check(history, final) == []


def test_a_pending_unban_lifting_a_ban_of_another_kind_is_reported():
    history, final = clean()
    history.append(op("exchange", 50, 51, 201, {"tier": "devicecheck"}, device="D1", token="p9", install="I"))
    audited_write(final, "unban.applied", "p9", "D1", "(1,0)", "t9", 50.1, subject="I")
    final["devices"]["D1"].update(bit1=False)
    # D1 was banned by its device token (p2): an unban ordered for install I must not lift that.
    assert "unban-same-kind" in tags(history, final)
    # Lifting a ban that install I applied is what a pending unban is for.
    audited_write(final, "ban.applied", "p2", "D1", "(1,1)", "t8", 4, subject="I")
    final["audit"][-1]["id"] = final["audit"][1]["id"] + 0.5  # after the token ban, before the unban
    assert "unban-same-kind" not in tags(history, final)


def test_an_order_left_unknown_is_reported_unless_a_resend_answered_it():
    history, final = clean()
    history.append(op("ban.pending", 60, 61, None, install="I", order="o9"))
    assert tags(history, final) == {"order-resolved"}
    history.append(op("ban.pending", 70, 70.1, 202, {"banned": True, "applied": False}, install="I", order="o9", attempt=1))
    assert checker.check(history, final) == []


def test_apple_written_for_a_request_refused_with_storage_unavailable_is_reported():
    history, final = clean()
    history.append(op("unban", 80, 81, 503, {"code": "storage_unavailable"}, outcome="fail", device="D1", token="p10"))
    assert checker.check(history, final) == []
    audited_write(final, "unban", "p10", "D1", "(1,0)", "t10", 80.1)
    assert tags(history, final) == {"refusal-wrote-nothing"}

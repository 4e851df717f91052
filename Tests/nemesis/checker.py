#!/usr/bin/env python3
"""The campaign's checker: decides a history (history.jsonl) and the final state (final.json: the sandbox's
devices and counters, the audit trail) against TwoBits' promises. Independent of the workload.

    python3 Tests/nemesis/checker.py RUN_DIR        prints each anomaly with its operations; exit 1 on any

An operation is ok, fail (a definite refusal: nothing happened) or unknown (timeout, lost connection, a 5xx
that may have written): unknown ones may have happened, at any time until UNKNOWN_REACH after their
invocation, and the checker allows both. Apple has no compare-and-set: a write that read the device before
another request's write and wrote after it overwrites it (docs/policy.md, "What Apple gives us"); such
overlapping writes explain a lost bit and are not counted as anomalies.
"""
import json
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

UNKNOWN_REACH = 30.0  # seconds an unknown operation may still act after its invocation (deadline, pauses)
WRITES = {"promotion.claim", "install.register", "ban", "unban", "ban.applied", "unban.applied"}
LIVENESS_SECONDS = 30.0
CLOCK_SLACK_MS = 1000  # an event's time (the replica's clock) against the sandbox's, on one machine


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def definite(e):
    """A final answer: the operation happened (2xx) or certainly did not (4xx other than 'try again')."""
    status, code = e.get("status"), (e.get("body") or {}).get("code")
    if status is None or status >= 500 or status == 429:
        return False
    return not (status == 409 and code == "request_in_progress")


def storage_refused(e):
    return e.get("status") == 503 and (e.get("body") or {}).get("code") == "storage_unavailable"


def reach(e):
    """The end of the time in which the operation may have acted."""
    return e["complete"] if e["outcome"] != "unknown" else e["invoke"] + UNKNOWN_REACH


def at_ms(event):
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp() * 1000


def written_bits(w):
    """A write log entry's bits as an audit event writes them, "(1,0)"; "?" for a bit the update left out."""
    return "(" + ",".join("?" if w[b] is None else str(int(w[b])) for b in ("bit0", "bit1")) + ")"


def show(e):
    args = " ".join(f"{k}={v}" for k, v in sorted(e.get("args", {}).items()))
    return (f"#{e['id']} {e.get('client')}@{e.get('replica')} {e['op']} {args} [{e['invoke']:.2f}-{e['complete']:.2f}] "
            f"{e['outcome']} {e.get('status')} {json.dumps(e.get('body'), sort_keys=True)}")


def check(history, final):
    anomalies = []

    def report(prop, text, *entries):
        anomalies.append(f"[{prop}] {text}" + "".join("\n    " + show(e) for e in entries))

    ops = [e for e in history if e.get("type", "op") == "op"]
    by_device = defaultdict(list)
    device_of = {}
    sent_with = defaultdict(list)  # token prefix -> every operation that sent it
    for e in ops:
        if "device" in e.get("args", {}):
            by_device[e["args"]["device"]].append(e)
            device_of[e["args"]["token"]] = e["args"]["device"]
            sent_with[e["args"]["token"]].append(e)

    for e in ops:
        if e.get("status") == 500:
            report("no-500", "a 500 answer", e)

    def may_write(e):
        return e["outcome"] != "fail"

    def overwriters(a, ops_of_device, kinds):
        """Writes of other requests that may have read before a wrote and written after (last write wins)."""
        return [w for w in ops_of_device if w is not a and w["op"] in kinds and may_write(w)
                and (w["op"] != "exchange" or "install" in w["args"])
                and w["invoke"] < a["complete"] and reach(w) > a["invoke"]]

    # -- promotions: one grant per device per window; an acknowledged claim is at Apple ---------------
    grants = defaultdict(dict)   # device -> logical claim (key or op id) -> [start, end, entries]
    keyed = defaultdict(list)
    for e in ops:
        if e["op"] != "claim":
            continue
        logical = e["args"].get("key") or f"op{e['id']}"
        if "key" in e["args"]:
            keyed[e["args"]["key"]].append(e)
        if e["outcome"] == "ok" and (e.get("body") or {}).get("claimed"):
            g = grants[e["args"]["device"]].setdefault(logical, [e["invoke"], e["complete"], []])
            g[2].append(e)
    for key, attempts in keyed.items():  # a keyed claim spans all its attempts
        device = attempts[0]["args"]["device"]
        if key in grants.get(device, {}):
            grants[device][key][0] = min(a["invoke"] for a in attempts)
            grants[device][key][1] = max(a["complete"] for a in attempts)
    clearing = {"ban", "unban", "exchange"}
    for device, claims in grants.items():
        items = sorted(claims.values(), key=lambda g: g[0])
        if not items:
            continue
        for i, (s1, e1, first) in enumerate(items):
            for s2, e2, second in items[i + 1:]:
                if e1 < s2:
                    race = [w for a in first for w in overwriters(a, by_device[device], clearing)]
                    if not race:
                        report("promotion-once", f"device {device} granted the promotion twice, the second claim "
                               "invoked after the first was acknowledged", first[-1], second[0])
        state = final["devices"].get(device) or {}
        if not (state.get("bit0") and (state.get("last_update_time") or "") >= final["month"]):
            acked = [g[2][-1] for g in items]
            if not any(overwriters(a, by_device[device], clearing) for a in acked):
                report("claim-at-apple", f"device {device}: acknowledged claim missing at Apple (final state {state})", *acked)

    # -- the reinstall counter: an install after an acknowledged one, nothing else written between, counts one more
    installs = defaultdict(list)
    for e in ops:
        if e["op"] == "install" and e["outcome"] == "ok":
            installs[e["args"]["device"]].append(e)
    for device, entries in installs.items():
        entries.sort(key=lambda e: e["invoke"])
        for a, b in zip(entries, entries[1:]):
            if a["complete"] >= b["invoke"] or "install" in b["args"]:  # b may apply a pending order first
                continue
            between = [w for w in by_device[device] if w is not a and w is not b and may_write(w)
                       and w["op"] in ("install", "ban", "unban", "exchange", "claim")
                       and (w["op"] != "exchange" or "install" in w["args"])
                       and reach(w) > a["invoke"] and w["invoke"] < b["invoke"]]
            if not between and (b.get("body") or {}).get("reinstalls") != min((a.get("body") or {}).get("reinstalls", 0) + 1, 4):
                report("reinstall-counter", f"device {device}: install after reinstalls={a['body'].get('reinstalls')} "
                       f"answered reinstalls={b['body'].get('reinstalls')} with no other write between", a, b)

    # -- Idempotency-Key: one outcome per key, every key resolved ------------------------------------
    for key, attempts in keyed.items():
        answers = {(a["status"], (a.get("body") or {}).get("code"), (a.get("body") or {}).get("claimed"))
                   for a in attempts if definite(a)}
        if len(answers) > 1:
            report("idempotency", f"key {key} gave {len(answers)} different outcomes {sorted(answers, key=str)}",
                   *[a for a in attempts if definite(a)])
        if not answers:
            report("idempotency", f"key {key} never resolved to an outcome", *attempts[-3:])

    # -- an admin's order answered unknown is re-sent until definite (the careful admin of the workload) ---------
    orders = defaultdict(list)
    for e in ops:
        if "order" in e["args"]:
            orders[e["args"]["order"]].append(e)
    for order, attempts in orders.items():
        if any(a["outcome"] == "unknown" for a in attempts) and not any(definite(a) for a in attempts):
            report("order-resolved", f"{attempts[0]['op']} order {order} never resolved to an outcome", *attempts[-3:])

    # -- limited-use tokens: consumed at most once -----------------------------------------------------
    consumed = defaultdict(list)
    for e in ops:
        if e["op"] == "consume" and e["outcome"] == "ok" and (e.get("body") or {}).get("valid") \
                and (e.get("body") or {}).get("already_consumed") is False:
            consumed[e["args"]["jti"]].append(e)
    for jti, entries in consumed.items():
        if len(entries) > 1:
            report("consume-once", f"limited-use token {jti} consumed {len(entries)} times", *entries)

    # -- App Attest: a key attested once; counters accepted once and increasing -------------------------
    attested = defaultdict(list)
    asserted = defaultdict(list)
    for e in ops:
        if e["op"] == "attest" and e["outcome"] == "ok":
            attested[e["args"]["key_id"]].append(e)
        if e["op"] == "assert" and e["outcome"] == "ok":
            asserted[e["args"]["key_id"]].append(e)
    for key_id, entries in attested.items():
        if len(entries) > 1:
            report("attest-once", f"App Attest key {key_id} attested {len(entries)} times", *entries)
    for key_id, entries in asserted.items():
        for i, a in enumerate(entries):
            for b in entries[i + 1:]:
                if a["args"]["counter"] == b["args"]["counter"]:
                    report("counter-once", f"key {key_id}: counter {a['args']['counter']} accepted twice", a, b)
                else:
                    earlier, later = (a, b) if a["complete"] < b["invoke"] else (b, a) if b["complete"] < a["invoke"] else (None, None)
                    if earlier and earlier["args"]["counter"] > later["args"]["counter"]:
                        report("counter-increasing", f"key {key_id}: counter went back", earlier, later)

    # -- bans: an acknowledged ban is in the audit trail and at Apple --------------------------------------
    audit = final["audit"]
    audited = defaultdict(list)
    for event in audit:
        audited[(event["action"], event.get("token_sha256_prefix") or event.get("subject"))].append(event)
    for e in ops:
        if e["outcome"] != "ok" or e["op"] not in ("ban", "unban", "ban.pending", "unban.pending"):
            continue
        subject = e["args"].get("token") or e["args"].get("install")
        expected = "pending" if e["op"].endswith(".pending") else "ok"
        if not any(ev["result"] == expected for ev in audited[(e["op"], subject)]):
            report("ban-audited", f"acknowledged {e['op']} without its audit event ({e['op']}, {expected})", e)
        if e["op"] == "ban":
            device = e["args"]["device"]
            state = final["devices"].get(device) or {}
            if not state.get("bit1"):
                later = [w for w in by_device[device] if w is not e and may_write(w) and reach(w) > e["invoke"]
                         and (w["op"] == "unban" or (w["op"] in ("exchange", "install") and "install" in w["args"])
                              or (w["op"] in ("claim", "install") and w["invoke"] < e["complete"]))]
                if not later:
                    report("ban-at-apple", f"device {device}: acknowledged ban missing at Apple (final state {state}), "
                           "and nothing since could have lifted it", e)

    # -- a pending unban lifts only a ban of its own kind: one applied through the same install id -----------------
    trail = defaultdict(list)
    for event in sorted(audit, key=lambda ev: ev["id"]):
        if event.get("token_sha256_prefix") in device_of:
            trail[device_of[event["token_sha256_prefix"]]].append(event)
    for device, events in trail.items():
        last_ban = None
        for event in events:
            action, result = event["action"], event["result"]
            if (action in ("ban", "ban.applied") and result in ("ok", "unknown")) or \
                    (action == "install.register" and result in ("banned", "unknown")):
                last_ban = event
            elif action == "unban.applied" and result == "ok":
                if last_ban and last_ban["result"] != "unknown" and not (
                        last_ban["action"] == "ban.applied" and last_ban.get("subject") == event.get("subject")):
                    anomalies.append(f"[unban-same-kind] device {device}: pending unban for {event.get('subject')} (audit event "
                                     f"{event['id']}) lifted a ban of another kind: audit event {last_ban['id']} "
                                     f"({last_ban['action']} {last_ban.get('subject') or ''} {last_ban['result']})")
                last_ban = None
            elif action == "unban" and result == "ok":
                last_ban = None

    # -- Apple's write log against the audit trail, one by one: each write has exactly one event ---------------
    # An event with a transaction id names its write; one without (unknown, pending, settled by a query) may
    # account for at most one write of its device and bits, made within UNKNOWN_REACH after the intent.
    # One intent writes at most once: an attempt whose answer is lost ends the call (a timeout takes its
    # whole deadline), and the campaign plays no fault that writes and then drops the connection.
    writes = final.get("writes")
    if writes is None:
        anomalies.append("[write-audited] the final state has no write log")
        writes = []
    by_transaction = defaultdict(list)
    for w in writes:
        by_transaction[w["transaction_id"]].append(w)
    matched, candidates = set(), defaultdict(list)
    seen_intents, seen_transactions = {}, {}
    for event in audit:
        if event["action"] not in WRITES:
            continue
        for field, seen in (("intent_id", seen_intents), ("transaction_id", seen_transactions)):
            if event.get(field):
                if event[field] in seen:
                    anomalies.append(f"[write-audited] {field} {event[field]} in two audit events: {seen[event[field]]['id']} "
                                     f"and {event['id']}")
                seen[event[field]] = event
        device = device_of.get(event.get("token_sha256_prefix"))
        if device is None:
            anomalies.append(f"[write-audited] audit event {event['id']} ({event['action']}) for a token no operation sent")
            continue
        intended = (event.get("bits_after") or "").split("@")[0] or None  # a failed event no longer says
        if event.get("transaction_id"):
            hits = by_transaction.get(event["transaction_id"], [])
            if len(hits) != 1 or hits[0]["device_id"] != device or intended not in (None, written_bits(hits[0])):
                anomalies.append(f"[write-audited] audit event {event['id']} ({event['action']} {event['result']}) says Apple "
                                 f"wrote {intended} to {device} in transaction {event['transaction_id']}; Apple's log: {hits}")
            matched.update(w["sequence"] for w in hits)
        elif event["result"] in ("ok", "banned", "unknown", "pending") or "does not show" in (event.get("reason") or ""):
            candidates[device].append((at_ms(event), intended, event["id"]))
    used = set()
    for w in sorted(writes, key=lambda w: w["sequence"]):
        if w["sequence"] in matched:
            continue
        fits = [c for c in candidates[w["device_id"]] if c[2] not in used and c[1] in (None, written_bits(w))
                and c[0] - CLOCK_SLACK_MS <= w["at_ms"] <= c[0] + UNKNOWN_REACH * 1000]
        if fits:
            used.add(min(fits)[2])  # the earliest: every window is as long, so this never starves a later write
        else:
            anomalies.append(f"[write-audited] Apple write {w['sequence']} ({written_bits(w)} to {w['device_id']}, "
                             f"transaction {w['transaction_id']}, at {w['at_ms']}) matched by no audit event")
    # A 503 storage_unavailable promises that nothing was written: no write of Apple's may be a refused request's.
    refused_only = {t for t, sent in sent_with.items() if all(storage_refused(e) for e in sent)}
    for event in audit:
        if event.get("token_sha256_prefix") in refused_only and (event.get("transaction_id") or event["id"] in used):
            anomalies.append(f"[refusal-wrote-nothing] audit event {event['id']} ({event['action']} {event['result']}): Apple "
                             f"wrote for a token whose every request was answered 503 storage_unavailable")
    if (final.get("counters") or {}).get("updates_missing_bit"):
        anomalies.append(f"[write-audited] {final['counters']['updates_missing_bit']} updates left a bit out")

    # -- liveness: every replica 2xx again within 30 s of the last heal ------------------------------------
    probes = [e for e in history if e.get("type") == "liveness"]
    if not probes:
        anomalies.append("[liveness] no liveness probe in the history")
    for e in probes:
        if e["first_ok"] is None or e["first_ok"] - e["healed"] > LIVENESS_SECONDS:
            anomalies.append(f"[liveness] replica {e['replica']} not 2xx within {LIVENESS_SECONDS:.0f} s of the last heal "
                             f"(healed at {e['healed']:.2f}, first 2xx {e['first_ok']})")
    return anomalies


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    run = Path(sys.argv[1])
    anomalies = check(load(run / "history.jsonl"), json.loads((run / "final.json").read_text()))
    for anomaly in anomalies:
        print("ANOMALY " + anomaly)
    print(f"checker: {len(anomalies)} anomalies")
    return 1 if anomalies else 0


if __name__ == "__main__":
    sys.exit(main())

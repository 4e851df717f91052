"""What a server says about a run: its /metrics (Apple calls, ledger calls, requests) and its log lines."""

import http.client
import re

from .httpclient import Http


def scrape(host, port):
    """The text of GET /metrics, or None when the server cannot be reached. Any answer but 200 ends bench.py."""
    h = Http(host, port, timeout=10)
    try:
        status, payload = h.request("GET", "/metrics")
    except (OSError, http.client.HTTPException):
        return None
    finally:
        h.close()
    if status != 200:
        # Not noise: a scrape answered otherwise was once another request's late answer (LoopDaemon).
        raise SystemExit("bench.py: GET /metrics on %s:%d answered %d: %r" % (host, port, status, payload[:200]))
    return payload.decode(errors="replace")


def apple_call_metrics(target):
    """Sums of the server's Apple-call histogram and attempt counters from /metrics: (seconds, count, outcomes),
    over all its replicas. Zeros for the Go peer, which has no /metrics."""
    total, count, outcomes = 0.0, 0, {}
    for host, port in (target.addresses if target.has_metrics else []):
        t, c, o = apple_call_metrics_of(host, port)
        total, count = total + t, count + c
        for k, v in o.items():
            outcomes[k] = outcomes.get(k, 0) + v
    return total, count, outcomes


def apple_call_metrics_of(host, port):
    text = scrape(host, port)
    total, count, outcomes = 0.0, 0, {}
    for line in (text.splitlines() if text is not None else []):
        m = re.match(r'^twobits_apple_call_seconds_(sum|count)(\{[^}]*\})?\s+([0-9.eE+-]+)$', line)
        if m:
            if m.group(1) == "sum":
                total += float(m.group(3))
            else:
                count += int(float(m.group(3)))
            continue
        m = re.match(r'^twobits_apple_calls_total\{([^}]*)\}\s+([0-9.eE+-]+)$', line)
        if m:
            outcome = re.search(r'outcome="([^"]*)"', m.group(1))
            key = outcome.group(1) if outcome else m.group(1)
            outcomes[key] = outcomes.get(key, 0) + int(float(m.group(2)))
    return total, count, outcomes


def server_timings(target):
    """Sums and counts of the server's own latency histograms from /metrics, over all its replicas:
    {"ledger": (seconds, count), "request": (seconds, count)}, the request one over every route. Zeros for
    the Go peer. With the Apple-call histogram they split a request's time into its ledger calls, its
    Apple calls and the rest (loop turns, queueing)."""
    sums = {"ledger": [0.0, 0], "request": [0.0, 0]}
    for host, port in (target.addresses if target.has_metrics else []):
        text = scrape(host, port)
        for line in (text.splitlines() if text is not None else []):
            m = re.match(r'^twobits_(ledger_call|http_request)_seconds_(sum|count)(\{[^}]*\})?\s+([0-9.eE+-]+)$', line)
            if m:
                entry = sums["ledger" if m.group(1) == "ledger_call" else "request"]
                if m.group(2) == "sum":
                    entry[0] += float(m.group(4))
                else:
                    entry[1] += int(float(m.group(4)))
    return {k: tuple(v) for k, v in sums.items()}


def truncate_server_log(target):
    for path in target.log_paths:
        with open(path, "r+b") as f:
            f.truncate(0)


def server_log_summary(target):
    statuses, levels, samples = {}, {}, []
    for path in target.log_paths:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = re.search(r'"status":(\d+)', line)
                    if m:
                        statuses[m.group(1)] = statuses.get(m.group(1), 0) + 1
                    lv = re.search(r'"level":"(\w+)"', line)
                    if lv:
                        levels[lv.group(1)] = levels.get(lv.group(1), 0) + 1
                        if lv.group(1) != "info" and len(samples) < 3:
                            samples.append(line.strip()[:400])
        except OSError:
            pass
    return {"statuses": statuses, "levels": levels, "samples": samples}


def diff_counts(before, after):
    out = {}
    for k, v in after.items():
        d = v - before.get(k, 0)
        if d:
            out[k] = d
    return out

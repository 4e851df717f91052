"""One wrk run against one server: the load (a wrk Lua script from Benchmarks/wrk/ with fresh tokens), the
readings taken before and after it (/proc, the sandbox's counters, the server's /metrics), and the run's result."""

import json
import os
import re
import resource
import time

from . import metrics
from .common import WRK_DIR, BenchError, log
from .processes import tail
from .procfs import CLK_TCK, machine_cpu, proc_cpu_seconds, proc_status, procs_status, reset_peak_rss
from .scenarios import SCENARIO_LABELS, SCENARIOS


def run_one(bench, target, scenario, latency_ms, concurrency, duration):
    """Mints the run's tokens, runs wrk, and returns what was measured (one entry of the report's `runs`)."""
    method, path, calls, _, _ = SCENARIOS[scenario]
    threads = max(1, min(bench.args.wrk_threads, concurrency))
    log("%s: %s latency=%d ms concurrency=%d duration=%d s" % (target.label, scenario, latency_ms, concurrency, duration))
    bench.set_latency(latency_ms)
    token_file, minted, script, script_args = wrk_script(bench, target, scenario, latency_ms, concurrency, duration, threads)

    # Let the previous run's connections drain and the machine settle.
    time.sleep(bench.args.settle)
    before = readings_before(bench, target)
    wrk_argv = ["wrk", "-t", str(threads), "-c", str(concurrency), "-d", "%ds" % duration, "--timeout", "30s",
                "-s", script, target.url + (path if method == "GET" else "/")] + (["--"] + script_args if script_args else [])
    wrk, out_path, err_path, sampled = drive_wrk(bench, target, wrk_argv, duration, before["pids"])
    after = readings_after(bench, target, before, sampled)
    w = wrk_report(wrk, out_path, err_path)
    new_jwts = after["counters"].get("distinct_developer_tokens", 0) - before["counters"].get("distinct_developer_tokens", 0)
    target.jwts += new_jwts
    seconds = w["duration_us"] / 1e6
    rps = w["requests"] / seconds if seconds > 0 else 0.0
    ideal = concurrency / (latency_ms / 1000.0 * calls) if latency_ms > 0 and calls > 0 else None
    spent = cpu_spent(before, after)
    result = {**wrk_figures(target, scenario, latency_ms, concurrency, threads, w, before, after),
              **server_means(before, after, ideal, rps),
              **cpu_figures(w["requests"], spent),
              **server_figures(bench, target, before, after, new_jwts, minted, w),
              **link_figures(bench, before, after, w["requests"])}
    if latency_ms == 0 and calls > 0:
        bench.rate_seen[(target.name, scenario)] = max(bench.rate_seen.get((target.name, scenario), 0), rps)
    log_result(result, rps, ideal, spent)
    if token_file:
        os.remove(token_file)
    return result


def wrk_script(bench, target, scenario, latency_ms, concurrency, duration, threads):
    """(token file, tokens minted, Lua script, its arguments): fresh tokens for the routes that take one."""
    _, path, _, needs_tokens, _ = SCENARIOS[scenario]
    if not needs_tokens:
        return None, 0, os.path.join(WRK_DIR, "jwks.lua"), []
    token_file, minted = bench.mint_tokens(scenario, bench.tokens_needed(target, scenario, latency_ms, concurrency, duration))
    return token_file, minted, os.path.join(WRK_DIR, "device_tokens.lua"), [token_file, bench.api_key, str(threads), path]


def cpu_readings(bench, target, pids, with_postgres):
    """CPU seconds so far of the server, PostgreSQL, the sandbox, the TLS terminator, the machine, reaped children
    (wrk) and bench.py."""
    cpu = sum(proc_cpu_seconds(pid) for pid in pids)
    pg = bench.postgres.cpu_seconds() if with_postgres else None
    sandbox = proc_cpu_seconds(bench.sandbox.pid)
    terminator = bench.link.cpu_seconds() if bench.link else 0.0
    busy, total = machine_cpu()
    return {"cpu": cpu, "pg": pg, "sandbox": sandbox, "terminator": terminator, "busy": busy, "total": total,
            "children": resource.getrusage(resource.RUSAGE_CHILDREN), "self": resource.getrusage(resource.RUSAGE_SELF)}


def readings_before(bench, target):
    counters = bench.counters()
    apple = bench.apple_call_metrics(target)
    timings = bench.server_timings(target)
    metrics.truncate_server_log(target)
    link_mark = bench.link.mark() if bench.link else None
    started = time.time()
    pids = target.pids()
    hwm_reset = all([reset_peak_rss(pid) for pid in pids])
    with_postgres = target.ledger == "postgres" and bench.postgres is not None
    return dict(cpu_readings(bench, target, pids, with_postgres), counters=counters, apple=apple, timings=timings,
                pids=pids, hwm_reset=hwm_reset, link_mark=link_mark,
                started=started)


def readings_after(bench, target, before, sampled):
    """The readings after wrk stopped; `sampled` is (most threads, most RSS) seen while it ran."""
    cpu = cpu_readings(bench, target, before["pids"], before["pg"] is not None)
    st = procs_status(before["pids"])
    threads_max = max(sampled[0], st.get("Threads", 0))
    rss_max = max(sampled[1], st.get("VmRSS", 0))
    counters = bench.counters()
    return dict(cpu, threads_max=threads_max, peak_kb=st.get("VmHWM", 0) if before["hwm_reset"] else rss_max,
                counters=counters, apple=bench.apple_call_metrics(target), timings=bench.server_timings(target),
                link=bench.link.since(before["link_mark"], before["started"], time.time()) if bench.link else None)


def drive_wrk(bench, target, wrk_argv, duration, pids):
    """Runs wrk to its end (bounded), sampling the server's threads and RSS every 200 ms; fails should the
    server exit. Returns (wrk's process, its output files, (most threads, most RSS in kB))."""
    out_path = os.path.join(bench.work, "wrk.out")
    err_path = os.path.join(bench.work, "wrk.err")
    # Several replicas: each wrk thread connects to one of them in turn (wrk/spread.lua).
    wrk_env = dict(os.environ, TWOBITS_WRK_ADDRS=",".join("%s:%d" % a for a in target.addresses)) if len(target.addresses) > 1 else None
    wrk = bench.procs.start("wrk", wrk_argv, stdout=open(out_path, "w"), stderr=open(err_path, "w"), env=wrk_env)
    deadline = time.monotonic() + duration + 60
    threads_max, rss_max = 0, 0
    try:
        while wrk.poll() is None:
            if time.monotonic() > deadline:
                raise BenchError("wrk did not finish within %d s" % (duration + 60))
            gone = target.exited()
            if gone is not None:
                raise BenchError("%s exited (status %s) during the run:\n%s" % (
                    target.label, gone.returncode, tail(target.err_paths[target.procs.index(gone)])))
            st = procs_status(pids)
            threads_max = max(threads_max, st.get("Threads", 0))
            rss_max = max(rss_max, st.get("VmRSS", 0))
            time.sleep(0.2)
    finally:
        bench.procs.forget(wrk)
    return wrk, out_path, err_path, (threads_max, rss_max)


def wrk_report(wrk, out_path, err_path):
    """The JSON line the Lua script's done() printed."""
    with open(out_path) as f:
        wrk_out = f.read()
    m = re.search(r"^BENCH_JSON (\{.*\})$", wrk_out, re.M)
    if wrk.returncode != 0 or not m:
        raise BenchError("wrk failed (status %s):\n%s\n%s" % (wrk.returncode, wrk_out[-2000:], tail(err_path)))
    return json.loads(m.group(1))


def wrk_figures(target, scenario, latency_ms, concurrency, threads, w, before, after):
    """The run's identity and what wrk and the sandbox counted."""
    seconds = w["duration_us"] / 1e6
    requests = w["requests"]
    e = w["errors"]
    b, a = before["counters"], after["counters"]
    return {
        "server": target.name,
        "ledger": target.ledger,
        "replicas": target.replicas,
        "scenario": scenario,
        "route": SCENARIO_LABELS[scenario],
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "duration_s": round(seconds, 2),
        "wrk_threads": threads,
        "requests": requests,
        "requests_per_second": round(requests / seconds if seconds > 0 else 0.0, 1),
        "latency_p50_ms": w["latency_us"]["p50"] / 1000.0,
        "latency_p90_ms": w["latency_us"]["p90"] / 1000.0,
        "latency_p99_ms": w["latency_us"]["p99"] / 1000.0,
        "latency_max_ms": w["latency_us"]["max"] / 1000.0,
        "non_2xx": e["status"],
        "socket_errors": e["connect"] + e["read"] + e["write"] + e["timeout"],
        "socket_error_detail": {k: e[k] for k in ("connect", "read", "write", "timeout")},
        "apple_calls_per_request": SCENARIOS[scenario][2],
        # By the sandbox; includes calls of requests still in flight when wrk stopped.
        "apple_calls_seen": sum(a.get("calls", {}).values()) - sum(b.get("calls", {}).values()),
        "sandbox_calls": metrics.diff_counts(b.get("calls", {}), a.get("calls", {})),  # by endpoint
    }


def server_means(before, after, ideal, rps):
    """The server's own view of its Apple calls (curl round trip, sandbox latency included), of its ledger calls
    (a group-commit write: queued, lingering, committed on the ledger thread, back on the loop) and of whole
    requests (from dispatch to the answer given); and the ideal rate, concurrency / (latency x Apple calls)."""
    apple0, apple1 = before["apple"], after["apple"]
    apple_count = apple1[1] - apple0[1]
    timings0, timings1 = before["timings"], after["timings"]

    def mean_ms(name):
        count = timings1[name][1] - timings0[name][1]
        return round(1000.0 * (timings1[name][0] - timings0[name][0]) / count, 1) if count > 0 else None

    return {
        "apple_call_mean_ms": round(1000.0 * (apple1[0] - apple0[0]) / apple_count, 1) if apple_count > 0 else None,
        "apple_call_outcomes": metrics.diff_counts(apple0[2], apple1[2]),
        "ledger_call_mean_ms": mean_ms("ledger"),
        "server_request_mean_ms": mean_ms("request"),
        "ideal_requests_per_second": round(ideal, 1) if ideal else None,
        "ratio_to_ideal": round(rps / ideal, 3) if ideal else None,
    }


def cpu_spent(before, after):
    """CPU seconds each party spent during the run, the CPU-seconds all CPUs had, and the machine's busy share."""
    cpu = after["cpu"] - before["cpu"]
    wall_cpu = (after["total"] - before["total"]) / CLK_TCK  # CPU-seconds available on all CPUs during the run
    machine_busy = 100.0 * (after["busy"] - before["busy"]) / max(1, after["total"] - before["total"])
    c0, c1, s0, s1 = before["children"], after["children"], before["self"], after["self"]
    wrk_cpu = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)  # wrk, reaped
    bench_cpu = (s1.ru_utime + s1.ru_stime) - (s0.ru_utime + s0.ru_stime)
    sandbox_cpu = after["sandbox"] - before["sandbox"]
    pg_cpu = (after["pg"] - before["pg"]) if before["pg"] is not None and after["pg"] is not None else None
    terminator_cpu = after["terminator"] - before["terminator"]
    ours = cpu + sandbox_cpu + wrk_cpu + bench_cpu + (pg_cpu or 0.0) + terminator_cpu
    other_pct = max(0.0, machine_busy - 100.0 * ours / max(1e-9, wall_cpu))
    return cpu, wall_cpu, machine_busy, wrk_cpu, sandbox_cpu, pg_cpu, other_pct, terminator_cpu


def cpu_figures(requests, spent):
    cpu, wall_cpu, machine_busy, wrk_cpu, sandbox_cpu, pg_cpu, other_pct, terminator_cpu = spent
    ncpu = os.cpu_count() or 1

    def share(seconds):
        return round(100.0 * seconds / max(1e-9, wall_cpu), 1)

    return {
        "server_cpu_seconds": round(cpu, 3),
        "server_cpu_us_per_request": round(cpu / requests * 1e6, 1) if requests else None,
        "sandbox_cpu_us_per_request": round(sandbox_cpu / requests * 1e6, 1) if requests else None,
        # The PostgreSQL cluster's processes (postmaster and backends), when bench.py started it.
        "postgres_cpu_us_per_request": round(pg_cpu / requests * 1e6, 1) if requests and pg_cpu is not None else None,
        # What all CPUs could sustain at this run's CPU cost per request (server + sandbox + wrk): where the
        # ideal is above it, loopback on this machine cannot reach the ideal whatever Apple's latency.
        "cpu_limit_requests_per_second": round(ncpu * requests / (cpu + sandbox_cpu + wrk_cpu), 1) if requests and cpu + sandbox_cpu + wrk_cpu > 0 else None,
        "machine_cpu_busy_pct": round(machine_busy, 1),
        "cpu_share_pct": {  # of all CPUs, during the run
            "server": share(cpu),
            "sandbox": share(sandbox_cpu),
            "wrk": share(wrk_cpu),
            "postgres": share(pg_cpu) if pg_cpu is not None else None,
            "terminator": share(terminator_cpu),
            "other_processes": round(other_pct, 1),
        },
    }


def server_figures(bench, target, before, after, new_jwts, minted, w):
    """Memory, threads, developer JWTs, statuses and log levels, tokens."""
    logsum = metrics.server_log_summary(target)
    return {
        "server_peak_rss_mb": round(after["peak_kb"] / 1024.0, 1),
        "server_peak_rss_source": "VmHWM (reset per run)" if before["hwm_reset"] else "max sampled VmRSS",
        "server_threads_max": after["threads_max"],
        "sandbox_rss_mb": round(proc_status(bench.sandbox.pid).get("VmRSS", 0) / 1024.0, 1),
        # This server process's own (the sandbox's counter is shared by TwoBits and the peer).
        "developer_jwts_total": target.jwts,
        "developer_jwts_new": new_jwts,
        "sandbox_statuses": metrics.diff_counts(before["counters"].get("statuses", {}), after["counters"].get("statuses", {})),
        "server_statuses": logsum["statuses"],
        "server_log_levels": logsum["levels"],
        "server_log_samples": logsum["samples"],
        "tokens_minted": minted,
        "token_wraps": w.get("token_wraps", 0),
    }


def link_figures(bench, before, after, requests):
    """The link to Apple: `plain`, or what the TLS terminator served during the run (link.AppleLink.since) and
    its CPU per request."""
    link = after["link"]
    if link is not None:
        link = dict(link, terminator_cpu_us_per_request=round((after["terminator"] - before["terminator"]) / requests * 1e6, 1)
                    if requests else None)
    return {"apple_link": bench.link.kind if bench.link else "plain", "link": link}


def log_result(result, rps, ideal, spent):
    machine_busy, other_pct = spent[2], spent[6]
    log("  %.0f req/s%s, p50 %.1f ms, p99 %.1f ms, non-2xx %d, socket errors %d, %s us CPU/req, RSS %.0f MB, %d threads, "
        "machine %.0f%% busy (%.0f%% not ours), JWTs %s%s" % (
            rps, (" (%.0f%% of ideal %.0f)" % (100 * rps / ideal, ideal)) if ideal else "",
            result["latency_p50_ms"], result["latency_p99_ms"], result["non_2xx"], result["socket_errors"],
            result["server_cpu_us_per_request"], result["server_peak_rss_mb"], result["server_threads_max"],
            machine_busy, other_pct,
            result["developer_jwts_total"], ", TOKENS WRAPPED %d times" % result["token_wraps"] if result["token_wraps"] else ""))
    link = result.get("link")
    if link:
        log("  terminator: %d Apple calls on %d connections (%d new: %s per 10k calls; after the warm-up %d new, %s per 10k "
            "calls, %s a minute), %s, %s, nginx %s us CPU/req" % (
                link["calls"], link["connections_used"], link["new_connections"], link["new_connections_per_10k_calls"],
                link["steady_new_connections"], link["steady_new_connections_per_10k_calls"], link["steady_new_connections_per_minute"],
                link["protocols"], link["tls_versions"], link["terminator_cpu_us_per_request"]))
    if result["server_request_mean_ms"] is not None:
        log("  server's own means: request %s ms, Apple call %s ms, ledger call %s ms" % (
            result["server_request_mean_ms"], result["apple_call_mean_ms"], result["ledger_call_mean_ms"]))
    if result["server_log_levels"].get("error") or result["server_log_levels"].get("warning"):
        log("  server logged: %s %s" % (result["server_log_levels"], result["server_log_samples"][:1]))

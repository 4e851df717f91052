"""The report: Markdown tables of a matrix run and of a ledger comparison, results/*.json and *.md, and the
generated sections of Benchmarks/README.md (between their markers)."""

import json
import os

from .common import README, ROOT, fmt, log, median
from .link import WARMUP_SECONDS

README_START = "<!-- bench:results:start (written by bench.py --write-readme) -->"
README_END = "<!-- bench:results:end -->"
LEDGERS_START = "<!-- bench:ledgers:start (written by bench.py --compare-ledgers --write-readme) -->"
LEDGERS_END = "<!-- bench:ledgers:end -->"

LEDGER_LABELS = {"sqlite": "SQLite", "postgres": "PostgreSQL", "postgres-x2": "2 replicas, one PostgreSQL"}


def markdown(report):
    """A matrix run: where and how it ran, the runs, the Go peer's, the micro-benchmarks, the targets."""
    return "\n".join(preamble(report) + runs_table(report) + peer_table(report) + link_table(report) + races_table(report)
                     + micro_lines(report) + targets_table(report["targets"]) + [""])


def preamble(report):
    m = report["machine"]
    tls = report.get("apple_link", "plain") != "plain"
    lines = ["Measured %s on %s (%s logical CPUs, `nproc` %s; %s GB RAM), %s, kernel %s, %s; "
             "load average %.1f at start, %s at the end. Every run shares the machine: wrk, the sandbox%s and the server. Apple link: %s." % (
                 report["finished_at"], m["cpu_model"], m["nproc"], m["nproc_available"], m["memory_gb"], m["os"], m["kernel"],
                 m["wrk"] or "wrk", m["loadavg_at_start"], fmt(report.get("loadavg_at_end"), 1), ", the TLS terminator (nginx)" if tls else "",
                 LINK_LABELS.get(report.get("apple_link", "plain"))), ""]
    others = sorted(r["cpu_share_pct"]["other_processes"] for r in report["runs"])
    lines.append("Each run lasts %d s; bench.py took %.0f s in all (%.0f s of it minting sandbox tokens). The server is restarted "
                 "for each scenario (peak RSS, threads and developer JWTs are per scenario)." % (
                     report["duration_s"], report["elapsed_s"], report["token_minting_s"]))
    if others:
        lines.append("Processes other than the server, the sandbox, wrk and bench.py took %.0f-%.0f %% (median %.0f %%) of the "
                     "machine's CPU during the runs; the \"not ours\" figure in brackets is per run." % (
                         others[0], others[-1], others[len(others) // 2]))
    lines.append("")
    return lines


def conc(report):
    """A row's concurrency, and which race it was when rows were raced several times."""
    repeated = any(r.get("race", 1) > 1 for r in report["runs"])
    return lambda r: "%d" % r["concurrency"] + (" (race %d)" % r.get("race", 1) if repeated else "")


def runs_table(report):
    lines = ["| Scenario | Apple latency | Conc. | req/s | Ideal req/s | Ratio | p50 ms | p99 ms | max ms | non-2xx | socket err | CPU µs/req | machine CPU (not ours) | peak RSS MB | threads | dev JWTs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    c = conc(report)
    for r in report["runs"]:
        lines.append("| %s | %d ms | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %s%% (%s%%) | %s | %d | %s |" % (
            r["route"], r["latency_ms"], c(r), fmt(r["requests_per_second"]), fmt(r["ideal_requests_per_second"]),
            ("%.0f%%" % (100 * r["ratio_to_ideal"])) if r["ratio_to_ideal"] is not None else "n/a",
            fmt(r["latency_p50_ms"], 1), fmt(r["latency_p99_ms"], 1), fmt(r["latency_max_ms"], 0),
            r["non_2xx"], r["socket_errors"], fmt(r["server_cpu_us_per_request"], 0), fmt(r["machine_cpu_busy_pct"], 0),
            fmt(r["cpu_share_pct"]["other_processes"], 0), fmt(r["server_peak_rss_mb"], 0), r["server_threads_max"], fmt(r["developer_jwts_total"])))
    lines.append("")
    return lines


def peer_table(report):
    paired = [r for r in report["runs"] if r.get("peer")]
    if not paired:
        return []
    p = report.get("peer") or {}
    lines = ["Against the Go peer (`Benchmarks/GoPeer`, %s; the same routes with Go's standard library and no reuse ledger "
             "or audit, behind the same sandbox, under the same wrk load with its own fresh tokens, run back to back with "
             "TwoBits). Ratios are TwoBits ÷ Go: CPU below 1 and req/s above 1 favour TwoBits." % (p.get("version") or "go"), "",
             "| Scenario | Apple latency | Conc. | TwoBits req/s | Go req/s | req/s ratio | TwoBits CPU µs/req | Go CPU µs/req | CPU ratio "
             "| TwoBits p99 ms | Go p99 ms | TwoBits peak RSS MB | Go peak RSS MB | Go threads | Go non-2xx + socket err |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    c = conc(report)
    for r in paired:
        g, v = r["peer"], r["vs_peer"]
        lines.append("| %s | %d ms | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |" % (
            r["route"], r["latency_ms"], c(r), fmt(r["requests_per_second"]), fmt(g["requests_per_second"]),
            fmt(v["throughput_ratio"], 2), fmt(r["server_cpu_us_per_request"], 0), fmt(g["server_cpu_us_per_request"], 0),
            fmt(v["cpu_per_request_ratio"], 2), fmt(r["latency_p99_ms"], 1), fmt(g["latency_p99_ms"], 1),
            fmt(r["server_peak_rss_mb"], 0), fmt(g["server_peak_rss_mb"], 0), g["server_threads_max"],
            g["non_2xx"] + g["socket_errors"]))
    lines.append("")
    return lines


LINK_LABELS = {"plain": "plaintext HTTP/1.1 to the sandbox", "tls-h2": "TLS + HTTP/2 (fake Apple, nginx)",
               "tls-h1": "TLS + HTTP/1.1 only (fake Apple, nginx)"}


def link_table(report):
    """Over a TLS link: per run, what the terminator counted for each server (the same count for both)."""
    rows = [r for r in report["runs"] if r.get("link")]
    if not rows:
        return []
    lines = ["The link to Apple: %s. Counted by the terminator from its access log, per run: the Apple calls it served, the "
             "client connections they came on, and the connections opened during the run (one TLS handshake each), per "
             "10,000 calls; then the same after the run's first %.0f s (steady: the load's first connections left out), and "
             "per minute." % (LINK_LABELS.get(report.get("apple_link"), report.get("apple_link")), WARMUP_SECONDS), "",
             "| Scenario | Apple latency | Conc. | server | Apple calls | connections | new connections | new per 10k calls "
             "| steady: new | per 10k calls | per minute | calls per connection | HTTP | TLS | nginx CPU µs/req |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"]
    c = conc(report)
    for r in rows:
        for name, x in (("TwoBits", r), ("Go", r.get("peer"))):
            link = x.get("link") if x else None
            if not link:
                continue
            lines.append("| %s | %d ms | %s | %s | %d | %d | %d | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                r["route"], r["latency_ms"], c(r), name, link["calls"], link["connections_used"], link["new_connections"],
                fmt(link["new_connections_per_10k_calls"], 1), link["steady_new_connections"],
                fmt(link["steady_new_connections_per_10k_calls"], 1), fmt(link["steady_new_connections_per_minute"], 1),
                fmt(link["calls_per_connection"], 0),
                ", ".join("%s %d" % kv for kv in sorted(link["protocols"].items())),
                ", ".join("%s %d" % kv for kv in sorted(link["tls_versions"].items())), fmt(link["terminator_cpu_us_per_request"], 0)))
    lines.append("")
    return lines


def spread_text(values, digits):
    """"12.3" for one value, "12.3 (11.0-14.2)" (median, range) for several; "n/a" for none."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    if len(values) == 1:
        return fmt(float(values[0]), digits)
    return "%s (%s-%s)" % (fmt(float(median(values)), digits), fmt(float(min(values)), digits), fmt(float(max(values)), digits))


def races_table(report):
    """Each row raced against the Go peer, over its races: medians with their range."""
    paired = [r for r in report["runs"] if r.get("peer")]
    if not paired:
        return []
    keys = []
    for r in paired:
        key = (r["scenario"], r["latency_ms"], r["concurrency"])
        if key not in keys:
            keys.append(key)
    tls = any(r.get("link") for r in paired)
    lines = ["Per row, TwoBits against the Go peer over %s: the median of its races with the range in brackets "
             "(ratios TwoBits ÷ Go)." % LINK_LABELS.get(report.get("apple_link"), "the same link"), "",
             "| Scenario | Apple latency | Conc. | races | CPU ratio | req/s ratio | TwoBits CPU µs/req | Go CPU µs/req | TwoBits req/s | Go req/s "
             "| TwoBits p50 ms | Go p50 ms | TwoBits p99 ms | Go p99 ms" + (" | TwoBits new conns per 10k calls | Go new conns per 10k calls" if tls else "")
             + " | errors (TwoBits, Go) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if tls else "") + "---|"]
    for scenario, latency, concurrency in keys:
        rs = [r for r in paired if (r["scenario"], r["latency_ms"], r["concurrency"]) == (scenario, latency, concurrency)]
        gs = [r["peer"] for r in rs]

        def col(xs, field, digits=0):
            return spread_text([x[field] for x in xs], digits)

        def conns(xs):
            return "%s; steady %s" % (spread_text([(x.get("link") or {}).get("new_connections_per_10k_calls") for x in xs], 1),
                                      spread_text([(x.get("link") or {}).get("steady_new_connections_per_10k_calls") for x in xs], 1))

        errors = "%d, %d" % (sum(x["non_2xx"] + x["socket_errors"] for x in rs), sum(x["non_2xx"] + x["socket_errors"] for x in gs))
        lines.append("| %s | %d ms | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s %s |" % (
            rs[0]["route"], latency, concurrency, len(rs),
            spread_text([r["vs_peer"]["cpu_per_request_ratio"] for r in rs], 2),
            spread_text([r["vs_peer"]["throughput_ratio"] for r in rs], 2),
            col(rs, "server_cpu_us_per_request"), col(gs, "server_cpu_us_per_request"),
            col(rs, "requests_per_second"), col(gs, "requests_per_second"),
            col(rs, "latency_p50_ms", 1), col(gs, "latency_p50_ms", 1), col(rs, "latency_p99_ms", 1), col(gs, "latency_p99_ms", 1),
            (" %s | %s |" % (conns(rs), conns(gs))) if tls else "", errors))
    lines.append("")
    return lines


def micro_lines(report):
    lines = []
    e = report.get("es256")
    if e:
        if "ratio" in e:
            lines.append("ES256 on one core, per CPU second: TwoBits `ES256Signer` %.0f sign/s (signing input %d bytes, SHA-256 included) vs "
                         "`openssl speed -seconds %d ecdsap256` %.0f sign/s (%s): **%.0f%%** of OpenSSL." % (
                             e["twobits_signs_per_second"], e["twobits_input_bytes"], e["openssl_seconds"], e["openssl_signs_per_second"],
                             e.get("openssl_version", "OpenSSL"), 100 * e["ratio"]))
        else:
            lines.append("ES256: %s" % e.get("error", "not run"))
        lines.append("")
    a = report.get("app_attest")
    if a:
        if "attestation_us" in a:
            lines.append("App Attest on one core, CPU per verification of a real capture (%s): attestation %.0f us, assertion %.0f us "
                         "(%.0f us with the key already parsed)." % (os.path.basename(str(a.get("fixture", "?"))), a["attestation_us"], a["assertion_us"],
                                                                     a.get("assertion_parsed_key_us", float("nan"))))
        else:
            lines.append("App Attest: %s" % a.get("error", "not run"))
        lines.append("")
    return lines


def targets_table(checks):
    lines = ["| Target | Where | Measured | Met |", "|---|---|---|---|"]
    for c in checks:
        met = {True: "yes", False: "**no**", None: "n/a"}[c["met"]]
        lines.append("| %s | %s | %s%s | %s |" % (c["target"], c["run"], c["measured"], (" (%s)" % c["note"]) if c["note"] else "", met))
    return lines


def ledger_markdown(report):
    """The --compare-ledgers table: per scenario, SQLite, PostgreSQL and two replicas, with ratios to SQLite."""
    m = report["machine"]
    lines = ["Measured %s on %s (%s logical CPUs, `nproc` %s), %s; load average %.1f at start. Each run lasts %d s; "
             "wrk, the sandbox, PostgreSQL and the server(s) share the machine. With two replicas the wrk threads "
             "alternate between their ports (`wrk/spread.lua`) and CPU, RSS and threads are the two processes' sums. "
             "PostgreSQL: bench.py's own throw-away cluster (`.ci/postgres.sh`: fsync off, synchronous_commit off), "
             "a fresh database per target." % (
                 report["finished_at"], m["cpu_model"], m["nproc"], m["nproc_available"], m["os"], m["loadavg_at_start"],
                 report["duration_s"]), ""]
    lines += ledger_rows_table(report["ledger_comparison"])
    lines.append("")
    lines += targets_table(report["targets"])
    if report.get("failure"):
        lines.append("")
        lines.append("FAILED: %s" % report["failure"])
    lines.append("")
    return "\n".join(lines)


def ledger_rows_table(rows):
    lines = ["| Scenario | Apple latency | Conc. | Ledger | req/s | ×SQLite | p50 ms | p99 ms | non-2xx | socket err "
             "| TwoBits CPU µs/req | ×SQLite | PostgreSQL CPU µs/req | machine CPU (PostgreSQL share) | peak RSS MB | threads | dev JWTs |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lite = row["results"].get("sqlite")
        for name, r in row["results"].items():
            rps_ratio = r["requests_per_second"] / lite["requests_per_second"] if lite and lite["requests_per_second"] else None
            cpu_ratio = (r["server_cpu_us_per_request"] / lite["server_cpu_us_per_request"]
                         if lite and r["server_cpu_us_per_request"] and lite["server_cpu_us_per_request"] else None)
            pg_share = r["cpu_share_pct"].get("postgres")
            lines.append("| %s | %d ms | %d | %s | %s | %s | %s | %s | %d | %d | %s | %s | %s | %s%% (%s) | %s | %d | %s |" % (
                r["route"], r["latency_ms"], r["concurrency"], LEDGER_LABELS.get(name, name), fmt(r["requests_per_second"]),
                fmt(rps_ratio, 2), fmt(r["latency_p50_ms"], 1), fmt(r["latency_p99_ms"], 1), r["non_2xx"], r["socket_errors"],
                fmt(r["server_cpu_us_per_request"], 0), fmt(cpu_ratio, 2), fmt(r.get("postgres_cpu_us_per_request"), 0),
                fmt(r["machine_cpu_busy_pct"], 0), "%.0f%%" % pg_share if pg_share is not None else "-", fmt(r["server_peak_rss_mb"], 0),
                r["server_threads_max"], fmt(r["developer_jwts_total"])))
    return lines


def write_report(report, table, output):
    """Writes the report as JSON to `output` and its table as Markdown beside it, prints the table."""
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w") as f:
        json.dump(report, f, indent=2)
    md_path = os.path.splitext(output)[0] + ".md"
    with open(md_path, "w") as f:
        f.write(table)
    print(table)
    log("wrote %s and %s in %.0f s" % (os.path.relpath(output, ROOT) if output.startswith(ROOT) else output,
                                       os.path.basename(md_path), report["elapsed_s"]))


def write_readme(table, start_marker=README_START, end_marker=README_END, heading="Latest results"):
    """Replaces what lies between the two markers in Benchmarks/README.md with `table` (a section under `heading`
    at the end when the markers are missing)."""
    try:
        with open(README) as f:
            text = f.read()
    except FileNotFoundError:
        text = "# TwoBits benchmarks\n"
    if start_marker not in text or end_marker not in text:
        text = text.rstrip("\n") + "\n\n## %s\n\n%s\n%s\n" % (heading, start_marker, end_marker)
    start = text.index(start_marker) + len(start_marker)
    end = text.index(end_marker)
    text = text[:start] + "\n" + table + text[end:]
    with open(README, "w") as f:
        f.write(text)
    log("updated %s" % os.path.relpath(README, ROOT))

"""bench.py's command line: options, the races, the report, the smoke run's verdict and the exit code."""

import argparse
import datetime
import os
import shutil
import signal
import time

from .common import RESULTS_DIR, ROOT, BenchError, log
from .harness import Bench
from .link import LINKS, link_problems, tls_preflight
from .micro import run_micro_benchmarks
from .peers import build_go_peer
from .procfs import machine_description
from .processes import tail
from .report import LEDGERS_END, LEDGERS_START, ledger_markdown, markdown, write_readme, write_report
from .scenarios import PEER_SCENARIOS, SCENARIOS
from .targets import compare_with_peer, evaluate_targets, ledger_targets


def parse_list(text, kind, allowed=None):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if allowed is not None:
        for x in items:
            if x not in allowed:
                raise SystemExit("bench.py: unknown %s %r (choose from %s)" % (kind, x, ", ".join(allowed)))
        return items
    try:
        return [int(x) for x in items]
    except ValueError:
        raise SystemExit("bench.py: --%s takes comma-separated whole numbers" % kind)


def parser():
    p = argparse.ArgumentParser(description="TwoBits load benchmark (see Benchmarks/README.md)")
    p.add_argument("--duration", type=int, default=8, help="seconds per run (default 8)")
    p.add_argument("--smoke", action="store_true", help="one 3 s run per scenario at 50 ms, concurrency 64; fails on any error")
    p.add_argument("--scenarios", help="comma-separated: " + ", ".join(SCENARIOS) + " (default all; fallback,claim with --compare-ledgers)")
    p.add_argument("--latencies", help="sandbox latencies in ms (default 0,50,200; 50 with --compare-ledgers)")
    p.add_argument("--concurrency", help="connections (default 64,256,512,2048; 512 with --compare-ledgers)")
    p.add_argument("--ledger", choices=["sqlite", "postgres"], default="sqlite",
                   help="TwoBits' ledger (default sqlite); postgres: a cluster of bench.py's own (.ci/postgres.sh) or --postgres")
    p.add_argument("--postgres", metavar="URI", help="run PostgreSQL targets against this cluster instead of starting one")
    p.add_argument("--replicas", type=int, default=1, help="twobits serve processes on one configuration (needs --ledger postgres)")
    p.add_argument("--database-pool-size", type=int, help="database_pool_size in the configuration (default: the service's)")
    p.add_argument("--database-pipelines", type=int, help="database_pipelines in the configuration (default: the service's)")
    p.add_argument("--replica-pipelines", type=int,
                   help="database_pipelines of each replica when there are several (default: --database-pipelines, or the service's 2, divided among them)")
    p.add_argument("--replica-threads", type=int,
                   help="server.threads of each replica when there are several (default: --server-threads divided among them)")
    p.add_argument("--compare-ledgers", action="store_true",
                   help="the ledger comparison: only TwoBits on SQLite, on PostgreSQL and two replicas on one PostgreSQL, back to back "
                        "(fallback and claim at 50 ms, 512 connections; no Go peer); writes results/ledgers.json")
    p.add_argument("--write-readme", action="store_true", help="replace the results section of Benchmarks/README.md")
    p.add_argument("--no-es256", action="store_true", help="skip the ES256 and App Attest micro-benchmarks")
    p.add_argument("--es256-seconds", type=int, default=3)
    p.add_argument("--wrk-threads", type=int, default=2, help="wrk threads (default 2)")
    p.add_argument("--server-threads", type=int, default=2, help="server.threads in the configuration (default 2)")
    p.add_argument("--wake-coalescing-us", type=int, help="server.wake_coalescing_us in the configuration "
                   "(default: the service's)")
    p.add_argument("--repeat", type=int, default=1,
                   help="run the whole bench this many times, each from a fresh sandbox and fresh servers (default 1); "
                        "the targets against the Go peer are judged on the median of a row's races")
    p.add_argument("--settle", type=float, default=1.0, help="seconds to pause before each run")
    p.add_argument("--output", help="JSON report path (default results/latest.json; results/ledgers.json with --compare-ledgers)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, configuration)")
    p.add_argument("--peer", choices=["go"], help="race each fallback, claim and JWKS run against this peer "
                   "(default: go, except with --smoke)")
    p.add_argument("--no-peer", action="store_true", help="TwoBits alone (no Go needed)")
    p.add_argument("--apple-link", choices=LINKS, default="plain",
                   help="how both servers reach the sandbox: plain HTTP/1.1 (default), or through the TLS fake Apple "
                        "(Tests/tls/fake_apple.py: nginx, TLS 1.3, Apple's host names, certificates verified) with HTTP/2 "
                        "by ALPN (tls-h2) or HTTP/1.1 only (tls-h1); needs root and nginx")
    return p


class Plan:
    """What one invocation runs: its scenarios, latencies, concurrencies, duration and peer."""

    def __init__(self, args):
        # The smoke run (what `make test` runs) must not need Go: no peer there unless asked for.
        self.peer = None if args.no_peer else (args.peer or (None if args.smoke else "go"))
        self.compare = args.compare_ledgers
        if self.compare:
            self.peer = None
            args.no_es256 = True
        if args.replicas < 1 or args.replicas > 8:
            raise SystemExit("bench.py: --replicas must be 1-8")
        if args.replicas > 1 and args.ledger != "postgres" and not self.compare:
            raise SystemExit("bench.py: replicas share one ledger: --replicas needs --ledger postgres")
        if args.output is None:
            args.output = os.path.join(RESULTS_DIR, "ledgers.json" if self.compare else "latest.json")
        self.scenarios = parse_list(args.scenarios or ("fallback,claim" if self.compare else ",".join(SCENARIOS)), "scenario", list(SCENARIOS))
        self.latencies = parse_list(args.latencies or ("50" if self.compare else "0,50,200"), "latencies")
        self.concurrencies = parse_list(args.concurrency or ("512" if self.compare else "64,256,512,2048"), "concurrency")
        self.duration = args.duration
        if args.smoke:
            self.latencies, self.concurrencies, self.duration = [50], [64], 3
            # Several replicas: a wrk thread per replica at least.
            args.wrk_threads = max(args.wrk_threads, args.replicas)
            args.no_es256 = True
            args.settle = min(args.settle, 0.3)
        if args.repeat < 1 or args.repeat > 20:
            raise SystemExit("bench.py: --repeat must be 1-20")
        if self.duration < 1 or self.duration > 600:
            raise SystemExit("bench.py: --duration must be 1-600")
        if any(c < 1 or c > 10000 for c in self.concurrencies) or any(l < 0 or l > 60000 for l in self.latencies):
            raise SystemExit("bench.py: concurrency must be 1-10000 and latency 0-60000 ms")
        self.link = args.apple_link
        self.peer_binary = self.peer_version = None


def preflight(plan):
    """The twobits binary, wrk and openssl, and the Go peer built when one races. Returns the binary."""
    binary = os.environ.get("TWOBITS_BIN") or os.path.join(ROOT, ".build", "release", "twobits")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise SystemExit("bench.py: no twobits binary at %s (run `make release` or set TWOBITS_BIN)" % binary)
    for tool in ("wrk", "openssl"):
        if not shutil.which(tool):
            raise SystemExit("bench.py: %s is not installed (apt-get install -y %s, or .ci/install-deps.sh --bench)" % (tool, tool))
    if plan.link != "plain":
        why = tls_preflight()
        if why:
            raise SystemExit("bench.py: --apple-link %s: %s" % (plan.link, why))
    if plan.peer and not any(s in PEER_SCENARIOS for s in plan.scenarios):
        plan.peer = None
    if plan.peer == "go":
        try:
            plan.peer_binary, plan.peer_version = build_go_peer()
        except BenchError as error:
            raise SystemExit("bench.py: cannot build the Go peer: %s" % error)
    return binary


class Outcome:
    """What the races produced: the matrix's runs or the ledger comparison's rows, and how it ended."""

    def __init__(self):
        self.runs = []
        self.ledger_rows = []  # --compare-ledgers: {"scenario", "latency_ms", "concurrency", "results": {target: run}}
        self.failure = None
        self.token_seconds = 0.0
        self.server_err = self.peer_err = ""
        self.row = 0  # rows raced so far: who goes first alternates from row to row


def run_races(args, plan, binary):
    outcome = Outcome()
    try:
        for race in range(args.repeat):
            run_race(args, plan, binary, race, outcome)
    except BenchError as error:
        outcome.failure = str(error)
        log("FAILED: %s" % outcome.failure)
    except KeyboardInterrupt as error:
        outcome.failure = "interrupted (%s)" % (error or "Ctrl-C")
        log(outcome.failure)
    return outcome


def run_race(args, plan, binary, race, outcome):
    """One race is a bench of its own: a fresh sandbox (its token table grows with every run), fresh servers and
    ledgers, as a separate invocation would have."""
    bench = Bench(args, binary, plan.peer_binary)
    try:
        bench.setup()
        # 0 ms first: it shows each scenario's CPU-bound rate, which sizes the token pools of later runs.
        for scenario in plan.scenarios:
            bench.start_servers(scenario)
            targets = bench.targets(scenario)
            for latency in sorted(plan.latencies):
                for concurrency in plan.concurrencies:
                    run_row(bench, plan, targets, scenario, latency, concurrency, race, outcome)
    finally:
        outcome.server_err = tail(bench.twobits.err_path) if bench.twobits else ""
        outcome.peer_err = tail(bench.peer.err_path) if bench.peer else ""
        outcome.token_seconds += bench.token_seconds
        bench.close()


def run_row(bench, plan, targets, scenario, latency, concurrency, race, outcome):
    # The peer races TwoBits back to back under the same load; who goes first alternates, so drift during the
    # bench (the sandbox's growing token table, other load) favours neither.
    order = targets if outcome.row % 2 == 0 else targets[::-1]
    outcome.row += 1
    results = {t.name: bench.run_measured(t, scenario, latency, concurrency, plan.duration) for t in order}
    if plan.compare:
        outcome.ledger_rows.append({"scenario": scenario, "latency_ms": latency, "concurrency": concurrency,
                                    "results": {t.name: results[t.name] for t in targets}})
        return
    result = results["twobits"]
    result["race"] = race + 1
    if "go" in results:
        compare_with_peer(result, results["go"])
    outcome.runs.append(result)


def build_report(args, plan, binary, started, machine, es256, app_attest, outcome):
    peer = plan.peer
    return {
        "finished_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": round(time.monotonic() - started, 1),
        "token_minting_s": round(outcome.token_seconds, 1),
        "smoke": args.smoke,
        "duration_s": plan.duration,
        "machine": machine,
        "loadavg_at_end": round(os.getloadavg()[0], 2),
        "binary": binary,
        "peer": {"name": peer, "binary": plan.peer_binary, "version": plan.peer_version,
                 "scenarios": [s for s in plan.scenarios if s in PEER_SCENARIOS]} if peer else None,
        "es256": es256,
        "app_attest": app_attest,
        "ledger": "compare" if plan.compare else args.ledger,
        "apple_link": plan.link,
        "replicas": args.replicas,
        "runs": outcome.runs,
        "ledger_comparison": outcome.ledger_rows,
        "failure": outcome.failure,
        "server_stderr_tail": outcome.server_err,
        "peer_stderr_tail": outcome.peer_err,
    }


def smoke_problems(args, plan, outcome):
    """Everything that fails a smoke run: errors, tokens run out, no requests, developer JWTs, missing runs."""
    problems = []
    # Comparing ledgers, every target's runs are checked alike.
    checked = outcome.runs + [r for row in outcome.ledger_rows for r in row["results"].values()]
    for r in checked:
        if r["non_2xx"] or r["socket_errors"]:
            problems.append("%s: %d non-2xx, %d socket errors (server statuses %s)" % (r["scenario"], r["non_2xx"], r["socket_errors"], r["server_statuses"]))
        if r["token_wraps"]:
            problems.append("%s: ran out of pre-minted tokens" % r["scenario"])
        peer = r.get("peer")
        if peer and (peer["non_2xx"] or peer["socket_errors"] or peer["token_wraps"] or not peer["requests"]):
            problems.append("%s, Go peer: %d non-2xx, %d socket errors, %d token wraps, %d requests (statuses %s)" % (
                r["scenario"], peer["non_2xx"], peer["socket_errors"], peer["token_wraps"], peer["requests"], peer["server_statuses"]))
        if r["requests"] == 0:
            problems.append("%s: no requests completed" % r["scenario"])
        # Over TLS: the calls went through the terminator, over the link's HTTP version, and were answered.
        if SCENARIOS[r["scenario"]][2]:
            for name, x in (("", r), ("Go peer, ", peer)):
                if x:
                    problems += ["%s%s over %s: %s" % (name, r["scenario"], plan.link, p) for p in link_problems(plan.link, x.get("link"), r["concurrency"])]
    # One developer JWT per refresh period per process: a replica signs its own.
    for server in sorted(set(r["server"] for r in checked)):
        replicas = max(r["replicas"] for r in checked if r["server"] == server)
        jwts = max([r["developer_jwts_total"] or 0 for r in checked if r["server"] == server] or [0])
        if any(SCENARIOS[s][2] for s in plan.scenarios) and jwts != replicas:
            problems.append("%s: the sandbox saw %d distinct developer JWTs, not %d" % (server, jwts, replicas))
    expected = len(plan.scenarios) * (3 if plan.compare else 1) * args.repeat
    if len(checked) != expected:
        problems.append("only %d of %d runs completed" % (len(checked), expected))
    return problems


def on_signal(signum, frame):
    """SIGTERM/SIGHUP unwind through the finally blocks like Ctrl-C."""
    raise KeyboardInterrupt("signal %d" % signum)


def main(argv):
    args = parser().parse_args(argv)
    plan = Plan(args)
    binary = preflight(plan)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    started = time.monotonic()
    machine = machine_description()
    es256, app_attest = run_micro_benchmarks(args, binary)
    outcome = run_races(args, plan, binary)
    report = build_report(args, plan, binary, started, machine, es256, app_attest, outcome)
    if plan.compare:
        report["targets"] = ledger_targets(outcome.ledger_rows)
        table = ledger_markdown(report)
    else:
        report["targets"] = evaluate_targets(outcome.runs, es256, args.smoke, app_attest)
        table = markdown(report)
    write_report(report, table, args.output)
    if args.write_readme and not outcome.failure and not args.smoke:
        if plan.compare:
            write_readme(table, LEDGERS_START, LEDGERS_END, "Ledgers: SQLite, PostgreSQL, two replicas")
        else:
            write_readme(table)

    if outcome.failure:
        return 1
    if args.smoke:
        problems = smoke_problems(args, plan, outcome)
        if problems:
            for problem in problems:
                log("SMOKE FAILED: " + problem)
            return 1
        log("smoke OK")
    return 0

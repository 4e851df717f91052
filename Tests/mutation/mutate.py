#!/usr/bin/env python3
"""Mutation runner: plants each one-line defect of the catalogue and checks that a test fails.

Reads every `Tests/mutation/*.json` (a list of {"id", "file", "find", "replace", "breaks", "tests"}).
Works in a copy of the checkout without `.build` (default /tmp/twobits-mutate/src, kept between runs so
later builds are incremental), builds once, then for each mutant:

1. checks that `find` occurs exactly once in `file` (else the entry is reported `broken`);
2. applies the replacement; when a `Sources/C*/shim.h` changed, touches the Swift files importing that
   module (SwiftPM does not rebuild them for a module map's header change: the mutant would never be
   compiled). Those headers only include Debian's now: TwoBits' own C is in the `.c` files of its C targets
   (`Sources/C*Shims`, `CEventLoop`, `CBuildInfo`), which SwiftPM recompiles and relinks like any source;
3. builds (`swift build --build-tests`); a mutant that does not compile counts as killed but is reported
   `compile-error` (fix its entry so it compiles and a test, not the compiler, kills it);
4. runs the mutant's `tests` hints (Swift `--filter` patterns, and pytest node ids `Tests/python/...py::name`
   against the release binary); only if they all pass, the whole Swift suite and the whole Python suite;
5. records killed / survived and the first failing test, restores the file (and touches again).

Usage: mutate.py [--list] [--only ID[,ID...]] [--catalogue core.json] [--jobs 1] [--hints-only] [--no-baseline]
                 [--baseline-python] [--workdir DIR] [--report FILE]
The Swift hints of the selected mutants are first run once on the unmutated copy (the baseline): a hint
that fails there would "kill" every mutant for nothing, so the run stops. Swift hints run before pytest
hints, so a mutant a Swift test kills never costs a release build.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKIP_NAMES = {".git", ".build", "run", "__pycache__", ".pytest_cache", ".venv"}
SKIP_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".db", ".profraw")
SWIFT = os.environ.get("SWIFT", "swift")
# The copy under /tmp has no ../shared beside it: point the vector suites at the checkout's (docs/testing.md).
if (REPO.parent / "shared" / "vectors").is_dir():
    os.environ.setdefault("TWOBITS_VECTORS_DIR", str(REPO.parent / "shared" / "vectors"))
HINT_TIMEOUT = 900
FULL_TIMEOUT = 3600


def log(message):
    print(message, flush=True)


def load_catalogue():
    entries, problems = [], []
    for path in sorted(glob.glob(str(REPO / "Tests" / "mutation" / "*.json"))):
        try:
            items = json.loads(Path(path).read_text())
        except ValueError as error:
            problems.append(f"{Path(path).name}: not JSON ({error})")
            continue
        for item in items:
            item["catalogue"] = Path(path).name
            entries.append(item)
    seen = set()
    for e in entries:
        missing = [k for k in ("id", "file", "find", "replace") if not isinstance(e.get(k), str)]
        if missing:
            problems.append(f"{e.get('id', '?')} ({e['catalogue']}): missing {missing}")
        if e.get("id") in seen:
            problems.append(f"{e['id']}: duplicate id")
        seen.add(e.get("id"))
        e.setdefault("tests", [])
    return entries, problems


def skipped(name):
    return name in SKIP_NAMES or name.startswith(".build") or name.endswith(SKIP_SUFFIXES)


def sync(source, target):
    """Mirrors `source` into `target` without `.build*`/.git, rewriting only files whose bytes differ
    (unchanged files keep their modification times, so the copy's builds stay incremental)."""
    target.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(source):
        rel = Path(root).relative_to(source)
        dirs[:] = [d for d in dirs if not skipped(d)]
        out = target / rel
        out.mkdir(parents=True, exist_ok=True)
        wanted = set(dirs) | {f for f in files if not skipped(f)}
        for existing in os.listdir(out):
            if existing not in wanted and not (rel == Path(".") and skipped(existing)):
                p = out / existing
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
        for f in files:
            if skipped(f):
                continue
            src, dst = Path(root) / f, out / f
            data = src.read_bytes()
            if not dst.exists() or dst.read_bytes() != data:
                dst.write_bytes(data)
                shutil.copymode(src, dst)


def source_commit():
    """The commit of the repository the copy was made from (the package test wants a known one)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout
        return out.strip() or "mutation"
    except (OSError, subprocess.CalledProcessError):
        return "mutation"


def run(cmd, cwd, timeout, env=None):
    """(returncode or 'timeout', combined output). On a timeout the whole process group is killed: `swift test`
    runs the tests in a child process, which a mutant can send into an endless loop, and which would otherwise
    outlive the run and keep a core busy."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return "timeout", out or ""
    except BaseException:
        # Interrupted (Ctrl-C): take the tests down with us.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise


def first_failure(output):
    """The failing tests named in swift-testing, XCTest or pytest output: the first, and how many others."""
    names = []
    for pattern in (r"✘ Test (\S.*?) (?:recorded an issue|failed)", r"Test Case '([^']+)' failed", r"^FAILED (\S+)", r"^ERROR (\S+)"):
        for m in re.finditer(pattern, output, re.M):
            if m.group(1) not in names:
                names.append(m.group(1))
    if not names:
        m = re.search(r"error: (.*)", output)
        return m.group(1)[:120] if m else "(no test named; see log)"
    return names[0][:100] + (f" (+{len(names) - 1} more)" if len(names) > 1 else "")


class Workspace:
    def __init__(self, workdir):
        self.root = Path(workdir)
        self.src = self.root / "src"
        self.logs = self.root / "logs"
        self.release_fresh = False

    def prepare(self):
        log(f"syncing {REPO} -> {self.src}")
        sync(REPO, self.src)
        # The copy has no .git: its builds name the source commit, as the package test's binary does.
        subprocess.run(["bash", ".ci/build-commit.sh"], cwd=self.src, check=True,
                       env=dict(os.environ, TWOBITS_GIT_COMMIT=source_commit() + "-mutant"))
        self.logs.mkdir(parents=True, exist_ok=True)

    def build(self, label):
        rc, out = run([SWIFT, "build", "--build-tests"], self.src, 3600)
        (self.logs / f"{label}.build.log").write_text(out)
        self.release_fresh = False
        return rc == 0, out

    def build_release(self, label):
        if self.release_fresh:
            return True, ""
        rc, out = run([SWIFT, "build", "-c", "release"], self.src, 3600)
        (self.logs / f"{label}.release.log").write_text(out)
        self.release_fresh = rc == 0
        return rc == 0, out

    def swift_tests(self, filters, label, timeout):
        cmd = [SWIFT, "test", "--skip-build", "--no-parallel"]
        if filters:
            cmd += ["--filter", "|".join(f"(?:{f})" for f in filters)]
        rc, out = run(cmd, self.src, timeout)
        (self.logs / f"{label}.swift.log").write_text(out)
        # A filter that matches nothing passes silently: count what ran.
        return rc, out

    def python_tests(self, nodes, label, timeout):
        ok, out = self.build_release(label)
        if not ok:
            return 1, "release build failed\n" + out
        # The copy has no .git: the package test's binary would say "commit unknown" and fail every mutant
        # that reaches the whole suite, for nothing. It carries the source repository's commit instead.
        env = dict(os.environ, TWOBITS_BIN=str(self.src / ".build" / "release" / "twobits"), PYTHONDONTWRITEBYTECODE="1",
                   TWOBITS_GIT_COMMIT=source_commit() + "-mutant")
        rc, out = run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"] + (nodes or ["Tests/python"]), self.src, timeout, env)
        (self.logs / f"{label}.python.log").write_text(out)
        return rc, out

    def touch_importers(self, module):
        for path in list(self.src.glob("Sources/**/*.swift")) + list(self.src.glob("Tests/**/*.swift")):
            if re.search(rf"^\s*(?:@\S+\s+)?import {re.escape(module)}\b", path.read_text(errors="replace"), re.M):
                path.touch()


def split_hints(tests):
    python = [t for t in tests if ".py" in t]
    swift = [t for t in tests if ".py" not in t]
    # Catalogues may write tests/python/...: the folder is Tests/python.
    python = [re.sub(r"^tests/python/", "Tests/python/", t) for t in python]
    return swift, python


def shim_module(file):
    m = re.match(r"Sources/(C[A-Za-z0-9]+)/shim\.h$", file)
    return m.group(1) if m else None


def run_hints(ws, swift, python, label):
    """None when every hint passed; else (failing test, kind)."""
    if swift:
        rc, out = ws.swift_tests(swift, label, HINT_TIMEOUT)
        if rc == "timeout":
            return "timeout in " + "|".join(swift)[:100]
        if rc != 0:
            return first_failure(out)
        if not re.search(r"Test run with [1-9]\d* tests? .*passed|Executed [1-9]\d* tests?", out):
            return None if "--allow-empty" in sys.argv else "NO-TESTS-MATCHED"
    if python:
        rc, out = ws.python_tests(python, label, HINT_TIMEOUT)
        if rc == "timeout":
            return "timeout in " + python[0]
        if rc != 0:
            return first_failure(out)
    return None


def mutate_one(ws, entry, hints_only):
    path = ws.src / entry["file"]
    started = time.monotonic()
    result = {"id": entry["id"], "catalogue": entry["catalogue"], "file": entry["file"]}
    if not path.exists():
        return dict(result, status="broken", by="file missing", seconds=0.0)
    original = path.read_text()
    count = original.count(entry["find"])
    if count != 1:
        return dict(result, status="broken", by=f"find occurs {count} times", seconds=0.0)
    module = shim_module(entry["file"])
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", entry["id"])
    try:
        path.write_text(original.replace(entry["find"], entry["replace"], 1))
        if module:
            ws.touch_importers(module)
        ok, out = ws.build(label)
        if not ok:
            m = re.search(r"error: (.*)", out)
            return dict(result, status="compile-error", by=(m.group(1) if m else "build failed")[:120], seconds=time.monotonic() - started)
        swift, python = split_hints(entry["tests"])
        failure = run_hints(ws, swift, python, label)
        if failure == "NO-TESTS-MATCHED":
            return dict(result, status="broken", by="its Swift filter matched no test", seconds=time.monotonic() - started)
        if failure:
            return dict(result, status="killed", by=failure, stage="hint", seconds=time.monotonic() - started)
        if hints_only:
            return dict(result, status="survived", by="(hints only)", seconds=time.monotonic() - started)
        rc, out = ws.swift_tests([], label + ".full", FULL_TIMEOUT)
        if rc != 0:
            return dict(result, status="killed", by=first_failure(out) if rc != "timeout" else "timeout (swift suite)", stage="swift suite",
                        seconds=time.monotonic() - started)
        rc, out = ws.python_tests([], label + ".full", FULL_TIMEOUT)
        if rc != 0:
            return dict(result, status="killed", by=first_failure(out) if rc != "timeout" else "timeout (python suite)", stage="python suite",
                        seconds=time.monotonic() - started)
        return dict(result, status="survived", by="", seconds=time.monotonic() - started)
    finally:
        path.write_text(original)
        if module:
            ws.touch_importers(module)
        ws.release_fresh = False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    parser.add_argument("--only", action="append", default=[], help="mutant id(s), comma-separated; repeatable")
    parser.add_argument("--catalogue", action="append", default=[], help="only entries of this catalogue file (e.g. core.json)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants at a time (only 1: the build folder is shared)")
    parser.add_argument("--hints-only", action="store_true", help="do not run the whole suites when the hints pass")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the hints on the unmutated copy first")
    parser.add_argument("--baseline-python", action="store_true", help="also run the pytest hints on the unmutated copy (a release build)")
    parser.add_argument("--allow-empty", action="store_true", help="a Swift filter matching no test is not an error")
    parser.add_argument("--workdir", default=os.environ.get("MUTATE_WORKDIR", "/tmp/twobits-mutate"))
    parser.add_argument("--report", help="write the results as JSON to this file")
    args = parser.parse_args()
    if args.jobs != 1:
        parser.error("--jobs: only 1 is supported (every mutant rebuilds the same copy)")

    entries, problems = load_catalogue()
    for p in problems:
        log(f"catalogue problem: {p}")
    if args.list:
        for e in entries:
            log(f"{e['id']:<40} {e['catalogue']:<14} {e['file']}\n    breaks: {e.get('breaks', '')}\n    tests: {', '.join(e['tests'])}")
        log(f"{len(entries)} mutants")
        return 0 if not problems else 1
    only = {i for o in args.only for i in o.split(",") if i}
    if only:
        unknown = only - {e["id"] for e in entries}
        if unknown:
            parser.error(f"unknown ids: {sorted(unknown)}")
        entries = [e for e in entries if e["id"] in only]
    if args.catalogue:
        entries = [e for e in entries if e["catalogue"] in args.catalogue]

    ws = Workspace(args.workdir)
    started = time.monotonic()
    ws.prepare()
    log("building the unmutated copy")
    ok, out = ws.build("baseline")
    if not ok:
        log(out[-3000:])
        log("the unmutated copy does not build")
        return 2
    if not args.no_baseline:
        swift = sorted({t for e in entries for t in split_hints(e["tests"])[0]})
        # Python hints need a release build; they are checked only with --baseline-python.
        python = sorted({t for e in entries for t in split_hints(e["tests"])[1]}) if args.baseline_python else []
        log(f"baseline: {len(swift)} Swift filters, {len(python)} pytest ids on the unmutated copy")
        failure = run_hints(ws, swift, python, "baseline")
        if failure:
            log(f"baseline fails ({failure}): logs in {ws.logs}; fix the tests or the hints first")
            return 2
    results = []
    for n, entry in enumerate(entries, 1):
        r = mutate_one(ws, entry, args.hints_only)
        results.append(r)
        log(f"[{n}/{len(entries)}] {r['id']}: {r['status']} {('by ' + r['by']) if r['by'] else ''} ({r['seconds']:.0f} s)")
    # Leave the copy built unmutated, so the next run starts incremental from a clean state.
    ws.build("restored")

    elapsed = time.monotonic() - started
    log("")
    log(f"{'mutant':<40} {'result':<14} {'seconds':>7}  first failing test / note")
    for r in results:
        log(f"{r['id']:<40} {r['status']:<14} {r['seconds']:>7.0f}  {r['by']}")
    counted = [r for r in results if r["status"] != "broken"]
    killed = [r for r in counted if r["status"] in ("killed", "compile-error")]
    by_status = {s: sum(1 for r in results if r["status"] == s) for s in ("killed", "compile-error", "survived", "broken")}
    score = 100.0 * len(killed) / len(counted) if counted else 0.0
    log("")
    log(f"score: {len(killed)}/{len(counted)} killed ({score:.1f}%): {by_status['killed']} by a test, "
        f"{by_status['compile-error']} by the compiler, {by_status['survived']} survived, {by_status['broken']} broken entries")
    log(f"time: {elapsed:.0f} s in all, {elapsed / max(1, len(results)):.0f} s per mutant; logs in {ws.logs}")
    if args.report:
        Path(args.report).write_text(json.dumps({"results": results, "score": score, "seconds": elapsed}, indent=2))
    return 0 if by_status["survived"] == 0 and by_status["broken"] == 0 and by_status["compile-error"] == 0 and not problems else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# `make coverage`: line coverage of the product modules by the Swift suite and the Python suites together.
#
# Builds with --enable-code-coverage in its own scratch path (.build-cov), runs the Swift suite and the
# Python suites against the instrumented debug `twobits` binary, each process writing its own profile
# (LLVM_PROFILE_FILE=…/%p.profraw), merges them with the toolchain's llvm-profdata (next to `swift`:
# Debian's LLVM is too old for its profiles) and prints line coverage per product module with the
# toolchain's llvm-cov. The per-file report is written to .build-cov/coverage/report.txt.
# The suites run beside a throw-away PostgreSQL cluster (.ci/postgres.sh), as in `make test`, with
# TWOBITS_REQUIRE_POSTGRES=1, so the PostgreSQL suites run and count instead of skipping: after the build the
# script runs itself again under `.ci/postgres.sh run` unless TWOBITS_TEST_POSTGRES names a cluster already.
# A failing test does not stop the run (its coverage still counts); the exit status says whether any failed.
# COVERAGE_SUITES="swift python" (default) picks the suites to run again; the other's profiles are kept.
set -uo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
SCRATCH=${COVERAGE_SCRATCH:-.build-cov}
TOOLS=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")
OUT=$SCRATCH/coverage
PROFILES=$OUT/profiles

if [[ -z "${TWOBITS_TEST_POSTGRES:-}" ]]; then
    "$SWIFT" build --build-tests --enable-code-coverage --scratch-path "$SCRATCH" || exit 2
    # The cluster starts only now, not idle through the build; the run again skips the (done) build.
    exec .ci/postgres.sh run -- env TWOBITS_COVERAGE_BUILT=1 "$PWD/Tests/coverage/coverage.sh" "$@"
fi
export TWOBITS_REQUIRE_POSTGRES=1
export TWOBITS_REQUIRE_VECTORS=1
if [[ -z "${TWOBITS_COVERAGE_BUILT:-}" ]]; then
    "$SWIFT" build --build-tests --enable-code-coverage --scratch-path "$SCRATCH" || exit 2
fi
BIN=$("$SWIFT" build --enable-code-coverage --scratch-path "$SCRATCH" --show-bin-path)
SUITES=${COVERAGE_SUITES:-swift python}
mkdir -p "$PROFILES"
failed=0

if [[ " $SUITES " == *" swift "* ]]; then
    echo "== Swift suite (instrumented)"
    rm -f "$PROFILES"/swift-*.profraw
    LLVM_PROFILE_FILE="$PWD/$PROFILES/swift-%p.profraw" \
        "$SWIFT" test --skip-build --no-parallel --scratch-path "$SCRATCH" > "$OUT/swift-tests.log" 2>&1 || { failed=1; echo "   some Swift tests failed: $OUT/swift-tests.log"; }
    grep -E "(✔|✘) Test run" "$OUT/swift-tests.log" | tail -1
fi

if [[ " $SUITES " == *" python "* ]]; then
    echo "== Python suites against $BIN/twobits (instrumented)"
    rm -f "$PROFILES"/python-*.profraw
    LLVM_PROFILE_FILE="$PWD/$PROFILES/python-%p.profraw" TWOBITS_BIN="$BIN/twobits" \
        python3 -m pytest -q -p no:cacheprovider Tests/python > "$OUT/python-tests.log" 2>&1 || { failed=1; echo "   some Python tests failed: $OUT/python-tests.log"; }
    tail -1 "$OUT/python-tests.log"
fi

shopt -s nullglob
raw=("$PROFILES"/*.profraw)
echo "== merging ${#raw[@]} profiles"
"$TOOLS/llvm-profdata" merge -sparse "${raw[@]}" -o "$OUT/merged.profdata" || exit 2
"$TOOLS/llvm-cov" report "$BIN/TwoBitsPackageTests.xctest" -object "$BIN/twobits" -instr-profile="$OUT/merged.profdata" \
    -ignore-filename-regex='(\.build[^/]*|Tests)/' > "$OUT/report.txt" || exit 2
echo "per-file report: $OUT/report.txt"

# Rows are "<path relative to Sources/> regions missed cover functions missed executed lines missed cover …".
python3 - "$OUT/report.txt" <<'PY'
import sys, collections
lines, missed = collections.Counter(), collections.Counter()
for row in open(sys.argv[1]):
    cols = row.split()
    if len(cols) < 10 or not cols[0].endswith((".swift", ".h", ".c")) or "/" not in cols[0]:
        continue
    module = cols[0].split("/")[0]
    lines[module] += int(cols[7]); missed[module] += int(cols[8])
print(f"{'module':<24} {'lines':>7} {'missed':>7} {'cover':>7}")
for m in sorted(lines, key=lambda m: (lines[m] - missed[m]) / max(1, lines[m])):
    print(f"{m:<24} {lines[m]:>7} {missed[m]:>7} {100 * (lines[m] - missed[m]) / max(1, lines[m]):>6.1f}%")
t, u = sum(lines.values()), sum(missed.values())
print(f"{'TOTAL':<24} {t:>7} {u:>7} {100 * (t - u) / max(1, t):>6.1f}%")
PY
exit $failed

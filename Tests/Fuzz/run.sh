#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets (this folder's package, with -sanitize=fuzzer,address) and
# runs each for FUZZ_SECONDS (default 60), printing one line per target. Seeds are read from
# Corpus/<target>/ (checked in); new corpus files and findings go under .build-fuzz/ (not checked in).
# FUZZ_TARGETS="FuzzJSON FuzzJWS" runs a subset; by default every target, one per Sources/Fuzz*/ folder
# but the shared FuzzDriver, so a new target cannot be left out. FUZZ_SCRATCH moves the build and its
# outputs (default: .build-fuzz at the checkout's root). Exit status 1 when any target found something.
set -uo pipefail
cd "$(dirname "$0")"
seconds=${FUZZ_SECONDS:-60}
every=$(for source in Sources/Fuzz*/; do name=$(basename "$source"); [ "$name" = FuzzDriver ] || printf '%s ' "$name"; done)
targets=${FUZZ_TARGETS:-$every}
scratch=${FUZZ_SCRATCH:-$(cd ../.. && pwd)/.build-fuzz}
# (gold warns once per ASan helper symbol that it cannot export; those lines are dropped.)
swift build --package-path . --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library 2>&1 \
    | grep -v "Cannot export local symbol" | tail -n 5
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 2
bin=$(swift build --package-path . --scratch-path "$scratch" --show-bin-path)
# The Swift runtime's backtracer trips ASan after a fatalError (a report about its own reads); libFuzzer prints the stack.
export SWIFT_BACKTRACE=enable=no
found=0
printf '%-18s %12s %8s %8s %8s %6s %9s\n' target executions exec/s cov ft new findings
for target in $targets; do
    work="$scratch/corpus/$target"; artifacts="$scratch/findings/$target/"
    mkdir -p "$work" "$artifacts"
    before=$(ls "$work" | wc -l)
    log="$scratch/$target.log"
    # -timeout: no input may take a second (linear time); -rss_limit_mb: nor a large share of memory.
    "$bin/$target" -max_total_time="$seconds" -timeout=1 -rss_limit_mb=1024 -max_len=16384 \
        -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "Corpus/$target" >"$log" 2>&1
    status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    new=$(( $(ls "$work" | wc -l) - before ))
    findings=$(ls "$artifacts" | wc -l)
    printf '%-18s %12s %8s %8s %8s %6s %9s\n' "$target" "${executions:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$new" "$findings"
    if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ]; then
        found=1
        echo "  $target exited $status; log: $log; findings: $artifacts" >&2
        grep -m3 -E 'Fatal error|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY' "$log" | sed 's/^/  /' >&2
    fi
done
exit $found

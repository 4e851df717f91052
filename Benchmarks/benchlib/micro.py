"""Micro-benchmarks beside the load: ES256 signing against `openssl speed`, App Attest verification."""

import json
import os
import re
import shutil

from .common import ROOT, BenchError, log
from .processes import run_bounded


def es256_bench(binary, seconds):
    """TwoBits' ES256Signer (Benchmarks/ES256Bench) against `openssl speed -seconds N ecdsap256`."""
    result = {"openssl_seconds": seconds}
    try:
        _, out, err = run_bounded(["openssl", "speed", "-seconds", str(seconds), "ecdsap256"], seconds * 4 + 60)
        m = re.search(r"256 bits ecdsa \(nistp256\)\s+\S+\s+\S+\s+([0-9.]+)\s+([0-9.]+)", out)
        if not m:
            raise BenchError("cannot parse openssl speed output: %s" % out[-500:])
        result["openssl_signs_per_second"] = float(m.group(1))
        result["openssl_verifies_per_second"] = float(m.group(2))
        _, version, _ = run_bounded(["openssl", "version"], 10)
        result["openssl_version"] = version.strip()
    except BenchError as error:
        result["error"] = str(error)
        return result

    bench_bin = find_es256_binary(binary)
    if not bench_bin:
        result["error"] = ("ES256Bench is not built: add `.executableTarget(name: \"ES256Bench\", dependencies: [\"TwoBitsCrypto\"], "
                           "path: \"Benchmarks/ES256Bench\")` to Package.swift, or set ES256BENCH_BIN")
        return result
    try:
        _, out, _ = run_bounded([bench_bin, "--seconds", str(seconds)], seconds * 10 + 60)
        ours = json.loads(out.strip().splitlines()[-1])
    except (BenchError, ValueError, IndexError) as error:
        result["error"] = "ES256Bench failed: %s" % error
        return result
    # Both rates are per CPU second (openssl speed counts user CPU time unless given -elapsed).
    result["twobits_signs_per_second"] = ours["signs_per_second"]
    result["twobits_signs_per_wall_second"] = ours.get("signs_per_wall_second")
    result["twobits_input_bytes"] = ours["input_bytes"]
    result["ratio"] = round(ours["signs_per_second"] / result["openssl_signs_per_second"], 3)
    result["binary"] = bench_bin
    return result


def find_es256_binary(twobits_bin):
    return find_bench_binary(twobits_bin, "ES256Bench", "ES256BENCH_BIN")


def find_bench_binary(twobits_bin, product, variable):
    """A micro-benchmark executable: `variable` from the environment, beside twobits, or built (bounded)."""
    candidates = [os.environ.get(variable, ""), os.path.join(os.path.dirname(twobits_bin), product)]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    # Not next to twobits: build it when the package declares it (bounded), in the same scratch path.
    try:
        with open(os.path.join(ROOT, "Package.swift")) as f:
            declared = product in f.read()
    except OSError:
        declared = False
    if not declared or not shutil.which("swift"):
        return None
    scratch = os.path.dirname(os.path.dirname(os.path.realpath(twobits_bin)))
    log("building %s (swift build -c release --product %s --scratch-path %s)" % (product, product, scratch))
    try:
        run_bounded(["swift", "build", "-c", "release", "--product", product, "--scratch-path", scratch], 900, cwd=ROOT)
    except BenchError as error:
        log("cannot build %s: %s" % (product, error))
        return None
    built = os.path.join(scratch, "release", product)
    return built if os.path.isfile(built) else None


def app_attest_bench(binary, seconds):
    """CPU per App Attest attestation and assertion verification on a real capture (Benchmarks/AppAttestBench)."""
    bench_bin = find_bench_binary(binary, "AppAttestBench", "APPATTESTBENCH_BIN")
    if not bench_bin:
        return {"error": "AppAttestBench is not built (swift build -c release --product AppAttestBench)"}
    try:
        _, out, _ = run_bounded([bench_bin, "--seconds", str(seconds)], seconds * 10 + 60)
        result = json.loads(out.strip().splitlines()[-1])
    except (BenchError, ValueError, IndexError) as error:
        return {"error": "AppAttestBench failed: %s" % error}
    result["binary"] = bench_bin
    return result


def run_micro_benchmarks(args, binary):
    """(es256, app_attest): each None when skipped (--no-es256; App Attest also under --smoke)."""
    es256 = None
    if not args.no_es256:
        log("ES256 micro-benchmark (openssl speed, then TwoBits' signer; %d s each)" % args.es256_seconds)
        es256 = es256_bench(binary, args.es256_seconds)
        if "ratio" in es256:
            log("  TwoBits %.0f sign/s, OpenSSL %.0f sign/s: %.0f%%" % (es256["twobits_signs_per_second"], es256["openssl_signs_per_second"], 100 * es256["ratio"]))
        else:
            log("  %s" % es256.get("error"))
    app_attest = None
    if not args.no_es256 and not args.smoke:
        log("App Attest micro-benchmark (AppAttestBench, %d s each)" % args.es256_seconds)
        app_attest = app_attest_bench(binary, args.es256_seconds)
        log("  %s" % ({k: app_attest[k] for k in ("attestation_us", "assertion_us", "assertion_parsed_key_us") if k in app_attest} or app_attest.get("error")))
    return es256, app_attest

"""Paths, logging and the harness's one exception."""

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_DIR = os.path.join(ROOT, "Benchmarks")
WRK_DIR = os.path.join(BENCH_DIR, "wrk")
GOPEER_DIR = os.path.join(BENCH_DIR, "GoPeer")
GOPEER_BUILD = os.path.join(ROOT, ".build", "gopeer")
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
README = os.path.join(BENCH_DIR, "README.md")
POSTGRES_SCRIPT = os.path.join(ROOT, ".ci", "postgres.sh")


def log(message):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), message))
    sys.stderr.flush()


class BenchError(Exception):
    pass


def fmt(v, digits=0, none="n/a"):
    if v is None:
        return none
    if isinstance(v, float):
        return ("%%.%df" % digits) % v
    return str(v)


def median(values):
    """The middle value (the mean of the two middle ones for an even count); None for no values."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

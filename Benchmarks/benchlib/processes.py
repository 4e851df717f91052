"""Child processes, each in its own process group; bounded commands; waiting on a log line."""

import os
import re
import signal
import subprocess
import time

from .common import BenchError


class Processes:
    """Every child process, each in its own process group; stop_all() kills the groups."""

    def __init__(self):
        self.children = []

    def start(self, name, argv, stdout, stderr, cwd=None, env=None):
        proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, cwd=cwd, env=env,
                                start_new_session=True)
        self.children.append((name, proc))
        return proc

    def stop(self, proc, grace=5.0):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def forget(self, proc, grace=5.0):
        """Stops `proc` and drops it from the children stop_all() would stop."""
        self.stop(proc, grace)
        self.children = [c for c in self.children if c[1] is not proc]

    def stop_all(self):
        for name, proc in reversed(self.children):
            self.stop(proc)
        self.children = []


def run_bounded(argv, timeout, cwd=None, env=None, check=True):
    """Runs a short command in its own process group; kills the group when it overruns."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            cwd=cwd, env=env, start_new_session=True, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate(timeout=5)
        raise BenchError("%s took longer than %d s" % (" ".join(argv[:3]), timeout))
    if check and proc.returncode != 0:
        raise BenchError("%s exited %d: %s" % (" ".join(argv[:3]), proc.returncode, (err or out).strip()[-2000:]))
    return proc.returncode, out, err


def wait_for_line(path, pattern, proc, timeout, what):
    """Polls a log file for a line matching `pattern`; returns the match."""
    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError("%s exited with status %s:\n%s" % (what, proc.returncode, tail(path)))
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = regex.search(line)
                    if m:
                        return m
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise BenchError("%s did not start within %d s:\n%s" % (what, timeout, tail(path)))


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""

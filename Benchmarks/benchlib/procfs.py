"""What /proc says about a process (CPU, RSS, threads) and about the machine."""

import os
import platform

from .processes import run_bounded

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def stat_cpu_seconds(text):
    """utime + stime of a /proc/PID/stat line, in seconds."""
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        return stat_cpu_seconds(f.read())


def family_cpu_seconds(parent):
    """CPU seconds of `parent` and its direct children (nginx's master and workers, PostgreSQL's postmaster
    and its backends), read from /proc; processes that end while being read are skipped."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                text = f.read()
            fields = text[text.rindex(")") + 2:].split()
            if int(entry) == parent or int(fields[1]) == parent:
                total += stat_cpu_seconds(text)
        except (OSError, ValueError, IndexError):
            continue
    return total


def proc_status(pid):
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Threads", "VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0])
    return values


def procs_status(pids):
    """proc_status summed over processes (replicas): threads, RSS and peak RSS."""
    total = {}
    for pid in pids:
        for key, value in proc_status(pid).items():
            total[key] = total.get(key, 0) + value
    return total


def reset_peak_rss(pid):
    """Resets VmHWM so each run reports its own peak (Linux clear_refs 5). False when not permitted."""
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def machine_cpu():
    """(busy, total) jiffies over all CPUs."""
    with open("/proc/stat") as f:
        parts = [int(x) for x in f.readline().split()[1:]]
    idle = parts[3] + (parts[4] if len(parts) > 4 else 0)
    total = sum(parts[:8])
    return total - idle, total


def _cpu_model():
    model, mhz = "unknown", None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model == "unknown":
                    model = value.strip()
                elif key == "cpu MHz" and mhz is None:
                    mhz = value.strip()
    except OSError:
        pass
    return model, mhz


def _memory_gb():
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return mem_gb


def _os_name():
    os_name = platform.platform()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return os_name


def _wrk_version():
    try:
        _, out, err = run_bounded(["wrk", "--version"], 10, check=False)
        return (out + err).strip().splitlines()[0].split(" Copyright")[0].split(" [")[0]
    except Exception:
        return ""


def machine_description():
    model, mhz = _cpu_model()
    return {
        "cpu_model": model,
        "cpu_mhz": mhz,
        "nproc": os.cpu_count(),
        "nproc_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_gb": _memory_gb(),
        "os": _os_name(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": _wrk_version(),
        "loadavg_at_start": os.getloadavg()[0],
    }

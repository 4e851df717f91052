"""The link to Apple the servers under load call: plaintext HTTP/1.1 straight to the sandbox (`plain`), or the fake
Apple over TLS of the TLS suites (Tests/tls/fake_apple.py: Debian's nginx, TLS 1.2/1.3, a certificate for Apple's
host names from a CA made per run) in front of the same sandbox, with HTTP/2 by ALPN and its per-connection stream
limit (`tls-h2`) or HTTP/1.1 only (`tls-h1`).

Over TLS both servers call Apple's development host name, https://api.development.devicecheck.apple.com, with
certificate and host-name verification on: each runs in a private mount namespace whose /etc/hosts sends Apple's
names to the terminator (fake_apple.namespaced, so SNI and verification are production's), and trusts the run's
CA (TwoBits by `apple.ca_file`, the Go peer by `-apple-ca-file`). Nothing outside those two processes changes.

The terminator's access log is the one count both servers share: per run, the Apple calls it served, the client
connections they came on (nginx numbers its connections in order, so a number above every one seen before is a
connection opened during the run: one TLS handshake each), the HTTP versions and the TLS versions."""

import os
import sys

from .common import ROOT, BenchError, log
from .procfs import family_cpu_seconds

LINKS = ("plain", "tls-h2", "tls-h1")
# fake_apple's variant per link: `good` offers h2 and http/1.1 by ALPN, `http1` only http/1.1.
VARIANTS = {"tls-h2": "good", "tls-h1": "http1"}
EXPECTED_PROTOCOL = {"tls-h2": "HTTP/2.0", "tls-h1": "HTTP/1.1"}
# The bench's configuration has apple.environment development (bench.py's sandbox accepts either).
APPLE_HOST = "api.development.devicecheck.apple.com"
# A run's first seconds open the connections its load needs (all of them at once over HTTP/1.1); what opens after
# them is the steady state's churn.
WARMUP_SECONDS = 3.0
TLS_DIR = os.path.join(ROOT, "Tests", "tls")


def fake_apple_module():
    """Tests/tls/fake_apple.py, imported (it needs the `cryptography` package)."""
    if TLS_DIR not in sys.path:
        sys.path.insert(0, TLS_DIR)
    try:
        import fake_apple
    except ImportError as error:
        raise BenchError("the TLS fake Apple needs Python's cryptography package (.ci/install-deps.sh --bench): %s" % error)
    return fake_apple


def tls_preflight():
    """Why a TLS link cannot run here, or None: nginx, unshare, root (for the mount namespace), cryptography."""
    import shutil
    for tool in ("nginx", "unshare", "mount"):
        if not shutil.which(tool):
            return "%s is not installed (.ci/install-deps.sh --bench)" % tool
    if os.geteuid() != 0:
        return "a TLS link runs each server in a private mount namespace (its own /etc/hosts): run as root"
    try:
        fake_apple_module()
    except BenchError as error:
        return str(error)
    return None


class AppleLink:
    """The link of one bench (one race): `kind` is one of LINKS; the terminator, when there is one, runs from
    start() to stop() in `work`/nginx."""

    def __init__(self, kind, work, sandbox_url):
        if kind not in LINKS:
            raise BenchError("unknown Apple link %r" % kind)
        self.kind = kind
        self.work = work
        self.sandbox_url = sandbox_url
        self.fake = None
        self.max_connection = 0  # the highest nginx connection number seen so far in the access log
        self.offset = 0  # how far the access log has been read

    @property
    def tls(self):
        return self.kind != "plain"

    def start(self):
        if not self.tls:
            return
        fake_apple = fake_apple_module()
        self.fake = fake_apple.FakeApple(os.path.join(self.work, "nginx"), self.sandbox_url)
        self.variant = VARIANTS[self.kind]
        self.address = self.fake.address[self.variant]
        self.hosts_file = self.fake.hosts_file(self.variant)
        log("fake Apple over TLS (%s): nginx pid %d on %s:443 for %s, %d streams per HTTP/2 connection" % (
            self.kind, self.fake.process.pid, self.address, APPLE_HOST, fake_apple.STREAMS_PER_CONNECTION))

    def stop(self):
        if self.fake is not None:
            self.fake.stop()
            self.fake = None

    # ---- what the servers are given

    def apple_config(self):
        """The `apple` section's link fields: the sandbox's URL, or no base_url (Apple's own host for the
        environment) and the run's CA."""
        if not self.tls:
            return {"base_url": self.sandbox_url}
        return {"ca_file": str(self.fake.ca_file)}

    def peer_url_args(self):
        """The Go peer's -apple-url (and -apple-ca-file)."""
        if not self.tls:
            return ["-apple-url", self.sandbox_url]
        return ["-apple-url", "https://" + APPLE_HOST, "-apple-ca-file", str(self.fake.ca_file)]

    def wrap(self, argv):
        """A server's command line: as is, or in the mount namespace whose /etc/hosts names the terminator. The
        namespace's shell execs the server, so the process started is the server (its pid, its CPU)."""
        if not self.tls:
            return list(argv)
        return fake_apple_module().namespaced(argv, self.hosts_file)

    # ---- what the terminator saw

    def _read(self):
        """The access log's entries since the last read."""
        path = self.fake.access_log
        try:
            with open(path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        # Only whole lines: nginx may be half-way through one.
        end = data.rfind(b"\n") + 1
        self.offset += end
        fields = fake_apple_module().LOG_FIELDS
        return [dict(zip(fields, line.split())) for line in data[:end].decode(errors="replace").splitlines() if line.strip()]

    def mark(self):
        """Reads the log up to now (requests between runs count for no run); the next since() counts from here."""
        if not self.tls:
            return None
        for entry in self._read():
            self.max_connection = max(self.max_connection, _number(entry.get("connection")))
        return self.max_connection

    def since(self, mark, started, ended):
        """What the terminator served since mark(), for a run from `started` to `ended` (time.time()): {calls,
        new_connections, per 10k calls, the same after the warm-up (steady state) and per minute, protocols, ...}."""
        if not self.tls:
            return None
        entries = self._read()
        protocols, tls_versions, statuses, connections = {}, {}, {}, set()
        first_seen = {}  # connection -> when its first request of the run ended
        steady_from = started + WARMUP_SECONDS
        steady_calls = 0
        for e in entries:
            n = _number(e.get("connection"))
            connections.add(n)
            self.max_connection = max(self.max_connection, n)
            at = _seconds(e.get("msec"))
            first_seen[n] = min(first_seen.get(n, at), at)
            steady_calls += at >= steady_from
            for counts, key in ((protocols, e.get("protocol")), (tls_versions, e.get("ssl_protocol")), (statuses, e.get("status"))):
                counts[key] = counts.get(key, 0) + 1
        new = len([n for n in connections if n > mark])
        steady_new = len([n for n in connections if n > mark and first_seen[n] >= steady_from])
        steady_seconds = max(0.0, ended - steady_from)
        calls = len(entries)
        return {
            "link": self.kind,
            "calls": calls,
            "connections_used": len(connections),
            "new_connections": new,
            # Each new connection is one TLS handshake (full or resumed).
            "new_connections_per_10k_calls": round(10000.0 * new / calls, 1) if calls else None,
            "calls_per_connection": round(calls / len(connections), 1) if connections else None,
            # After the first WARMUP_SECONDS of the run: the connections opened while the load held steady.
            "steady_seconds": round(steady_seconds, 1),
            "steady_calls": steady_calls,
            "steady_new_connections": steady_new,
            "steady_new_connections_per_10k_calls": round(10000.0 * steady_new / steady_calls, 1) if steady_calls else None,
            "steady_new_connections_per_minute": round(60.0 * steady_new / steady_seconds, 1) if steady_seconds > 0 else None,
            "protocols": protocols,
            "tls_versions": tls_versions,
            "statuses": statuses,
        }

    def cpu_seconds(self):
        """CPU of the terminator (nginx's master and worker), 0 without one."""
        if self.fake is None or self.fake.process is None:
            return 0.0
        master = self.fake.process.pid
        return family_cpu_seconds(master)


def _seconds(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return 0.0


def _number(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return 0


def link_problems(kind, link_figures, in_flight):
    """What is wrong with a run's link figures (the smoke run's check): no calls, another HTTP version than the
    link's, a call the terminator did not answer 200, a TLS version other than 1.2 or 1.3. nginx's 499 (the client
    went away) is allowed for the `in_flight` calls wrk's last requests held when it stopped: a server may abandon
    an Apple call whose request is gone."""
    if kind == "plain" or link_figures is None:
        return []
    problems = []
    if not link_figures["calls"]:
        problems.append("the terminator served no Apple call")
    wrong = {p: n for p, n in link_figures["protocols"].items() if p != EXPECTED_PROTOCOL[kind]}
    if wrong:
        problems.append("calls over %s where the link is %s" % (wrong, EXPECTED_PROTOCOL[kind]))
    statuses = {s: n for s, n in link_figures["statuses"].items() if s != "200"}
    if statuses.get("499", 0) <= in_flight:
        statuses.pop("499", None)
    if statuses:
        problems.append("the terminator answered %s" % statuses)
    versions = {v: n for v, n in link_figures["tls_versions"].items() if v not in ("TLSv1.2", "TLSv1.3")}
    if versions:
        problems.append("TLS versions %s" % versions)
    return problems

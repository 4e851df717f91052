"""What the servers under load run beside or against: the Go peer (built here) and a PostgreSQL cluster."""

import os
import re
import shutil
import time

from .common import GOPEER_BUILD, GOPEER_DIR, POSTGRES_SCRIPT, BenchError, log
from .processes import run_bounded
from .procfs import family_cpu_seconds
from .scenarios import KEY_ID, PROMOTION_ID, TEAM_ID


def build_go_peer():
    """$GOPEER_BIN, or Benchmarks/GoPeer built into .build/gopeer with the local toolchain only: no module
    proxy, no checksum database, no toolchain download, a build cache of its own. Returns (binary, go version)."""
    explicit = os.environ.get("GOPEER_BIN")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise BenchError("GOPEER_BIN=%s is not an executable" % explicit)
        return explicit, "prebuilt ($GOPEER_BIN)"
    go = shutil.which("go")
    if not go:
        raise BenchError("the Go peer needs Go: `.ci/install-deps.sh --bench` installs golang-go (or pass --no-peer)")
    binary = os.path.join(GOPEER_BUILD, "gopeer")
    env = dict(os.environ,
               GOCACHE=os.path.join(GOPEER_BUILD, "cache"), GOPATH=os.path.join(GOPEER_BUILD, "gopath"),
               GOMODCACHE=os.path.join(GOPEER_BUILD, "gopath", "pkg", "mod"),
               GOENV="off", GOPROXY="off", GOSUMDB="off", GONOSUMDB="*", GOTOOLCHAIN="local", GOTELEMETRY="off",
               GOFLAGS="-mod=readonly", GOWORK="off", CGO_ENABLED="0")
    _, version, _ = run_bounded([go, "version"], 30, env=env)
    started = time.monotonic()
    run_bounded([go, "build", "-trimpath", "-o", binary, "."], 600, cwd=GOPEER_DIR, env=env)
    log("Go peer built in %.1f s (%s)" % (time.monotonic() - started, version.strip()))
    return binary, version.strip()


def go_peer_argv(binary, work, apple_args, signing_key, key_sha256, config):
    """The Go peer's command line: the same files as TwoBits' (Apple key, identity, the signing key `twobits keys
    generate` wrote, the API key's digest), the same audience and promotion, the same limits on Apple calls;
    `apple_args` are the link's (-apple-url, and -apple-ca-file over TLS: AppleLink.peer_url_args)."""
    return [binary, "-listen", "127.0.0.1:0"] + list(apple_args) + [
            "-apple-key", os.path.join(work, "apple.p8"), "-team-id", TEAM_ID, "-key-id", KEY_ID,
            "-signing-key", signing_key, "-api-key-sha256", key_sha256,
            "-audience", config["tokens"]["audience"], "-promotion", PROMOTION_ID,
            "-max-conns", str(config["apple"]["max_in_flight"]), "-timeout-ms", str(config["apple"]["timeout_ms"])]


class Postgres:
    """The PostgreSQL cluster the bench runs against: its own (`.ci/postgres.sh start`, destroyed at close),
    or the one of an explicit URI (--postgres). A fresh database per server target (CREATE DATABASE with psql,
    so the role needs CREATEDB; without it the URI's own database is used)."""

    def __init__(self, uri=None):
        self.dir = None
        if uri:
            self.uri = uri
        else:
            self.uri, self.dir = self._start()
            log("PostgreSQL cluster in %s" % self.dir)
        self.databases = 0

    @staticmethod
    def _start():
        if not os.path.exists(POSTGRES_SCRIPT):
            raise BenchError("no %s" % POSTGRES_SCRIPT)
        _, out, _ = run_bounded([POSTGRES_SCRIPT, "start"], 180)
        exported = dict(re.findall(r"^export (\w+)='([^']*)'$", out, re.M))
        if "TWOBITS_TEST_POSTGRES" not in exported:
            raise BenchError(".ci/postgres.sh start printed no URI: %s" % out[-500:])
        return exported["TWOBITS_TEST_POSTGRES"], exported["TWOBITS_TEST_POSTGRES_DIR"]

    def create_database(self, name):
        if not shutil.which("psql"):
            log("no psql: every PostgreSQL target uses the URI's database")
            return self.uri
        self.databases += 1
        name = "%s_%d_%d" % (name, os.getpid(), self.databases)
        code, _, err = run_bounded(["psql", self.uri, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", 'CREATE DATABASE "%s"' % name],
                                   60, check=False)
        if code != 0:
            log("cannot create a database (%s): using the URI's own" % err.strip()[-200:].replace(self.password() or "\0", "***"))
            return self.uri
        base, _, query = self.uri.partition("?")
        return base.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")

    def password(self):
        m = re.match(r"^postgres(?:ql)?://[^:/@]+:([^@]+)@", self.uri)
        return m.group(1) if m else None

    def cpu_seconds(self):
        """CPU of the cluster's processes (postmaster and its children) when bench.py started it; None otherwise.
        Backends that exit during a run take their CPU with them: the pool keeps its connections open."""
        if not self.dir:
            return None
        try:
            with open(os.path.join(self.dir, "data", "postmaster.pid")) as f:
                postmaster = int(f.readline())
        except (OSError, ValueError):
            return None
        return family_cpu_seconds(postmaster)

    def close(self):
        if self.dir:
            run_bounded([POSTGRES_SCRIPT, "destroy", self.dir], 60, check=False)
            self.dir = None

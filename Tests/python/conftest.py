"""Shared fixtures: a real `twobits sandbox` and `twobits serve` on loopback, in a temporary directory.

Every suite here drives the release binary named by TWOBITS_BIN (see `make test-python`). The
`twobits` fixture starts a default deployment; `twobits_factory` starts deployments with other
configurations (bit layout, tokens section, Apple environment, promotions, any extra field), and
every process started is killed at teardown, whatever the test did.

The `postgres` fixture is a PostgreSQL cluster for the suites that need one (the one `make test` starts,
or a private one); `postgres.create_database()` gives each deployment a fresh database, and
`Deployment.start_replicas(n)` runs n `twobits serve` processes on one configuration.

Only the standard library, PyJWT and pytest are used.
"""
import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEAM_ID = "TEAMID1234"
KEY_ID = "KEYID12345"
ISSUER = "twobits-test"
AUDIENCE = "main-api-test"

# The roles each API client gets; tests pick the client by name.
CLIENT_ROLES = {
    "main": ["tokens"],
    "marketing": ["promotions"],
    "ops": ["admin"],
}

DEFAULT_TOKENS = {
    "issuer": ISSUER,
    "audience": AUDIENCE,
    "ttl_seconds": 900,
    "limited_use_ttl_seconds": 300,
    "keys_dir": "keys",
    "reuse_window_seconds": 3600,
}

DEFAULT_LAYOUT = {"bit0": "promotion", "bit1": "ban"}


def twobits_binary():
    path = os.environ.get("TWOBITS_BIN") or str(REPO / ".build" / "release" / "twobits")
    if not os.access(path, os.X_OK):
        pytest.exit(f"TWOBITS_BIN={path} is not an executable; build with `swift build -c release` or run `make test-python`", 2)
    return path


def free_port():
    """A port nobody listens on right now (bound to 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def current_month():
    return time.strftime("%Y-%m", time.gmtime())


def deep_merge(base, extra):
    """A copy of `base` with `extra` merged in (nested dicts merged, anything else replaced; None deletes)."""
    result = copy.deepcopy(base)
    for key, value in (extra or {}).items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


class Response:
    """Status, headers and the decoded JSON body (None when the body is not JSON)."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.raw = body
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    @property
    def error_code(self):
        return (self.json or {}).get("error", {}).get("code") if isinstance(self.json, dict) else None

    def __repr__(self):
        return f"<Response {self.status} {self.raw[:300]!r}>"


def http(method, url, body=None, headers=None, timeout=30):
    """One HTTP request; never raises for an HTTP error status."""
    data = None
    headers = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return Response(answer.status, answer.headers, answer.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, error.headers, error.read())


def wait_until(predicate, timeout, what, process=None, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what}: process exited with {process.returncode}\n{tail(log)}")
        try:
            if predicate():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not ready after {timeout} s\n{tail(log)}")


def tail(path, lines=40):
    if not path or not Path(path).exists():
        return ""
    return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])


class Deployment:
    """A sandbox and a server sharing one temporary directory.

    Parameters (all optional):
      layout       the `bits` section (default bit0 promotion, bit1 ban)
      tokens       the `tokens` section merged over DEFAULT_TOKENS; False leaves it out entirely
      environment  "development" or "production", used for both the sandbox and apple.environment
      promotions   the `promotions` list
      extra        any other configuration, deep-merged last (e.g. {"apple": {"timeout_ms": 1000}})
    """

    def __init__(self, directory, layout=None, tokens=None, environment="development", promotions=None, extra=None):
        self.binary = twobits_binary()
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.environment = environment
        self.processes = {}
        self.logs = {}
        self.keys_dir = self.dir / "keys"
        self.api_keys = {}

        # Apple's team key, as Apple hands it out: a P-256 PKCS#8 .p8 file.
        self.apple_key = self.dir / "AuthKey_TEST.p8"
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(self.apple_key)],
                       check=True, capture_output=True)
        # TwoBits' own token signing key.
        self.cli("keys", "generate", "--dir", str(self.keys_dir))

        clients = []
        for name, roles in CLIENT_ROLES.items():
            key, digest = self.make_api_key()
            self.api_keys[name] = key
            clients.append({"name": name, "key_sha256": digest, "roles": roles})

        self.sandbox_port = free_port()
        self.port = free_port()
        while self.port == self.sandbox_port:
            self.port = free_port()
        self.sandbox_url = f"http://127.0.0.1:{self.sandbox_port}"
        self.url = f"http://127.0.0.1:{self.port}"

        config = {
            "listen": f"127.0.0.1:{self.port}",
            "database": "twobits.sqlite",
            "apple": {
                "environment": environment,
                "base_url": self.sandbox_url,
                "team_id": TEAM_ID,
                "key_id": KEY_ID,
                "private_key_file": self.apple_key.name,
                "timeout_ms": 5000,
            },
            "clients": clients,
            "server": {"threads": 4, "shutdown_grace_ms": 1000},
            "bits": layout if layout is not None else DEFAULT_LAYOUT,
        }
        if promotions is not None:
            config["promotions"] = promotions
        if tokens is not False:
            config["tokens"] = deep_merge(DEFAULT_TOKENS, tokens or {})
        self.config = deep_merge(config, extra)
        self.config_path = self.dir / "config.json"
        self.config_path.write_text(json.dumps(self.config, indent=2))
        self.tokens = self.config.get("tokens")

    # -- processes ------------------------------------------------------------------------------

    def cli(self, *args, check=True, env=None):
        """Runs `twobits ARGS` in the deployment directory and returns its standard output."""
        result = subprocess.run([self.binary, *args], cwd=self.dir, capture_output=True, text=True, timeout=60,
                                env={**os.environ, **(env or {})})
        if check and result.returncode != 0:
            raise RuntimeError(f"twobits {' '.join(args)} exited {result.returncode}: {result.stderr}{result.stdout}")
        return result

    def make_api_key(self):
        fields = dict(line.split(":", 1) for line in self.cli("apikey").stdout.splitlines() if ":" in line)
        return fields["api_key"].strip(), fields["key_sha256"].strip()

    def _spawn(self, name, args):
        log = self.dir / f"{name}.log"
        self.logs[name] = log
        handle = open(log, "ab")
        process = subprocess.Popen([self.binary, *args], cwd=self.dir, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        handle.close()
        self.processes[name] = process
        return process

    def start(self):
        self.start_sandbox()
        self.start_server()
        return self

    def start_sandbox(self):
        args = ["sandbox", "--team-id", TEAM_ID, "--key-id", KEY_ID, "--key-file", str(self.apple_key),
                "--listen", f"127.0.0.1:{self.sandbox_port}", "--environment", self.environment]
        # The App Attest root the server trusts is the one this sandbox generates (docs/app-attest.md).
        root = (self.config.get("app_attest") or {}).get("root_ca_file")
        if root:
            args += ["--app-attest-root", str(self.dir / root)]
        # And the root of its receipts, when the refresher is told to trust it (app_attest.receipts.root_ca_file).
        receipts_root = (((self.config.get("app_attest") or {}).get("receipts")) or {}).get("root_ca_file")
        if receipts_root:
            args += ["--receipt-root", str(self.dir / receipts_root)]
        process = self._spawn("sandbox", args)
        wait_until(lambda: http("GET", self.sandbox_url + "/sandbox/v1/healthz", timeout=2).status == 200,
                   15, "twobits sandbox", process, self.logs["sandbox"])

    def start_server(self):
        process = self._spawn("server", ["serve", "--config", str(self.config_path)])
        wait_until(lambda: http("GET", self.url + "/readyz", timeout=2).status == 200,
                   20, "twobits serve", process, self.logs["server"])

    def start_replicas(self, count):
        """Runs `count` `twobits serve` processes on this configuration (the first is "server" on
        `self.port`), each on a port of its own; they share the sandbox, the keys and the database, so
        `database` must be a PostgreSQL URI. Returns the list of `Replica`s (also `self.replicas`)."""
        self.replicas = [Replica(self, "server", self.port, self.config_path)]
        self.start_server()
        for index in range(1, count):
            port = free_port()
            while port in (self.port, self.sandbox_port) or port in [r.port for r in self.replicas]:
                port = free_port()
            config_path = self.dir / f"config-replica{index}.json"
            config_path.write_text(json.dumps({**self.config, "listen": f"127.0.0.1:{port}"}, indent=2))
            replica = Replica(self, f"replica{index}", port, config_path)
            self.replicas.append(replica)
            replica.start()
        return self.replicas

    @property
    def server(self):
        return self.processes["server"]

    def kill_server(self, sig=signal.SIGKILL):
        process = self.processes.get("server")
        if process and process.poll() is None:
            process.send_signal(sig)
            process.wait(timeout=15)

    def restart_server(self):
        self.kill_server(signal.SIGKILL)
        self.start_server()

    def reload_keys(self):
        """SIGHUP: the server re-reads its key directory."""
        self.server.send_signal(signal.SIGHUP)

    def stop(self):
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def server_log(self):
        return tail(self.logs.get("server"), 200)

    # -- HTTP -----------------------------------------------------------------------------------

    def request(self, method, path, body=None, client=None, headers=None, timeout=30):
        """A request to the server, authenticated as `client` ("main", "marketing", "ops") when given."""
        headers = dict(headers or {})
        if client:
            headers["Authorization"] = "Bearer " + self.api_keys[client]
        return http(method, self.url + path, body, headers, timeout)

    def post(self, path, body=None, client=None, **kwargs):
        return self.request("POST", path, body, client, **kwargs)

    def get(self, path, client=None, **kwargs):
        return self.request("GET", path, None, client, **kwargs)

    # -- the sandbox's control API --------------------------------------------------------------

    def sandbox(self, method, path, body=None):
        return http(method, self.sandbox_url + path, body)

    def new_device(self):
        answer = self.sandbox("POST", "/sandbox/v1/devices")
        assert answer.status == 201, answer
        return answer.json["device_id"]

    def mint(self, device_id):
        answer = self.sandbox("POST", f"/sandbox/v1/devices/{device_id}/tokens", {})
        assert answer.status == 201, answer
        return answer.json["device_token"]

    def device(self, device_id):
        answer = self.sandbox("GET", f"/sandbox/v1/devices/{device_id}")
        assert answer.status == 200, answer
        return answer.json

    def jwks_url(self):
        return self.url + "/.well-known/jwks.json"

    # -- conveniences ---------------------------------------------------------------------------

    def exchange(self, device_token=None, **fields):
        body = dict(fields)
        if device_token is not None:
            body["device_token"] = device_token
        return self.post("/v1/fallback-tokens", body, client="main")

    def verify(self, token, consume=None):
        body = {"token": token}
        if consume is not None:
            body["consume"] = consume
        return self.post("/v1/fallback-tokens/verify", body, client="main")

    def audit_events(self, page_size=500):
        """Every audit event, newest first, following the `before` cursor."""
        events, before = [], None
        while True:
            path = f"/v1/admin/audit?limit={page_size}" + (f"&before={before}" if before else "")
            answer = self.get(path, client="ops")
            assert answer.status == 200, answer
            events.extend(answer.json["events"])
            before = answer.json.get("next_before")
            if not before:
                return events


class Replica:
    """One of several `twobits serve` processes of a deployment (see `Deployment.start_replicas`): the
    deployment's HTTP conveniences, sent to this replica's port."""

    def __init__(self, deployment, name, port, config_path):
        self.deployment = deployment
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.config_path = config_path
        self.api_keys = deployment.api_keys

    def start(self):
        d = self.deployment
        if self.name == "server":
            return d.start_server()
        process = d._spawn(self.name, ["serve", "--config", str(self.config_path)])
        wait_until(lambda: http("GET", self.url + "/readyz", timeout=2).status == 200,
                   20, f"twobits serve ({self.name})", process, d.logs[self.name])

    @property
    def process(self):
        return self.deployment.processes.get(self.name)

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def kill(self, sig=signal.SIGKILL):
        process = self.process
        if process and process.poll() is None:
            process.send_signal(sig)
            process.wait(timeout=15)

    def log(self):
        return tail(self.deployment.logs.get(self.name), 200)

    request = Deployment.request
    post = Deployment.post
    get = Deployment.get
    exchange = Deployment.exchange
    verify = Deployment.verify
    audit_events = Deployment.audit_events
    jwks_url = Deployment.jwks_url

    def __repr__(self):
        return f"<Replica {self.name} {self.url}>"


class DeploymentFactory:
    """Starts deployments under one directory and kills them all at `close()`."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.deployments = []

    def __call__(self, name=None, autostart=True, **options):
        deployment = Deployment(self.directory / (name or f"deployment{len(self.deployments)}"), **options)
        self.deployments.append(deployment)
        if autostart:
            deployment.start()
        return deployment

    def close(self):
        for deployment in self.deployments:
            deployment.stop()


@pytest.fixture
def twobits_factory(tmp_path):
    """Starts deployments: `twobits_factory(layout=..., tokens=..., environment=..., promotions=..., extra=...)`.

    Each call gets its own subdirectory, sandbox and server; all are killed at teardown.
    """
    factory = DeploymentFactory(tmp_path)
    yield factory
    factory.close()


@pytest.fixture(scope="module")
def twobits_module_factory(tmp_path_factory):
    """Like `twobits_factory`, for deployments shared by the tests of one module (killed after the module)."""
    factory = DeploymentFactory(tmp_path_factory.mktemp("shared"))
    yield factory
    factory.close()


@pytest.fixture
def twobits(twobits_factory, request):
    """The default deployment; `@pytest.mark.parametrize("twobits", [{...options}], indirect=True)` changes it."""
    options = getattr(request, "param", None) or {}
    return twobits_factory(**options)


# `make coverage` runs these suites against an instrumented binary: a process writes its profile
# (LLVM_PROFILE_FILE) only when it exits normally, so at teardown ask first (SIGTERM), kill after 10 s.
if os.environ.get("LLVM_PROFILE_FILE"):
    def _stop_politely(self):
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    Deployment.stop = _stop_politely


# -- PostgreSQL ----------------------------------------------------------------------------------


POSTGRES_SCRIPT = REPO / ".ci" / "postgres.sh"


def postgres_password(uri):
    """The password in a postgresql://user:password@host/db URI (None when it has none)."""
    match = re.match(r"^postgres(?:ql)?://[^:/@]+:([^@]+)@", uri)
    return match.group(1) if match else None


class PostgresCluster:
    """A PostgreSQL cluster: `uri` (postgresql://twobits:PASSWORD@127.0.0.1:PORT/twobits, a role with
    CREATEDB) and `dir` (the .ci/postgres.sh directory, for `stop`/`resume`). `owned` clusters were
    started here and are destroyed by `destroy()`."""

    def __init__(self, uri, directory, owned):
        self.uri = uri
        self.dir = directory
        self.owned = owned
        self.password = postgres_password(uri)
        self.databases = 0

    @classmethod
    def start(cls):
        """A private cluster (`.ci/postgres.sh start`); the caller destroys it."""
        result = subprocess.run([str(POSTGRES_SCRIPT), "start"], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f".ci/postgres.sh start exited {result.returncode}: {result.stderr}")
        exported = dict(re.findall(r"^export (\w+)='([^']*)'$", result.stdout, re.M))
        return cls(exported["TWOBITS_TEST_POSTGRES"], exported["TWOBITS_TEST_POSTGRES_DIR"], owned=True)

    def database_uri(self, name):
        """The cluster's URI naming another database (query parameters kept)."""
        base, _, query = self.uri.partition("?")
        return base.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")

    def psql(self, sql, database=None):
        """Runs SQL with psql as the cluster's role (in `database`, default the role's own); returns the
        unaligned, tuples-only output."""
        uri = self.database_uri(database) if database else self.uri
        result = subprocess.run(["psql", uri, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"psql: {result.stderr.strip()}")
        return result.stdout

    def create_database(self, prefix="t"):
        """A fresh, empty database; returns its URI."""
        self.databases += 1
        name = f"{prefix}_{os.getpid()}_{self.databases}_{int(time.time() * 1000) % 100000000}"
        self.psql(f'CREATE DATABASE "{name}"')
        return self.database_uri(name)

    def stop(self):
        subprocess.run([str(POSTGRES_SCRIPT), "stop", self.dir], check=True, capture_output=True, timeout=60)

    def resume(self):
        subprocess.run([str(POSTGRES_SCRIPT), "resume", self.dir], check=True, capture_output=True, timeout=60)

    def destroy(self):
        if self.owned:
            subprocess.run([str(POSTGRES_SCRIPT), "destroy", self.dir], capture_output=True, timeout=60)


def postgres_available():
    """Why a private cluster cannot be started here, or None."""
    if not shutil.which("psql"):
        return "psql is not installed (apt-get install postgresql)"
    if not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        return "no PostgreSQL server (apt-get install postgresql)"
    return None


@pytest.fixture(scope="session")
def postgres():
    """The cluster `make test` started (TWOBITS_TEST_POSTGRES, TWOBITS_TEST_POSTGRES_DIR), or a private
    one started here and destroyed after the session. Missing with TWOBITS_REQUIRE_POSTGRES=1: the test
    fails; otherwise it is skipped when no PostgreSQL server is installed."""
    uri = os.environ.get("TWOBITS_TEST_POSTGRES")
    if uri:
        cluster = PostgresCluster(uri, os.environ.get("TWOBITS_TEST_POSTGRES_DIR", ""), owned=False)
        yield cluster
        return
    if os.environ.get("TWOBITS_REQUIRE_POSTGRES") == "1":
        pytest.fail("TWOBITS_REQUIRE_POSTGRES=1 but TWOBITS_TEST_POSTGRES is not set (run under .ci/postgres.sh run)")
    missing = postgres_available()
    if missing:
        pytest.skip(missing)
    cluster = PostgresCluster.start()
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def private_postgres():
    """A cluster of this test's own (tests that stop PostgreSQL must not stop the shared one)."""
    missing = postgres_available()
    if missing:
        if os.environ.get("TWOBITS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"TWOBITS_REQUIRE_POSTGRES=1 but {missing}")
        pytest.skip(missing)
    cluster = PostgresCluster.start()
    try:
        yield cluster
    finally:
        cluster.destroy()

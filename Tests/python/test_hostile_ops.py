"""Operator mistakes and per-client limits, against the real `twobits` binary and sandbox (issue 12, items 9-10).

A key directory others can write and a key file another user owns stop the server at start (and a
reload keeps the old keys); a `.p8` readable by others and a configuration writable by others are
warned about; credentials in `apple.base_url` never reach the log; a client over its rate limit gets
429 `rate_limited` with Retry-After and Apple (the sandbox) sees no call; `twobits admin` takes its
key from TWOBITS_ADMIN_KEY or a file and prints control characters escaped.
"""
import json
import os
import pwd
import subprocess
import time
from pathlib import Path

import pytest

from conftest import http, wait_until

NOBODY = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else None


def serve_once(deployment, timeout=20):
    """Runs `twobits serve` expecting it to refuse to start; returns (exit code, output)."""
    result = subprocess.run([deployment.binary, "serve", "--config", str(deployment.config_path)], cwd=deployment.dir,
                            capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


def rewrite_config(deployment):
    deployment.config_path.write_text(json.dumps(deployment.config, indent=2))


def sandbox_calls(deployment):
    answer = deployment.sandbox("GET", "/sandbox/v1/counters")
    assert answer.status == 200, answer
    return sum(answer.json["calls"].values())


def log_lines(deployment):
    path = deployment.logs["server"]
    return path.read_text(errors="replace").splitlines()


def test_world_writable_key_directory_is_refused_at_start(twobits_factory):
    d = twobits_factory(autostart=False)
    os.chmod(d.keys_dir, 0o777)
    d.start_sandbox()
    code, output = serve_once(d)
    assert code == 1, output
    assert str(d.keys_dir) in output and "writable by group or others" in output, output
    assert f"chmod 700 {d.keys_dir}" in output, output
    # Fixed as told, it starts.
    os.chmod(d.keys_dir, 0o700)
    d.start_server()


def test_a_private_key_file_that_is_a_fifo_stops_the_start_at_once_naming_the_field(twobits_factory):
    """Opening a FIFO waits for a writer: such a key used to hang the start with no output."""
    d = twobits_factory(name="fifo-key", autostart=False)
    fifo = d.dir / "AuthKey-fifo.p8"
    os.mkfifo(fifo, 0o600)
    d.config["apple"]["private_key_file"] = str(fifo)
    rewrite_config(d)
    started = time.monotonic()
    code, output = serve_once(d, timeout=15)
    assert code == 1, output
    assert "apple.private_key_file" in output and "not a regular file" in output and str(fifo) in output, output
    assert time.monotonic() - started < 10


def test_group_writable_key_directory_is_refused_too(twobits_factory):
    d = twobits_factory(autostart=False)
    os.chmod(d.keys_dir, 0o770)
    d.start_sandbox()
    code, output = serve_once(d)
    assert code == 1 and "mode 770" in output, output


@pytest.mark.skipif(NOBODY is None, reason="chown to nobody needs root")
def test_key_owned_by_another_user_is_refused_at_start(twobits_factory):
    d = twobits_factory(autostart=False)
    d.cli("keys", "rotate", "--dir", str(d.keys_dir))
    planted = sorted(p for p in d.keys_dir.iterdir() if p.suffix == ".pem")[-1]
    os.chown(planted, NOBODY, NOBODY)
    d.start_sandbox()
    code, output = serve_once(d)
    assert code == 1, output
    assert str(planted) in output and f"owned by uid {NOBODY}" in output, output


@pytest.mark.skipif(NOBODY is None, reason="chown to nobody needs root")
def test_a_key_planted_by_another_user_is_never_served(twobits_factory):
    d = twobits_factory()
    before = {k["kid"] for k in http("GET", d.jwks_url()).json["keys"]}
    d.cli("keys", "rotate", "--dir", str(d.keys_dir))
    planted = sorted(p for p in d.keys_dir.iterdir() if p.suffix == ".pem")[-1]
    os.chown(planted, NOBODY, NOBODY)
    d.reload_keys()
    wait_until(lambda: any("signing keys not reloaded" in line for line in log_lines(d)), 10, "the reload refusal", d.server, d.logs["server"])
    refusal = next(line for line in log_lines(d) if "signing keys not reloaded" in line)
    assert str(planted) in refusal and "owned by uid" in refusal, refusal
    after = {k["kid"] for k in http("GET", d.jwks_url()).json["keys"]}
    assert after == before
    assert d.server.poll() is None


def test_p8_readable_by_others_and_config_writable_by_others_are_warned_once(twobits_factory):
    d = twobits_factory(autostart=False)
    os.chmod(d.apple_key, 0o644)
    os.chmod(d.config_path, 0o666)
    d.start()
    warnings = [json.loads(line) for line in log_lines(d) if '"level":"warning"' in line]
    p8 = [w for w in warnings if w.get("path") == str(d.apple_key)]
    config = [w for w in warnings if w.get("path") == str(d.config_path)]
    assert len(p8) == 1 and "chmod 600" in p8[0]["msg"], warnings
    assert len(config) == 1 and "writable" in config[0]["msg"], warnings
    assert d.get("/healthz").status == 200


def test_owner_only_files_are_not_warned_about(twobits_factory):
    d = twobits_factory(autostart=False)
    os.chmod(d.apple_key, 0o600)
    os.chmod(d.config_path, 0o600)
    d.start()
    assert not [line for line in log_lines(d) if str(d.apple_key) in line or str(d.config_path) in line]


def test_base_url_credentials_never_reach_the_log(twobits_factory):
    d = twobits_factory(autostart=False)
    d.config["apple"]["base_url"] = f"http://operator:hunter2-secret@127.0.0.1:{d.sandbox_port}"
    rewrite_config(d)
    d.start()
    device = d.new_device()
    assert d.post("/v1/devices/validate", {"device_token": d.mint(device)}, client="main").status == 200
    text = d.logs["server"].read_text(errors="replace")
    listening = [line for line in text.splitlines() if "listening" in line]
    assert listening and f"127.0.0.1:{d.sandbox_port}" in listening[0], text
    assert "hunter2-secret" not in text and "operator:" not in text


@pytest.mark.parametrize("configured, in_force", [(None, 1000), (0, 0), (750, 750)])
def test_the_loops_pause_as_configured(twobits_factory, configured, in_force):
    """server.wake_coalescing_us reaches the event loops: the listening line reads it back from them."""
    extra = None if configured is None else {"server": {"wake_coalescing_us": configured}}
    d = twobits_factory(name=f"wake-{configured}", extra=extra)
    assert d.get("/healthz").status == 200
    listening = [json.loads(line) for line in log_lines(d) if '"listening"' in line]
    assert listening and listening[0]["wake_coalescing_us"] == in_force, listening


def test_base_url_credentials_are_not_in_configuration_errors(twobits_factory):
    d = twobits_factory(autostart=False)
    d.config["apple"]["base_url"] = "ftp://operator:hunter2-secret@127.0.0.1:1"
    rewrite_config(d)
    code, output = serve_once(d)
    assert code == 1 and "apple.base_url" in output, output
    assert "hunter2-secret" not in output


def test_a_client_over_its_rate_gets_429_with_retry_after_and_apple_sees_no_call(twobits_factory):
    d = twobits_factory(autostart=False)
    for client in d.config["clients"]:
        if client["name"] == "main":
            client["rate_per_second"] = 0.1
            client["burst"] = 2
    rewrite_config(d)
    d.start()
    token = d.mint(d.new_device())
    for _ in range(2):
        assert d.post("/v1/devices/validate", {"device_token": token}, client="main").status == 200
    calls = sandbox_calls(d)
    refused = [d.post("/v1/devices/validate", {"device_token": token}, client="main") for _ in range(3)]
    refused.append(d.post("/v1/installs", {"device_token": token, "install_id": "i-1"}, client="main"))
    for answer in refused:
        assert answer.status == 429 and answer.error_code == "rate_limited", answer
        # One token in 10 s at 0.1 per second, rounded up.
        assert answer.headers["Retry-After"] == "10", answer.headers
    assert sandbox_calls(d) == calls
    # Another client is not limited by main's bucket.
    assert d.post("/v1/promotions/none/eligibility", {"device_token": token}, client="marketing").status != 429
    metrics = d.get("/metrics").raw.decode()
    assert 'twobits_rate_limited_total{client="main",scope="client"} 4' in metrics, metrics


def test_the_global_ceiling_refuses_before_apple(twobits_factory):
    d = twobits_factory(extra={"apple": {"max_calls_per_second": 1}})
    token = d.mint(d.new_device())
    # A validate costs one call: the first takes the second's only token.
    first = d.post("/v1/devices/validate", {"device_token": token}, client="main")
    calls = sandbox_calls(d)
    second = d.post("/v1/devices/validate", {"device_token": token}, client="marketing")
    if first.status == 200:
        assert second.status == 429 and second.error_code == "rate_limited", second
        assert second.headers["Retry-After"] == "1"
        assert sandbox_calls(d) == calls
        assert 'twobits_rate_limited_total{client="marketing",scope="global"} 1' in d.get("/metrics").raw.decode()
    else:
        pytest.fail(f"the first request was refused: {first}")


def admin(d, *args, env=None):
    return subprocess.run([d.binary, "admin", *args, "--server", d.url], cwd=d.dir, capture_output=True, text=True, timeout=30,
                          env={k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None})


def test_admin_key_from_environment_or_file_and_key_flag_warns(twobits_factory):
    d = twobits_factory()
    key = d.api_keys["ops"]
    no_env = {"TWOBITS_ADMIN_KEY": None}
    from_env = admin(d, "pending", env={"TWOBITS_ADMIN_KEY": key})
    assert from_env.returncode == 0, from_env.stderr + from_env.stdout
    assert "visible" not in from_env.stderr

    key_file = d.dir / "admin.key"
    key_file.write_text(key + "\n")
    os.chmod(key_file, 0o600)
    from_file = admin(d, "pending", "--key-file", str(key_file), env=no_env)
    assert from_file.returncode == 0, from_file.stderr + from_file.stdout

    flag = admin(d, "pending", "--key", key, env=no_env)
    assert flag.returncode == 0
    assert "visible" in flag.stderr and "TWOBITS_ADMIN_KEY" in flag.stderr, flag.stderr
    assert key not in flag.stderr

    missing = admin(d, "pending", env=no_env)
    assert missing.returncode == 2 and "TWOBITS_ADMIN_KEY" in missing.stderr


def test_admin_audit_escapes_control_characters(twobits_factory):
    d = twobits_factory(autostart=False)
    evil = "ops\x1b]0;pwned\x07\x1b[2J\r\x9b31m"
    for client in d.config["clients"]:
        if client["name"] == "ops":
            client["name"] = evil
    rewrite_config(d)
    d.start()
    assert d.post("/v1/admin/bans", {"install_id": "install-1", "reason": "fraud"}, client="ops").status == 202
    # A reason with control characters is refused outright.
    refused = d.post("/v1/admin/bans", {"install_id": "install-2", "reason": "a\x1b[2Jb"}, client="ops")
    assert refused.status == 400, refused
    out = admin(d, "audit", env={"TWOBITS_ADMIN_KEY": d.api_keys["ops"]})
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\r" not in out.stdout and "\x9b" not in out.stdout
    assert "ops\\u{1B}]0;pwned\\u{7}\\u{1B}[2J\\r\\u{9B}31m" in out.stdout, out.stdout
    assert "ban.pending" in out.stdout


# -- Issue 34, items 1-2: PostgreSQL connection strings and passwords whatever they hold -----------------

# A password with every character a parser might stop at: '/', '?', '#', '@', '&', '=', a space, a quote,
# a backslash. Each test looks for distinctive pieces of it in everything the binary printed.
HOSTILE_PASSWORD = "Hx7/pw?q#r@s&t=u vQ9'w\\z"
HOSTILE_PIECES = ("Hx7", "pw?q", "#r@s", "&t=u", "vQ9")


def superuser_psql(postgres, sql):
    """SQL as the cluster's superuser over its Unix socket (root runs the cluster as `postgres`)."""
    if os.geteuid() != 0 or not postgres.dir:
        pytest.skip("needs root and the cluster's directory (.ci/postgres.sh)")
    port = (Path(postgres.dir) / "port").read_text().strip()
    result = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", postgres.dir, "-p", port, "-U", "postgres",
                             "-d", "postgres", "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return port


def hostile_role(postgres):
    """A role whose password is HOSTILE_PASSWORD and a database it owns; returns (role, database, port)."""
    role = f"hostile_{os.getpid()}_{int(time.time() * 1000) % 10000000}"
    literal = HOSTILE_PASSWORD.replace("'", "''")
    port = superuser_psql(postgres, f"CREATE ROLE {role} LOGIN PASSWORD '{literal}'")
    superuser_psql(postgres, f"CREATE DATABASE {role} OWNER {role}")
    return role, role, port


def keyword_value(role, database, port, password=HOSTILE_PASSWORD):
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    return f"host=127.0.0.1 port={port} user={role} dbname={database} password='{quoted}'"


def multi_host_uri(role, database, port, password=HOSTILE_PASSWORD):
    # '?' and '#' stay raw (libpq reads the user info up to its '@'); what libpq needs encoded is encoded.
    encoded = "".join(c if c.isalnum() or c in "?#-_.~" else "%%%02X" % ord(c) for c in password)
    # The first host refuses: libpq moves on to the second.
    return f"postgresql://{role}:{encoded}@127.0.0.1:1,127.0.0.1:{port}/{database}?target_session_attrs=read-write&connect_timeout=5"


def assert_no_password(text, encoded_too=None):
    for piece in HOSTILE_PIECES + ((encoded_too,) if encoded_too else ()):
        assert piece not in text, (piece, text[-3000:])


@pytest.mark.parametrize("form", ["keyword/value", "multi-host URI"])
def test_a_postgresql_connection_string_in_either_libpq_form_is_postgresql_and_its_password_never_shows(twobits_factory, postgres, form):
    role, database, port = hostile_role(postgres)
    setting = keyword_value(role, database, port) if form == "keyword/value" else multi_host_uri(role, database, port)
    d = twobits_factory(name=f"pg-{form.split()[0].replace('/', '-')}", autostart=False, extra={"database": setting})
    d.start()
    ban = d.post("/v1/admin/bans", {"device_token": d.mint(d.new_device()), "reason": "fraud"}, client="ops")
    assert ban.status == 200, ban
    # The ledger is PostgreSQL: the ban's audit event is in the role's database, and no SQLite file appeared.
    superuser_psql(postgres, "SELECT 1")
    events = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", postgres.dir, "-p", port, "-U", "postgres",
                             "-d", database, "-qAtX", "-c", "SELECT count(*) FROM audit_events WHERE action = 'ban'"],
                            capture_output=True, text=True, timeout=60)
    assert events.returncode == 0 and int(events.stdout.strip()) == 1, events
    assert not [p.name for p in d.dir.iterdir() if "sqlite" in p.name or "=" in p.name or ":" in p.name], list(d.dir.iterdir())
    listening = [json.loads(line) for line in log_lines(d) if '"listening"' in line]
    assert listening, log_lines(d)
    shown = listening[0]["database"]
    assert "127.0.0.1" in shown and database in shown, shown
    assert ("password=***" in shown) if form == "keyword/value" else shown.startswith("postgresql://***@127.0.0.1:1,127.0.0.1:"), shown
    d.stop()
    assert_no_password(d.logs["server"].read_text(errors="replace"), encoded_too=setting.split(":")[2].split("@")[0] if form != "keyword/value" else None)
    # twobits' own commands take both forms too, and print no password.
    result = d.cli("migrate", "--database", setting, check=False)
    assert result.returncode == 0 and "schema version" in result.stdout, result
    assert_no_password(result.stdout + result.stderr)


@pytest.mark.parametrize("form", ["keyword/value", "multi-host URI"])
def test_a_refused_postgresql_password_is_not_in_the_error(twobits_factory, postgres, form):
    role, database, port = hostile_role(postgres)
    wrong = HOSTILE_PASSWORD[::-1]
    setting = keyword_value(role, database, port, wrong) if form == "keyword/value" else multi_host_uri(role, database, port, wrong)
    d = twobits_factory(name=f"pg-wrong-{form.split()[0].replace('/', '-')}", autostart=False, extra={"database": setting})
    d.start_sandbox()
    code, output = serve_once(d)
    assert code == 1 and "database" in output and "authentication failed" in output, output
    for piece in ("9Qv", "u=t&s@r#q?wp", "7xH"):
        assert piece not in output, output


# libpq quotes the piece it cannot parse back (`invalid percent-encoded token: "…"`): here, the password.
@pytest.mark.parametrize("setting", [
    "postgresql://twobits:Hx7%zzsecret@127.0.0.1:1/twobits",
    "host=127.0.0.1 port=1 password='Hx7 secret' dbname=twobits bogus_option=1",
])
def test_a_malformed_connection_string_is_refused_without_its_password(twobits_factory, setting):
    d = twobits_factory(name="pg-malformed", autostart=False, extra={"database": setting})
    d.start_sandbox()
    code, output = serve_once(d)
    assert code == 1 and "database" in output, output
    assert "Hx7" not in output, output
    result = d.cli("migrate", "--database", setting, check=False)
    assert result.returncode != 0 and "Hx7" not in result.stdout + result.stderr, result


@pytest.mark.parametrize("setting, problem", [
    ("host=db user=twobits password=Hx7secret dbname=x 'unterminated", "connection settings"),
    ("HOST=db PASSWORD=Hx7secret", "connection settings"),
    ("mysql://twobits:Hx7secret@db/twobits", "URI"),
    ("twobits:Hx7secret@db/twobits", "credentials"),
])
def test_a_database_setting_that_is_neither_a_connection_string_nor_a_path_is_refused(twobits_factory, setting, problem):
    """It used to start the server on a private SQLite file named after the text, password included."""
    d = twobits_factory(name="db-refused", autostart=False, extra={"database": setting})
    d.start_sandbox()
    code, output = serve_once(d)
    assert code == 1 and "configuration error: database:" in output and problem in output, output
    assert "Hx7" not in output, output
    assert not [p for p in d.dir.iterdir() if "Hx7" in p.name], list(d.dir.iterdir())


def test_apple_base_url_credentials_holding_slash_hash_or_question_mark_never_show(twobits_factory):
    d = twobits_factory(autostart=False)
    # curl ends the user info at the last '@' before the host: the password may hold '@' too.
    d.config["apple"]["base_url"] = f"http://operator:Hx7/pw#r@Hx8?s@127.0.0.1:{d.sandbox_port}"
    rewrite_config(d)
    d.start()
    listening = [json.loads(line) for line in log_lines(d) if '"listening"' in line]
    assert listening and listening[0]["apple"] == f"http://***@127.0.0.1:{d.sandbox_port}", listening
    d.stop()
    text = d.logs["server"].read_text(errors="replace")
    assert "Hx7" not in text and "Hx8" not in text and "pw#r" not in text and "operator" not in text, text

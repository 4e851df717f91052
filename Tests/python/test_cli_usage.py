"""The `twobits` command line: usage and exit codes, and `twobits admin` against a running server
(human and --json output, refusals named, an unreachable server reported)."""
import json
import os
import re
import sqlite3
import subprocess

from conftest import REPO, free_port


def test_usage_and_exit_codes(twobits):
    assert twobits.cli(check=False).returncode == 2
    assert "usage" in twobits.cli("--help").stdout.lower()
    unknown = twobits.cli("frobnicate", check=False)
    assert unknown.returncode == 2 and "unknown command frobnicate" in unknown.stderr
    assert twobits.cli("admin", check=False).returncode == 2
    assert "twobits admin <action>" in twobits.cli("admin", "--help").stdout
    assert "unknown admin action frob" in twobits.cli("admin", "frob", "--key", "k", check=False).stderr
    assert "unknown keys action frob" in twobits.cli("keys", "frob", "--dir", "keys", check=False).stderr
    missing = twobits.cli("admin", "pending", check=False, env={"TWOBITS_ADMIN_KEY": ""})
    assert missing.returncode != 0 and "no admin key: set TWOBITS_ADMIN_KEY or pass --key-file FILE" in missing.stderr


def test_admin_commands_against_a_running_server(twobits):
    key = twobits.api_keys["ops"]
    common = ["--server", twobits.url, "--key", key]
    assert "no pending bans or unbans" in twobits.cli("admin", "pending", *common).stdout
    twobits.cli("admin", "ban", "--install-id=inst-9", "--reason", "cli test", *common)
    listed = twobits.cli("admin", "pending", *common).stdout
    assert "inst-9" in listed and "cli test" in listed
    as_json = json.loads(twobits.cli("admin", "pending", "--json", *common).stdout)
    assert as_json["pending"][0]["install_id"] == "inst-9"
    audit = json.loads(twobits.cli("admin", "audit", "--limit", "5", "--json", *common).stdout)
    assert audit["events"][0]["action"] == "ban.pending"
    # A refusal from the server is printed with its code; a missing token file is a usage error.
    refused = twobits.cli("admin", "ban", "--install-id", "bad id!", "--reason", "x", *common, check=False)
    assert refused.returncode != 0 and "400" in refused.stdout + refused.stderr
    no_file = twobits.cli("admin", "state", "--token-file", "/nonexistent/token", *common, check=False)
    assert no_file.returncode != 0 and "cannot read --token-file" in no_file.stderr
    unreachable = twobits.cli("admin", "pending", "--server", f"http://127.0.0.1:{free_port()}", "--key", key, check=False)
    assert unreachable.returncode == 1 and "cannot reach" in unreachable.stderr


def test_version_and_a_missing_required_option(twobits_factory):
    d = twobits_factory(autostart=False)
    version = d.cli("--version").stdout.strip()
    assert re.fullmatch(r"twobits \d+\.\d+\.\d+ \(commit \S+\)", version), version
    assert d.cli("version").stdout.strip() == version
    # No --config and no TWOBITS_CONFIG: a usage error naming both, before anything starts.
    serve = d.cli("serve", check=False, env={"TWOBITS_CONFIG": ""})
    assert serve.returncode == 2 and "--config is required (or set TWOBITS_CONFIG)" in serve.stderr, serve


def test_the_binary_names_the_commit_it_was_built_from(twobits_factory):
    """The suite's binary is built by the Makefile (or the mutation runner), which writes the commit in: the
    checkout's HEAD, or TWOBITS_GIT_COMMIT in a copy without .git."""
    expected = os.environ.get("TWOBITS_GIT_COMMIT")
    if not expected:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True)
        assert head.returncode == 0, f"neither a git checkout nor TWOBITS_GIT_COMMIT: {head.stderr}"
        expected = head.stdout.strip()
    version = twobits_factory(autostart=False).cli("--version").stdout.strip()
    assert re.fullmatch(rf"twobits \d+\.\d+\.\d+ \(commit {re.escape(expected)}(-dirty)?\)", version), (version, expected)


def test_migrate_a_sqlite_ledger(twobits):
    ledger = twobits.dir / "twobits.sqlite"
    with sqlite3.connect(ledger) as db:
        version = db.execute("PRAGMA user_version").fetchone()[0]
    assert version > 0
    # A ledger already at the build's version: nothing to apply, and it says so.
    done = twobits.cli("migrate", "--database", str(ledger))
    assert done.stdout.strip() == f"schema version {version} → {version}"
    # A path with no ledger is refused, not created empty.
    missing = twobits.cli("migrate", "--database", str(twobits.dir / "typo.sqlite"), check=False)
    assert missing.returncode == 2 and "no SQLite ledger at" in missing.stderr
    assert not (twobits.dir / "typo.sqlite").exists()


def test_admin_state_reads_the_token_from_a_file(twobits):
    token_file = twobits.dir / "token.txt"
    token_file.write_text(twobits.mint(twobits.new_device()) + "\n")
    common = ["--server", twobits.url, "--key", twobits.api_keys["ops"]]
    state = twobits.cli("admin", "state", "--token-file", str(token_file), *common).stdout
    assert "bits:        never set" in state and "banned:      no" in state, state
    twobits.cli("admin", "ban", "--token-file", str(token_file), "--reason", "from a file", *common)
    assert "banned:      yes" in twobits.cli("admin", "state", "--token-file", str(token_file), *common).stdout


def test_sandbox_start_failures_are_reported(twobits):
    common = ["sandbox", "--team-id", "TEAMID1234", "--key-id", "KEYID12345", "--key-file", str(twobits.apple_key)]
    # The running sandbox holds its port: a second one says why it cannot listen, exit 1.
    taken = twobits.cli(*common, "--listen", f"127.0.0.1:{twobits.sandbox_port}", check=False)
    assert taken.returncode == 1 and taken.stderr.startswith("twobits sandbox:"), taken
    unwritable = twobits.cli(*common, "--listen", f"127.0.0.1:{free_port()}", "--app-attest-root", "/nonexistent/dir/root.pem", check=False)
    assert unwritable.returncode == 2 and "cannot write --app-attest-root /nonexistent/dir/root.pem" in unwritable.stderr, unwritable

"""The `twobits` command line: usage and exit codes, and `twobits admin` against a running server
(human and --json output, refusals named, an unreachable server reported)."""
import json

from conftest import free_port


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

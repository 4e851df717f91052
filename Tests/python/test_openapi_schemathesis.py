"""docs/openapi.yaml and the real server agree: schemathesis, every check, with each role's API key.

Two deployments (sandbox and server each): promotion and ban bits with a promotion `spring` active
since 2020, for the promotions and admin clients, and the reinstall counter for the tokens client (so
POST /v1/installs answers 200, not 409). For each client of CLIENT_ROLES (roles tokens, promotions,
admin), two runs of `schemathesis run --checks all` with that client's key:

- the operations the client may call (`x-twobits-role` public, any, or one of its roles): phases
  examples, coverage (the schema's boundaries: lengths, patterns, types, null, missing and unknown
  fields, other methods, requests without the key) and fuzzing, MAX_EXAMPLES per operation. None may
  answer only with 401/403: that would be a route registered with the wrong role.
- every other operation: a few fuzzed requests each; every one sent with the key must be refused
  with the documented 403 (openapi_hooks.py logs each answer for this).

Generation is deterministic (no seed, no example database), on one worker. Stateful testing is off:
the document has no links. openapi_hooks.py swaps schema-valid device tokens for fresh sandbox
tokens, so the success answers are checked too (see there why). Any failure fails the test, with
schemathesis' report (a curl line per failure; keys and device tokens filtered out) printed.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import CLIENT_ROLES, REPO

HERE = Path(__file__).resolve().parent
SPEC_PATH = REPO / "docs" / "openapi.yaml"
SCHEMATHESIS_VERSION = "4.32.5"  # the pin in .ci/install-deps.sh
MAX_EXAMPLES = 10
OTHER_ROLES_EXAMPLES = 3
RUN_TIMEOUT = 300  # seconds for one run; it takes a small fraction of that (printed by the test)
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def operation_roles():
    """"METHOD /path" -> (operationId, x-twobits-role), for every operation in the document."""
    spec = yaml.safe_load(SPEC_PATH.read_text())
    return {f"{method.upper()} {path}": (operation["operationId"], operation["x-twobits-role"])
            for path, item in spec["paths"].items() for method, operation in item.items() if method in METHODS}


def split_operations(client):
    """The labels of the operations `client` may call, and of the others."""
    roles = {"public", "any", *CLIENT_ROLES[client]}
    own, others = [], []
    for label, (_, role) in sorted(operation_roles().items()):
        (own if role in roles else others).append(label)
    return own, others


def answers(status_log):
    """label -> [(with_key, status)] from openapi_hooks.after_call."""
    seen = {}
    for line in status_log.read_text().splitlines() if status_log.exists() else []:
        method, path, key, status = line.split(" ")
        seen.setdefault(f"{method} {path}", []).append((key == "with-key", int(status)))
    return seen


@pytest.fixture(scope="module")
def deployments(twobits_module_factory):
    """Layout name -> deployment: promotion and ban bits with a promotion `spring` active since 2020,
    and the reinstall counter (the only layout under which POST /v1/installs answers 200)."""
    # App Attest on, trusting the sandbox's root, so the strong tier's routes are fuzzed past `not_enabled`.
    app_attest = {"app_attest": {"apps": ["TEAMID1234.com.example.fuzzed"], "root_ca_file": "appattest-root.pem",
                "receipts": {"root_ca_file": "receipt-root.pem", "enabled": False}}}
    return {
        "promotion-ban": twobits_module_factory("openapi", promotions=[{"id": "spring", "starts": "2020-01"}], extra=app_attest),
        "reinstall-counter": twobits_module_factory("openapi-counter", layout={"mode": "reinstall-counter", "ban_at": 3}, extra=app_attest),
    }


def layout_for(client):
    """The tokens role's routes (installs) need the reinstall counter; promotions need a promotion bit."""
    return "reinstall-counter" if "tokens" in CLIENT_ROLES[client] else "promotion-ban"


def run_schemathesis(deployment, client, operations, phases, max_examples, report_dir):
    """One `schemathesis run` over `operations` (labels) with `client`'s key (from the environment, never
    argv). Returns every answer: label -> [(sent with the key, status)]."""
    command = [
        sys.executable, "-m", "schemathesis.cli", "--no-color", "--config-file", str(HERE / "schemathesis.toml"),
        "run", str(SPEC_PATH),
        "--url", deployment.url,
        "--checks", "all",
        "--phases", phases,
        "--max-examples", str(max_examples),
        "--generation-deterministic",
        "--workers", "1",  # more workers share generation caches unsafely in this version
        "--request-timeout", "30",
        "--suppress-health-check", "all",
        "--report-dir", str(report_dir),
    ]
    ids = operation_roles()
    for label in operations:
        command += ["--include-operation-id", ids[label][0]]
    status_log = report_dir.parent / (report_dir.name + "-answers.txt")
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "openapi_hooks",
        "TWOBITS_SANDBOX_URL": deployment.sandbox_url,
        "TWOBITS_API_KEY": deployment.api_keys[client],
        "TWOBITS_STATUS_LOG": str(status_log),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
    }
    started = time.monotonic()
    result = subprocess.run(command, cwd=report_dir.parent, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    totals = [line.strip() for line in result.stdout.splitlines() if " generated, " in line]
    print(f"\nschemathesis as {client} ({', '.join(CLIENT_ROLES[client])}), {len(operations)} operations, "
          f"phases {phases}: {time.monotonic() - started:.1f} s, {totals[-1] if totals else 'no totals'}")
    report = f"exit {result.returncode}\n{result.stdout[-20000:]}\n{result.stderr[-4000:]}"
    assert deployment.api_keys[client] not in result.stdout + result.stderr, "an API key reached schemathesis' report"
    assert result.returncode == 0, (
        f"schemathesis found mismatches between docs/openapi.yaml and the server (client {client}, "
        f"roles {CLIENT_ROLES[client]}): {report}\n--- server log ---\n{deployment.server_log()[-4000:]}")
    assert totals and not totals[-1].startswith("0 generated"), f"schemathesis ran no test case: {report}"
    return answers(status_log)


def test_schemathesis_is_the_pinned_version():
    import schemathesis
    assert schemathesis.__version__ == SCHEMATHESIS_VERSION, \
        f"schemathesis {schemathesis.__version__} installed; the suite is tuned for {SCHEMATHESIS_VERSION} (.ci/install-deps.sh --test)"


def test_every_operation_names_its_role():
    roles = {role for _, role in operation_roles().values()}
    assert roles == {"public", "any", "tokens", "promotions", "admin"}, roles


@pytest.mark.parametrize("client", sorted(CLIENT_ROLES))
def test_openapi_document_matches_server(deployments, client, tmp_path):
    deployment = deployments[layout_for(client)]
    own, others = split_operations(client)
    seen = run_schemathesis(deployment, client, own, "examples,coverage,fuzzing", MAX_EXAMPLES, tmp_path / "own")
    assert sorted(seen) == own, f"operations never called: {sorted(set(own) - set(seen))}"
    # Each of the client's own operations must answer something besides 401/403, or the route is
    # registered with the wrong role and the run checked only refusals.
    refused_only = [label for label in own if all(status in (401, 403) for _, status in seen[label])]
    assert not refused_only, f"{client}'s own operations answered only with 401/403: {refused_only}"

    seen = run_schemathesis(deployment, client, others, "fuzzing", OTHER_ROLES_EXAMPLES, tmp_path / "others")
    assert sorted(seen) == others, f"operations never called: {sorted(set(others) - set(seen))}"
    let_through = {label: sorted({status for with_key, status in seen[label] if with_key and status != 403}) for label in others}
    let_through = {label: statuses for label, statuses in let_through.items() if statuses}
    assert not let_through, f"operations outside {client}'s roles answered its key with other than 403: {let_through}"

"""docs/examples/relay.py, the main API's side of the client library's relay, in front of a live `twobits serve`:
the app's calls forwarded with the main API's key, `app_attest_status` read and removed, TwoBits' answers
passed back unchanged; and the Swift demo client (docs/examples/ClientDemo) running its whole flow through it."""
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from conftest import REPO, free_port

APP_ID = "TEAMID1234.com.example.relayed"
SESSION = "session-of-a-signed-in-user"


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory(extra={"app_attest": {"apps": [APP_ID], "environment": "production",
                                                        "root_ca_file": "appattest-root.pem"}})


@pytest.fixture(scope="module")
def relay(deployment, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("relay") / "twobits-key"
    key_file.write_text(deployment.api_keys["main"])
    port = free_port()
    process = subprocess.Popen([sys.executable, str(REPO / "docs" / "examples" / "relay.py"), "--listen", f"127.0.0.1:{port}",
                                "--twobits", deployment.url, "--api-key-file", str(key_file), "--session", SESSION],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "relay listening" in process.stdout.readline()
    yield f"http://127.0.0.1:{port}"
    process.kill()
    process.wait(timeout=10)


def post(url, body, session=SESSION):
    headers = {"Content-Type": "application/json"}
    if session:
        headers["Authorization"] = "Bearer " + session
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refusal:
        return refusal.code, json.loads(refusal.read())


def test_a_call_without_a_session_is_refused_by_the_relay(relay):
    status, body = post(relay + "/v1/app-attest/challenges", {}, session=None)
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_a_challenge_is_forwarded_with_the_main_apis_key(relay):
    status, body = post(relay + "/v1/app-attest/challenges", {})
    assert status == 201 and len(body["challenge"]) == 43, body


def test_the_fallback_exchange_drops_app_attest_status_and_passes_refusals_through(relay, deployment):
    token = deployment.mint(deployment.new_device())
    status, body = post(relay + "/v1/fallback-tokens", {"device_token": token, "app_attest_status": "unsupported"})
    assert status == 201 and body["tier"] == "devicecheck", body
    status, body = post(relay + "/v1/fallback-tokens", {"device_token": token})
    assert status == 409 and body["error"]["code"] == "device_token_reused", body


def test_the_swift_client_runs_its_flow_through_the_relay(relay, deployment):
    demo = REPO / "docs" / "examples" / "ClientDemo"
    build = subprocess.run(["swift", "build", "--package-path", str(demo)], capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-2000:]
    binary = subprocess.run(["swift", "build", "--package-path", str(demo), "--show-bin-path"], capture_output=True, text=True,
                            timeout=120).stdout.strip() + "/client-demo"
    # The demo sends its --api-key as the Authorization bearer: through the relay, that is the user's session.
    result = subprocess.run([binary, "--server", relay, "--sandbox", deployment.sandbox_url, "--api-key", SESSION,
                             "--app-id", APP_ID, "--environment", "production"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "iPhone 1 attests its key: tier appattest" in result.stdout
    assert "iPhone 1 asserts: tier appattest (limited use)" in result.stdout
    assert "iPhone 2 (no App Attest) falls back: tier devicecheck, app_attest_status unsupported" in result.stdout

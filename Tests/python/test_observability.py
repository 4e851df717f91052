"""The alert rules and the Grafana dashboard under deploy/, checked with Prometheus's own tools and against a
real Prometheus scraping a real `twobits serve` (Debian's `prometheus` package, installed by
.ci/install-deps.sh --test)."""
import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import REPO, current_month, free_port, http, wait_until

ALERTS = REPO / "deploy" / "prometheus" / "twobits-alerts.yml"
ALERT_TESTS = REPO / "deploy" / "prometheus" / "twobits-alerts.test.yml"
DASHBOARD = REPO / "deploy" / "grafana" / "twobits.json"
PROMOTION = "observed"


def tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: .ci/install-deps.sh --test installs Debian's prometheus package")
    return path


def dashboard_expressions():
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [(panel["title"], target["expr"]) for panel in panels for target in panel.get("targets", [])]


def alert_expressions():
    import yaml
    return [(rule["alert"], rule["expr"]) for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def metric_names(expression):
    names = set(re.findall(r"\btwobits_[a-z0-9_]+", expression))
    return {re.sub(r"_(bucket|sum|count)$", "", name) for name in names}


def test_promtool_checks_the_rules():
    result = subprocess.run([tool("promtool"), "check", "rules", str(ALERTS)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_each_alert_fires_on_a_sick_instance_and_stays_quiet_on_a_healthy_one():
    result = subprocess.run([tool("promtool"), "test", "rules", ALERT_TESTS.name], capture_output=True, text=True, cwd=ALERT_TESTS.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    import yaml
    tested = {case["alertname"] for test in yaml.safe_load(ALERT_TESTS.read_text())["tests"] for case in test["alert_rule_test"]
              if case.get("exp_alerts")}
    assert tested == {name for name, _ in alert_expressions()}, "every alert has a test where it fires"


def test_every_alert_links_a_runbook_section_that_exists():
    import yaml
    operations = (REPO / "docs" / "operations.md").read_text().lower()
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            assert rule["annotations"]["summary"]
            anchor = rule["annotations"]["runbook"].split("#")[1]
            assert f"### {rule['alert'].lower()}" in operations, f"no runbook section for {rule['alert']}"
            assert anchor == rule["alert"].lower()


@pytest.fixture(scope="module")
def observed(twobits_module_factory, tmp_path_factory):
    """A server under a short, varied load, scraped every second by a real Prometheus."""
    deployment = twobits_module_factory(autostart=False, promotions=[{"id": PROMOTION, "starts": current_month()}])
    for client in deployment.config["clients"]:
        if client["name"] == "marketing":
            client.update({"rate_per_second": 1, "burst": 3})
    deployment.config_path.write_text(json.dumps(deployment.config, indent=2))
    deployment.start()

    directory = tmp_path_factory.mktemp("prometheus")
    port = free_port()
    target = deployment.url.split("//")[1]
    (directory / "prometheus.yml").write_text(json.dumps({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ALERTS)],
        "scrape_configs": [{"job_name": "twobits", "static_configs": [{"targets": [target]}]}],
    }))
    log = open(directory / "prometheus.log", "wb")
    prometheus = subprocess.Popen([tool("prometheus"), f"--config.file={directory / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={directory / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                   "--log.level=warn"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: http("GET", url + "/-/ready", timeout=2).status == 200, 30, "prometheus", prometheus, directory / "prometheus.log")
        # Load: exchanges (one reused, one verified, one saying why it did not use App Attest), claims (some over the client's rate), an admin ban, Apple failing twice.
        tokens = [deployment.mint(deployment.new_device()) for _ in range(4)]
        issued = deployment.exchange(tokens[0])
        assert issued.status == 201, issued
        assert deployment.exchange(tokens[1], app_attest_status="unsupported").status == 201
        assert deployment.exchange(tokens[1]).status == 409
        assert deployment.verify(issued.json["token"]).status == 200
        statuses = [deployment.post(f"/v1/promotions/{PROMOTION}/claim", {"device_token": deployment.mint(deployment.new_device())},
                                    client="marketing").status for _ in range(5)]
        assert 200 in statuses and 429 in statuses, statuses
        assert deployment.post("/v1/admin/bans", {"device_token": tokens[2], "reason": "observed fraud"}, client="ops").status == 200
        # A ban ordered by install id, applied when that install next exchanges a token.
        assert deployment.post("/v1/admin/bans", {"install_id": "install-observed", "reason": "scripted"}, client="ops").status == 202
        assert deployment.exchange(deployment.mint(deployment.new_device()), install_id="install-observed").status == 403
        assert deployment.sandbox("POST", "/sandbox/v1/faults", {"kind": "status", "status": 503, "count": 50}).status in (200, 201)
        assert deployment.exchange(tokens[3]).status == 503
        deployment.sandbox("DELETE", "/sandbox/v1/faults")
        # Enough scrapes after the load for rates over a minute to have two samples.
        scraped = lambda: query(url, 'count(twobits_fallback_exchanges_refused_total)') and \
            float(query(url, 'max(timestamp(twobits_fallback_exchanges_refused_total))')[0]["value"][1]) > time.time() - 1
        wait_until(scraped, 30, "prometheus to scrape the load", prometheus, directory / "prometheus.log")
        time.sleep(3)
        yield deployment, url
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=15)
        log.close()


def query(url, expression):
    answer = http("GET", url + "/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
    assert answer.status == 200 and answer.json["status"] == "success", (expression, answer)
    return answer.json["data"]["result"]


def concrete(expression):
    """A dashboard expression with Grafana's variables replaced as Grafana would for "All" over a minute."""
    return expression.replace('"$instance"', '".*"').replace("$__rate_interval", "1m")


def test_every_dashboard_expression_returns_a_series_from_a_live_server(observed):
    _, url = observed
    empty = [f"{title}: {expression}" for title, expression in dashboard_expressions() if not query(url, concrete(expression))]
    assert not empty, "\n".join(empty)


def test_every_alert_expression_evaluates_and_prometheus_loaded_the_rules(observed):
    _, url = observed
    for name, expression in alert_expressions():
        query(url, expression)   # valid against real series (an empty answer: healthy)
    rules = http("GET", url + "/api/v1/rules").json["data"]["groups"]
    assert {rule["name"] for group in rules for rule in group["rules"]} == {name for name, _ in alert_expressions()}
    for group in rules:
        for rule in group["rules"]:
            assert rule["health"] == "ok", rule


def test_every_metric_named_by_the_dashboard_and_the_alerts_is_exported(observed):
    deployment, _ = observed
    exposition = http("GET", deployment.url + "/metrics").raw.decode()
    exported = set(re.findall(r"^# TYPE (\S+) ", exposition, re.M))
    named = set()
    for _, expression in dashboard_expressions() + alert_expressions():
        named |= metric_names(expression)
    missing = named - exported
    assert not missing, f"named but not exported: {sorted(missing)}"

"""Admin orders with the console's typed confirmation, and the audit trail's filters, over real HTTP."""
import pytest

from conftest import http


@pytest.fixture(scope="module")
def deployment(twobits_module_factory):
    return twobits_module_factory()


def state(deployment, token):
    answer = deployment.post("/v1/admin/devices/state", {"device_token": token}, client="ops")
    assert answer.status == 200, answer
    return answer.json


def audit(deployment, query=""):
    answer = deployment.get("/v1/admin/audit?limit=500" + query, client="ops")
    assert answer.status == 200, answer
    return answer.json["events"]


def test_a_wrong_confirmation_writes_nothing_and_the_right_one_bans(deployment):
    device = deployment.new_device()
    token = deployment.mint(device)
    prefix = state(deployment, token)["token_sha256_prefix"]
    before = len(audit(deployment))
    wrong = deployment.post("/v1/admin/bans", {"device_token": token, "reason": "fraud", "confirm": "zzzzzz"}, client="ops")
    assert wrong.status == 400 and wrong.error_code == "confirmation_mismatch", wrong
    assert deployment.device(device)["bit1"] is False, "nothing written to Apple"
    assert len(audit(deployment)) == before, "nothing audited"
    right = deployment.post("/v1/admin/bans", {"device_token": token, "reason": "fraud", "confirm": prefix[-6:]}, client="ops")
    assert right.status == 200 and right.json["banned"] is True, right
    assert deployment.device(device)["bit1"] is True


def test_an_install_order_is_confirmed_by_the_install_id(deployment):
    wrong = deployment.post("/v1/admin/bans", {"install_id": "install-confirm-1", "reason": "x", "confirm": "nope!!"}, client="ops")
    assert wrong.status == 400 and wrong.error_code == "confirmation_mismatch"
    assert all(p["install_id"] != "install-confirm-1" for p in deployment.get("/v1/admin/bans/pending", client="ops").json["pending"])
    right = deployment.post("/v1/admin/bans", {"install_id": "install-confirm-1", "reason": "x", "confirm": "firm-1"}, client="ops")
    assert right.status == 202, right


def test_audit_filters_narrow_to_one_device_one_install_one_action_and_a_time_range(deployment):
    token = deployment.mint(deployment.new_device())
    prefix = state(deployment, token)["token_sha256_prefix"]
    assert deployment.post("/v1/admin/bans", {"device_token": token, "reason": "filtered"}, client="ops").status == 200
    assert deployment.post("/v1/admin/unbans", {"device_token": token}, client="ops").status == 200
    assert deployment.post("/v1/admin/bans", {"install_id": "install-filtered", "reason": "later"}, client="ops").status == 202
    everything = audit(deployment)
    assert len({e.get("token_sha256_prefix") for e in everything}) > 1, "the control: other devices are in the trail"

    device_events = audit(deployment, "&token_prefix=" + prefix)
    assert [e["action"] for e in device_events] == ["unban", "ban"]
    assert all(e["token_sha256_prefix"] == prefix for e in device_events)
    assert [e["subject"] for e in audit(deployment, "&install_id=install-filtered")] == ["install-filtered"]
    assert {e["action"] for e in audit(deployment, "&action=unban")} == {"unban"}
    assert {e["client"] for e in audit(deployment, "&client=ops")} == {"ops"}
    assert audit(deployment, "&since=2999-01-01T00:00:00Z") == []
    assert len(audit(deployment, "&until=2999-01-01T00:00:00Z")) == len(audit(deployment))
    combined = audit(deployment, f"&token_prefix={prefix}&action=ban")
    assert [e["action"] for e in combined] == ["ban"]


@pytest.mark.parametrize("query", ["since=yesterday", "until=2026-13-01T00:00:00Z", "token_prefix=XYZ", "install_id=bad%20id", "action="])
def test_bad_filters_are_refused_clearly(deployment, query):
    answer = deployment.get("/v1/admin/audit?" + query, client="ops")
    assert answer.status == 400 and answer.error_code == "bad_request", answer


def test_a_pending_order_is_cancelled_once_and_audited(deployment):
    assert deployment.post("/v1/admin/bans", {"install_id": "install-withdrawn", "reason": "mistake"}, client="ops").status == 202
    cancelled = deployment.request("DELETE", "/v1/admin/bans/pending/install-withdrawn", client="ops")
    assert cancelled.status == 200 and cancelled.json == {"cancelled": True, "install_id": "install-withdrawn"}, cancelled
    assert all(p["install_id"] != "install-withdrawn" for p in deployment.get("/v1/admin/bans/pending", client="ops").json["pending"])
    again = deployment.request("DELETE", "/v1/admin/bans/pending/install-withdrawn", client="ops")
    assert again.status == 404 and again.error_code == "not_found"
    events = audit(deployment, "&install_id=install-withdrawn")
    assert [e["action"] for e in events] == ["pending.cancel", "ban.pending"]
    # An install arriving after the withdrawal is not banned.
    answer = deployment.exchange(deployment.mint(deployment.new_device()), install_id="install-withdrawn")
    assert answer.status == 201, answer
    assert deployment.request("DELETE", "/v1/admin/bans/pending/install-withdrawn", client="main").status == 403


def test_one_event_opens_whole_and_an_unknown_one_is_404(deployment):
    newest = audit(deployment)[0]
    one = deployment.get(f"/v1/admin/audit/{newest['id']}", client="ops")
    assert one.status == 200 and one.json == newest, one
    assert deployment.get("/v1/admin/audit/999999999", client="ops").error_code == "not_found"
    assert deployment.get("/v1/admin/audit/zero", client="ops").status == 400


def test_the_csv_export_follows_the_filter_and_defuses_formulas(deployment):
    import csv
    import io
    hostile = "=HYPERLINK(\"http://evil\",\"x\"), then a comma"
    assert deployment.post("/v1/admin/bans", {"install_id": "install-csv", "reason": hostile}, client="ops").status == 202
    exported = deployment.get("/v1/admin/audit.csv?install_id=install-csv", client="ops")
    assert exported.status == 200, exported
    assert exported.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert 'attachment; filename="twobits-audit.csv"' == exported.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(exported.raw.decode(), newline="")))
    assert [row["subject"] for row in rows] == ["install-csv"]
    assert rows[0]["reason"] == "'" + hostile, "a formula is defused and the quotes and comma survive"
    everything = deployment.get("/v1/admin/audit.csv", client="ops")
    assert len(list(csv.reader(io.StringIO(everything.raw.decode(), newline="")))) - 1 == len(audit(deployment))

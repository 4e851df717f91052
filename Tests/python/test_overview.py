"""The console overview's figures live in the ledger: they survive a restart (the counts are flushed at
shutdown) and, with PostgreSQL, two replicas' counts add up."""
import signal

import pytest

from conftest import current_month

PROMOTIONS = [{"id": "welcome", "starts": current_month()}]


def claims(deployment, client_of=None):
    answer = (client_of or deployment).get("/v1/admin/overview", client="ops")
    assert answer.status == 200, answer
    return {(c["promotion"], c["day"]): (c["claimed"], c["refused"]) for c in answer.json["claims_per_day"]}


def claim(target, deployment):
    answer = target.post("/v1/promotions/welcome/claim", {"device_token": deployment.mint(deployment.new_device())}, client="marketing")
    assert answer.status == 200, answer


def test_the_figures_survive_a_restart(twobits_factory):
    deployment = twobits_factory(promotions=PROMOTIONS)
    claim(deployment, deployment)
    claim(deployment, deployment)
    # Within the 10 s between flushes: only the flush at shutdown can have kept these two.
    deployment.kill_server(signal.SIGTERM)
    deployment.start_server()
    counted = claims(deployment)
    assert [v for (promotion, _), v in counted.items() if promotion == "welcome"] == [(2, 0)], counted


def test_two_replicas_counts_add_up(twobits_factory, postgres):
    deployment = twobits_factory(autostart=False, promotions=PROMOTIONS, extra={"database": postgres.create_database("overview")})
    deployment.start_sandbox()
    first, second = deployment.start_replicas(2)
    claim(first, deployment)
    claim(second, deployment)
    claim(second, deployment)
    # Each replica flushes its own counts before answering; the other's arrive within its 10 s flush.
    assert [v for (p, _), v in claims(deployment, first).items() if p == "welcome"] in ([(1, 0)], [(3, 0)])
    seen = claims(deployment, second)
    assert [v for (p, _), v in seen.items() if p == "welcome"] == [(3, 0)], seen

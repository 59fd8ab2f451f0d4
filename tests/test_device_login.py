"""Black-box tests of the CLI's device login (RFC 8628): the CLI's requests and polls,
a person approving or denying through the API, and the agent the approval creates."""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from conftest import BOOTSTRAP_SECRET as SECRET
from conftest import advance_clock
from test_control_api import assert_api_error, auth, create_agent, get_connection

@pytest.fixture(scope="module")
def srv(clocked_server):
    return clocked_server


def start(srv, **body):
    r = requests.post(srv.api + "/v1/auth/device", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def poll(srv, device_code):
    return requests.post(srv.api + "/v1/auth/device/token", json={"device_code": device_code})


advance = advance_clock


def test_approved_login_hands_the_cli_a_new_agents_key_once(srv):
    person = srv.signup()
    d = start(srv, hostname="laptop-1", client_name="ana-laptop")
    assert re.fullmatch(r"[B-DF-HJ-NP-TV-Z]{4}-[B-DF-HJ-NP-TV-Z]{4}", d["user_code"])
    assert (d["interval"], d["expires_in"], d["requested_level"]) == (5, 900, "write")
    assert d["verification_uri_complete"].endswith("user_code=" + d["user_code"])
    assert_api_error(poll(srv, d["device_code"]), 400, "authorization_pending")
    # Polling faster than the interval: slow_down, and the interval grows by 5 s.
    err = assert_api_error(poll(srv, d["device_code"]), 400, "slow_down")
    assert err["interval"] == 10
    # The consent screen, typed in lower case without the dash.
    typed = d["user_code"].replace("-", "").lower()
    r = requests.get(srv.api + "/v1/auth/device/pending", headers=auth(person["api_key"]),
                     params={"user_code": typed})
    assert r.status_code == 200, r.text
    p = r.json()
    assert p["client_name"] == "ana-laptop" and p["level"] == "write"
    [w] = p["warehouses"]
    assert (w["warehouse_id"], w["my_level"], w["capped"]) == (person["warehouse_id"], "write",
                                                               False)
    r = requests.post(srv.api + "/v1/auth/device/approve", headers=auth(person["api_key"]),
                      json={"user_code": d["user_code"], "level": "read"})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["approved"] is True and a["connection"]["level"] == "read"
    assert a["label"] == "cli laptop-1"
    advance(srv, 11)
    r = poll(srv, d["device_code"])
    assert r.status_code == 200, r.text
    t = r.json()
    assert (t["kind"], t["token_type"], t["label"]) == ("agent", "api_key", "cli laptop-1")
    assert t["principal_id"] != person["principal_id"]
    assert t["connection"]["role"] == "member"
    assert t["connection"]["warehouses"] == [{"warehouse_id": person["warehouse_id"],
                                              "name": "lake", "level": "read"}]
    conn = get_connection(srv, t["api_key"]).json()
    assert conn["level"] == "read" and conn["identity"].endswith("-ro")
    # Shown once; the code is spent.
    assert_api_error(poll(srv, d["device_code"]), 400, "invalid_grant")
    # Revoking the agent revokes the connection.
    org = person["organization"]["org_id"]
    assert requests.delete(f"{srv.api}/v1/orgs/{org}/agents/{t['principal_id']}",
                           headers=auth(person["api_key"])).status_code == 200
    assert_api_error(get_connection(srv, t["api_key"]), 401, "api_key_revoked")


def test_two_approvals_of_one_code_make_one_agent(srv):
    """The consent page open in two tabs, approved in both at once: one approval wins, the
    other is told the code was decided, and the organisation gets one agent, not a second
    (suspended) one left over."""
    person = srv.signup()
    org = person["organization"]["org_id"]
    for round_ in range(4):
        d = start(srv, hostname=f"host-{round_}", client_name=f"tab-{round_}")
        approve = lambda _: requests.post(srv.api + "/v1/auth/device/approve",
                                          headers=auth(person["api_key"]),
                                          json={"user_code": d["user_code"]})
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(approve, range(2)))
        codes = sorted(r.status_code for r in answers)
        assert codes == [200, 404], [r.text for r in answers]
        agents = requests.get(f"{srv.api}/v1/orgs/{org}/agents",
                              headers=auth(person["api_key"])).json()["agents"]
        assert len(agents) == round_ + 1, agents
        assert all(a["name"].startswith("tab-") and "-" not in a["name"][4:] for a in agents)


def test_denied_expired_and_unknown_codes(srv):
    person = srv.signup()
    d = start(srv, hostname="h")
    r = requests.post(srv.api + "/v1/auth/device/approve", headers=auth(person["api_key"]),
                      json={"user_code": d["user_code"], "deny": True})
    assert r.status_code == 200 and r.json()["approved"] is False
    assert_api_error(poll(srv, d["device_code"]), 400, "access_denied")
    # Decided codes are no longer pending.
    r = requests.get(srv.api + "/v1/auth/device/pending", headers=auth(person["api_key"]),
                     params={"user_code": d["user_code"]})
    assert_api_error(r, 404, "device_code_not_found")
    d = start(srv, hostname="h")
    advance(srv, 901)
    assert_api_error(poll(srv, d["device_code"]), 400, "expired_token")
    assert_api_error(poll(srv, "dc_unknown"), 400, "invalid_grant")
    assert_api_error(requests.post(srv.api + "/v1/auth/device", json={"requested_level": "admin"}),
                     400, "invalid_value", field="requested_level")


def test_only_people_approve_and_levels_are_capped(srv):
    person = srv.signup()
    agent = create_agent(srv, person, {"name": "bot", "role": "admin", "grants": [
        {"warehouse_id": person["warehouse_id"], "level": "write"}]}).json()
    d = start(srv, hostname="h2")
    r = requests.post(srv.api + "/v1/auth/device/approve", headers=auth(agent["api_key"]),
                      json={"user_code": d["user_code"]})
    assert_api_error(r, 403, "forbidden")
    # A stranger holds nothing on this person's warehouse.
    stranger = srv.signup()
    r = requests.post(srv.api + "/v1/auth/device/approve", headers=auth(stranger["api_key"]),
                      json={"user_code": d["user_code"],
                            "warehouse_ids": [person["warehouse_id"]]})
    assert_api_error(r, 404, "warehouse_not_found")
    # The requested level is never raised by the approver.
    d = start(srv, hostname="h3", requested_level="read")
    r = requests.post(srv.api + "/v1/auth/device/approve", headers=auth(person["api_key"]),
                      json={"user_code": d["user_code"], "level": "write"})
    assert r.status_code == 200 and r.json()["connection"]["level"] == "read"

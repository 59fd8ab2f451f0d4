"""A new user's path (issue 25): what a person following the reference meets on a stack
started as scripts/start.sh starts it (no bootstrap secret, no SMTP server)."""

import re
import time
import uuid

import requests


def auth(key):
    return {"Authorization": "Bearer " + key}


def org_of(server, key):
    return requests.get(server.api + "/v1/orgs", headers=auth(key)).json()["organizations"][0]


def test_signup_code_is_written_to_the_servers_output(server):
    email = f"log-{uuid.uuid4().hex[:8]}@example.com"
    r = requests.post(server.api + "/v1/signup/start", json={"email": email})
    assert r.status_code == 202 and r.json()["delivery"] == "log", r.text
    assert "server's output" in r.json()["note"]
    code = None
    for _ in range(100):
        log = open(server.log_path).read()
        m = re.search(r"To: " + re.escape(email) + r"\n(?:.*\n)*?\s+\|\s+(\d{6})\s*\n", log)
        if m:
            code = m.group(1)
            break
        time.sleep(0.05)
    assert code, "no code for the address in the server's output"
    r = requests.post(server.api + "/v1/signup/verify",
                      json={"email": email, "code": code, "accept_terms": True})
    assert r.status_code == 201, r.text


def test_legacy_agent_warehouses_are_write_grants_with_a_deprecation_note(server, account):
    org = org_of(server, account["api_key"])["org_id"]
    wid = account["warehouse_id"]
    for field in ("warehouses", "warehouse_ids"):
        r = requests.post(server.api + f"/v1/orgs/{org}/agents", headers=auth(account["api_key"]),
                          json={"name": "legacy-" + uuid.uuid4().hex[:6], field: [wid]})
        assert r.status_code == 201, r.text
        body = r.json()
        assert [(g["warehouse_id"], g["level"]) for g in body["grants"]] == [(wid, "write")]
        assert field in body["deprecation"]


def test_revoked_agents_leave_members_and_grants(server, account):
    key, wid = account["api_key"], account["warehouse_id"]
    org = org_of(server, key)["org_id"]
    made = requests.post(server.api + f"/v1/orgs/{org}/agents", headers=auth(key),
                         json={"name": "gone-" + uuid.uuid4().hex[:6],
                               "grants": [{"warehouse_id": wid, "level": "write"}]}).json()
    before = org_of(server, key)["members"]
    grants = requests.get(server.api + f"/v1/warehouses/{wid}/grants", headers=auth(key)).json()
    assert made["agent_id"] in str(grants)
    r = requests.delete(server.api + f"/v1/orgs/{org}/agents/{made['agent_id']}",
                        headers=auth(key))
    assert r.status_code == 200, r.text
    assert org_of(server, key)["members"] == before - 1
    members = requests.get(server.api + f"/v1/orgs/{org}/members", headers=auth(key)).json()
    assert made["agent_id"] not in str(members)
    grants = requests.get(server.api + f"/v1/warehouses/{wid}/grants", headers=auth(key)).json()
    assert made["agent_id"] not in str(grants)

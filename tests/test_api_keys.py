"""Black-box tests of the caller's API keys (POST/GET/DELETE /v1/api-keys) and of the
organisation-handle check (GET /v1/handles/{handle}) against a running server."""

import re
import uuid

import requests

from test_control_api import KEY_RE, assert_api_error, auth, signup


def new_account(server):
    r = signup(server)
    assert r.status_code == 201, r.text
    return r.json()


def whoami_status(server, key):
    """A call any key may make: 200 for a live key, the error otherwise."""
    return requests.get(server.api + "/v1/orgs", headers=auth(key))


# ---------------------------------------------------------------------------- API keys

def test_create_list_and_revoke_a_second_key(server):
    account = new_account(server)
    first = account["api_key"]
    r = requests.post(server.api + "/v1/api-keys", headers=auth(first), json={"label": "ci"})
    assert r.status_code == 201, r.text
    created = r.json()
    m = re.fullmatch(KEY_RE, created["api_key"])
    assert m, created
    assert created["key_id"] == m.group(1)
    assert created["label"] == "ci"
    assert created["principal_id"] == account["principal_id"]
    assert "once" in created["note"]
    second = created["api_key"]
    assert whoami_status(server, second).status_code == 200

    listed = requests.get(server.api + "/v1/api-keys", headers=auth(second))
    assert listed.status_code == 200, listed.text
    keys = listed.json()["api_keys"]
    by_id = {k["key_id"]: k for k in keys}
    first_id = re.fullmatch(KEY_RE, first).group(1)
    assert set(by_id) == {first_id, created["key_id"]}
    assert by_id[created["key_id"]]["label"] == "ci"
    assert by_id[created["key_id"]]["revoked_at"] is None
    assert set(by_id[first_id]) == {"key_id", "label", "created_at", "last_used_at", "revoked_at"}
    # Never the secret, never its hash.
    assert m.group(2) not in listed.text and first.split("_")[-1] not in listed.text

    # Revoking the first key with the second: the first stops at once, the second works.
    r = requests.delete(f"{server.api}/v1/api-keys/{first_id}", headers=auth(second))
    assert r.status_code == 200, r.text
    assert r.json() == {"key_id": first_id, "revoked": True}
    assert_api_error(whoami_status(server, first), 401, "api_key_revoked")
    assert whoami_status(server, second).status_code == 200
    keys = requests.get(server.api + "/v1/api-keys", headers=auth(second)).json()["api_keys"]
    revoked = {k["key_id"]: k for k in keys}[first_id]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*Z", revoked["revoked_at"]), revoked

    # Audited, both ways.
    events = requests.get(server.api + "/v1/audit", headers=auth(second),
                          params={"action": "api_key.*"}).json()["events"]
    assert {(e["action"], e["target_id"]) for e in events} >= {
        ("api_key.create", created["key_id"]), ("api_key.revoke", first_id)}


def test_last_used_at_records_a_keys_use(server):
    account = new_account(server)
    first = account["api_key"]
    created = requests.post(server.api + "/v1/api-keys", headers=auth(first),
                            json={"label": "unused"}).json()

    def listed():
        keys = requests.get(server.api + "/v1/api-keys", headers=auth(first)).json()["api_keys"]
        return {k["key_id"]: k for k in keys}

    keys = listed()
    assert keys[created["key_id"]]["last_used_at"] is None
    first_id = [k for k in keys if k != created["key_id"]][0]
    assert keys[first_id]["last_used_at"].endswith("Z")
    assert whoami_status(server, created["api_key"]).status_code == 200
    assert listed()[created["key_id"]]["last_used_at"].endswith("Z")
    # An agent's last use is its keys' newest.
    org = account["organization"]["org_id"]
    agent = requests.post(server.api + f"/v1/orgs/{org}/agents", headers=auth(first),
                          json={"name": "bot-" + uuid.uuid4().hex[:6]}).json()
    assert agent["last_used_at"] is None
    assert whoami_status(server, agent["api_key"]).status_code == 200
    agents = requests.get(server.api + f"/v1/orgs/{org}/agents", headers=auth(first)).json()
    [a] = [a for a in agents["agents"] if a["agent_id"] == agent["agent_id"]]
    assert a["last_used_at"].endswith("Z")


def test_another_accounts_key_is_not_found_and_stays_live(server):
    alice, bob = new_account(server), new_account(server)
    bob_id = re.fullmatch(KEY_RE, bob["api_key"]).group(1)
    r = requests.delete(f"{server.api}/v1/api-keys/{bob_id}", headers=auth(alice["api_key"]))
    err = assert_api_error(r, 404, "api_key_not_found")
    assert "api-key list" in err["remedy"]
    assert whoami_status(server, bob["api_key"]).status_code == 200
    r = requests.delete(f"{server.api}/v1/api-keys/{uuid.uuid4().hex[:16]}",
                        headers=auth(alice["api_key"]))
    assert_api_error(r, 404, "api_key_not_found")
    # Alice's list holds only her own key.
    keys = requests.get(server.api + "/v1/api-keys", headers=auth(alice["api_key"])).json()
    assert [k["key_id"] for k in keys["api_keys"]] == [
        re.fullmatch(KEY_RE, alice["api_key"]).group(1)]


def test_bad_labels_are_refused_and_create_nothing(server):
    key = new_account(server)["api_key"]
    for body, field in (({"label": "x" * 101}, "label"), ({"label": "a\nb"}, "label"),
                        ({"label": 7}, "label")):
        r = requests.post(server.api + "/v1/api-keys", headers=auth(key), json=body)
        assert_api_error(r, 400, "invalid_value", field=field)
    r = requests.post(server.api + "/v1/api-keys", headers=auth(key), data="not json")
    assert_api_error(r, 400, "invalid_json")
    keys = requests.get(server.api + "/v1/api-keys", headers=auth(key)).json()["api_keys"]
    assert len(keys) == 1


def test_api_key_routes_need_a_key(server):
    for method, path in (("POST", "/v1/api-keys"), ("GET", "/v1/api-keys"),
                         ("DELETE", "/v1/api-keys/0123456789abcdef")):
        r = requests.request(method, server.api + path)
        assert_api_error(r, 401, "invalid_api_key")
        r = requests.request(method, server.api + path,
                             headers=auth("al_live_0123456789abcdef_" + "x" * 32))
        assert_api_error(r, 401, "invalid_api_key")


# ---------------------------------------------------------------------------- handles

def handle(server, h):
    r = requests.get(f"{server.api}/v1/handles/{h}")
    assert r.status_code == 200, r.text
    return r.json()


def test_handles(server):
    free = "h-" + uuid.uuid4().hex[:10]
    body = handle(server, free)
    assert body == {"handle": free, "valid": True, "available": True, "reason": None,
                    "suggestion": None, "pattern": "^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$"}
    for bad in ("a", "-ab", "ab-", "Acme", "a_b", "x" * 41):
        body = handle(server, bad)
        assert (body["valid"], body["available"], body["reason"]) == (False, False, "invalid"), body
        assert re.fullmatch(body["pattern"], body["suggestion"]), body
    body = handle(server, "admin")
    assert (body["valid"], body["available"], body["reason"]) == (False, False, "reserved")
    assert body["suggestion"] == "admin-2"


def test_a_signed_up_workspace_handle_is_taken(server):
    account = new_account(server)
    orgs = requests.get(server.api + "/v1/orgs", headers=auth(account["api_key"])).json()
    taken = orgs["organizations"][0]["handle"]
    body = handle(server, taken)
    assert (body["valid"], body["available"], body["reason"]) == (True, False, "taken"), body
    assert body["suggestion"] and body["suggestion"] != taken
    assert handle(server, body["suggestion"])["available"] is True

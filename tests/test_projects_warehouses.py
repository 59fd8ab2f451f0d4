"""Black-box tests of the caller's projects (GET /v1/projects) and of the warehouses of a
project with the caller's level on each (GET /v1/warehouses)."""

import requests

from test_control_api import assert_api_error, auth, signup


def new_account(server, **body):
    r = signup(server, **body)
    assert r.status_code == 201, r.text
    return r.json()


def projects(server, key):
    r = requests.get(server.api + "/v1/projects", headers=auth(key))
    assert r.status_code == 200, r.text
    return r.json()["projects"]


def warehouses(server, key, **params):
    return requests.get(server.api + "/v1/warehouses", headers=auth(key), params=params)


def test_signup_project_is_listed_with_its_placement(server):
    account = new_account(server, workspace="acme-data")
    listed = projects(server, account["api_key"])
    assert [p["project_id"] for p in listed] == [account["project_id"]]
    p = listed[0]
    assert p["name"] == "acme-data"
    assert p["org_id"] == account["organization"]["org_id"]
    assert p["provider"] and p["region"]
    assert p["created_at"].endswith("Z")


def test_warehouses_of_a_project_by_id_by_name_and_by_default(server):
    account = new_account(server, workspace="wh-list")
    key = account["api_key"]
    by_id = warehouses(server, key, project=account["project_id"])
    assert by_id.status_code == 200, by_id.text
    body = by_id.json()
    assert body["project_id"] == account["project_id"]
    assert body["project"] == "wh-list"
    assert body["catalog_uri"] == server.catalog
    [w] = body["warehouses"]
    assert w["warehouse_id"] == account["warehouse_id"]
    assert w["warehouse"] == "s3://w-" + account["warehouse_id"] + "/"
    assert (w["my_level"], w["my_via"]) == ("write", "admin")
    assert body["limit"] == 3 and body["headroom"] == 2
    # The name works wherever the id does; with one project the parameter may be left out.
    assert warehouses(server, key, project="wh-list").json() == body
    assert warehouses(server, key).json() == body
    assert warehouses(server, key, project_id=account["project_id"]).json() == body


def test_unknown_or_foreign_project_is_404_naming_both_forms(server):
    mine = new_account(server)
    other = new_account(server)
    for project in ("no-such-project", other["project_id"]):
        r = warehouses(server, mine["api_key"], project=project)
        assert_api_error(r, 404, "project_not_found", field="project")
        remedy = r.json()["error"]["remedy"]
        assert "project_id" in remedy and "name" in remedy and "project list" in remedy


def agent(server, account, name, grants):
    r = requests.post(server.api + f"/v1/orgs/{account['organization']['org_id']}/agents",
                      headers=auth(account["api_key"]), json={"name": name, "grants": grants})
    assert r.status_code == 201, r.text
    return r.json()["api_key"]


def test_agents_see_their_grants_and_never_an_ungranted_warehouse(server):
    account = new_account(server)
    reader = agent(server, account, "reader",
                   [{"warehouse_id": account["warehouse_id"], "level": "read"}])
    body = warehouses(server, reader).json()
    [w] = body["warehouses"]
    assert (w["warehouse_id"], w["my_level"], w["my_via"]) == (
        account["warehouse_id"], "read", "grant")

    nothing = agent(server, account, "nothing", [])
    r = warehouses(server, nothing, project=account["project_id"])
    assert r.status_code == 200, r.text
    assert r.json()["warehouses"] == []
    # The agent's projects are its organisation's.
    assert [p["project_id"] for p in projects(server, nothing)] == [account["project_id"]]


def test_listing_needs_a_key(server):
    r = requests.get(server.api + "/v1/warehouses")
    assert_api_error(r, 401, "invalid_api_key")
    r = requests.get(server.api + "/v1/projects", headers=auth("al_live_nope_nope"))
    assert r.status_code == 401, r.text


# ---------------------------------------------------------------------------- POST /v1/projects

def create_project(server, key, idempotency_key=None, **body):
    headers = auth(key)
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return requests.post(server.api + "/v1/projects", headers=headers, json=body)


def test_create_project_is_listed_audited_and_has_a_fixed_placement(server):
    account = new_account(server)
    key = account["api_key"]
    r = create_project(server, key, name="analytics")
    assert r.status_code == 201, r.text
    p = r.json()
    assert p["name"] == "analytics" and p["placement_immutable"] is True
    assert p["org_id"] == account["organization"]["org_id"]
    assert p["project_id"].startswith("pr_") and p["project_id"] != account["project_id"]
    assert {x["project_id"] for x in projects(server, key)} == {account["project_id"],
                                                                 p["project_id"]}
    # The new project has no warehouse yet; without a project the organisation's default
    # project (its first, from signup) is meant, however many there are.
    r = warehouses(server, key, project="analytics")
    assert r.status_code == 200 and r.json()["warehouses"] == [], r.text
    r = warehouses(server, key)
    assert r.status_code == 200 and r.json()["project_id"] == account["project_id"], r.text
    events = requests.get(server.api + "/v1/audit", headers=auth(key),
                          params={"action": "project.*"}).json()["events"]
    assert [(e["action"], e["target_id"]) for e in events] == [("project.create",
                                                                p["project_id"])]


def test_create_project_refusals_change_nothing(server):
    account = new_account(server, workspace="taken-name")
    key = account["api_key"]
    assert_api_error(create_project(server, key), 400, "missing_field", field="name")
    assert_api_error(create_project(server, key, name="x" * 65), 400, "invalid_value",
                     field="name")
    assert_api_error(create_project(server, key, name="a\nb"), 400, "invalid_value", field="name")
    assert_api_error(create_project(server, key, name=7), 400, "invalid_value", field="name")
    r = create_project(server, key, name="p", provider="aws", region="eu-west-1")
    assert_api_error(r, 400, "unsupported_placement")
    assert r.json()["error"]["available"]
    assert_api_error(create_project(server, key, name="p", org_id="o_nope"), 404, "org_not_found")
    r = create_project(server, key, name="taken-name")
    assert_api_error(r, 409, "already_exists", project_id=account["project_id"])
    assert [p["project_id"] for p in projects(server, key)] == [account["project_id"]]


def test_idempotency_key_replays_and_is_refused_elsewhere(server):
    account = new_account(server)
    key = account["api_key"]
    first = create_project(server, key, idempotency_key="k-1", name="once")
    assert first.status_code == 201, first.text
    again = create_project(server, key, idempotency_key="k-1", name="once")
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert sum(p["name"] == "once" for p in projects(server, key)) == 1
    # Another caller's key space is its own.
    other = new_account(server)
    r = create_project(server, other["api_key"], idempotency_key="k-1", name="once")
    assert r.status_code == 201 and r.json()["project_id"] != first.json()["project_id"], r.text


def test_only_an_admin_creates_projects(server):
    account = new_account(server)
    member_agent = agent(server, account, "builder", [])
    assert_api_error(create_project(server, member_agent, name="nope"), 403, "insufficient_role")
    assert "nope" not in {p["name"] for p in projects(server, account["api_key"])}

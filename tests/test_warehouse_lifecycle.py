"""Black-box tests of creating and deleting catalogs (POST/DELETE /v1/warehouses) and of
the grants on them (GET/PUT/DELETE /v1/warehouses/{id}/grants)."""

import uuid

import boto3
import botocore.exceptions
import pytest
import requests

from conftest import catalog_token
from test_control_api import assert_api_error, auth, create_agent, get_connection
from test_projects_warehouses import new_account, warehouses


def create_warehouse(server, key, idempotency_key=None, **body):
    headers = auth(key)
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    return requests.post(server.api + "/v1/warehouses", headers=headers, json=body)


def delete_warehouse(server, key, warehouse, confirm):
    return requests.delete(server.api + f"/v1/warehouses/{warehouse}", headers=auth(key),
                           json={"confirm": confirm} if confirm is not None else {})


def s3_for(server, connection):
    cred = connection["catalog_credential"]
    return boto3.client("s3", endpoint_url=server.s3, aws_access_key_id=cred["client_id"],
                        aws_secret_access_key=cred["client_secret"], region_name="us-east-1")


def audit(server, key, action):
    r = requests.get(server.api + "/v1/audit", headers=auth(key), params={"action": action})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def test_create_warehouse_serves_a_working_catalog(server):
    account = new_account(server)
    key = account["api_key"]
    r = create_warehouse(server, key, project_id=account["project_id"], name="analytics")
    assert r.status_code == 201, r.text
    w = r.json()
    wid = w["warehouse_id"]
    assert w["name"] == "analytics" and w["project_id"] == account["project_id"]
    assert w["warehouse"] == f"s3://w-{wid}/" and w["warehouse_name"] == f"w-{wid}"
    assert w["catalog_uri"] == server.catalog
    assert w["maintenance"] == {"compaction": True, "target_file_size_mb": 128,
                                "snapshot_retention_days": 7, "max_snapshots": 20,
                                "disableable": False}
    listed = warehouses(server, key).json()["warehouses"]
    assert {x["name"]: (x["my_level"], x["my_via"]) for x in listed}["analytics"] == \
        ("write", "admin")
    # The catalog credential works on the new catalog and its blob bucket.
    conn = get_connection(server, key, warehouse_id="analytics").json()
    assert conn["warehouse_id"] == wid and conn["level"] == "write"
    token = catalog_token(server, conn["catalog_credential"]["client_id"],
                          conn["catalog_credential"]["client_secret"])
    r = requests.post(server.catalog + f"/v1/w-{wid}/namespaces",
                      headers={"Authorization": "Bearer " + token}, json={"namespace": ["ns"]})
    assert r.status_code == 200, r.text
    s3_for(server, conn).put_object(Bucket=f"b-{wid}", Key="hello.txt", Body=b"hi")
    [event] = audit(server, key, "warehouse.create")
    assert event["target_id"] == wid and event["detail"] == {"name": "analytics"}


def test_create_warehouse_refusals_change_nothing(server):
    account = new_account(server)
    key, project = account["api_key"], account["project_id"]
    assert_api_error(create_warehouse(server, key, project_id=project), 400, "missing_field",
                     field="name")
    assert_api_error(create_warehouse(server, key, project_id=project, name=7), 400,
                     "invalid_value", field="name")
    assert_api_error(create_warehouse(server, key, project_id=project, name="lake"), 409,
                     "already_exists")
    assert_api_error(create_warehouse(server, key, project_id="nope", name="x"), 404,
                     "project_not_found")
    assert [w["name"] for w in warehouses(server, key).json()["warehouses"]] == ["lake"]
    assert audit(server, key, "warehouse.create") == []


def test_warehouses_per_project_limit_names_limit_and_current(server):
    account = new_account(server)
    key, project = account["api_key"], account["project_id"]
    for name in ("two", "three"):
        assert create_warehouse(server, key, project_id=project, name=name).status_code == 201
    r = create_warehouse(server, key, project_id=project, name="four")
    assert_api_error(r, 409, "limit_exceeded", limit_value=3, current=3)
    assert "remedy" in r.json()["error"]
    assert len(warehouses(server, key).json()["warehouses"]) == 3


def test_idempotency_key_replays_the_first_warehouse(server):
    account = new_account(server)
    key, project = account["api_key"], account["project_id"]
    idem = "wh-" + uuid.uuid4().hex
    first = create_warehouse(server, key, idem, project_id=project, name="once")
    assert first.status_code == 201, first.text
    again = create_warehouse(server, key, idem, project_id=project, name="once")
    assert again.status_code == 201 and again.json() == first.json()
    assert len(warehouses(server, key).json()["warehouses"]) == 2
    # The same key on another endpoint is refused.
    r = requests.post(server.api + "/v1/projects", headers={**auth(key), "Idempotency-Key": idem},
                      json={"name": "p2"})
    assert_api_error(r, 409, "idempotency_key_reused")


def test_member_agent_cannot_create_warehouses(server):
    account = new_account(server)
    agent = create_agent(server, account, {"name": "builder"})
    assert agent.status_code == 201, agent.text
    r = create_warehouse(server, agent.json()["api_key"], project_id=account["project_id"],
                         name="x")
    assert_api_error(r, 403, "insufficient_role")


def test_delete_warehouse_needs_the_typed_name_and_removes_everything(server):
    account = new_account(server)
    key = account["api_key"]
    w = create_warehouse(server, key, project_id=account["project_id"], name="doomed").json()
    wid = w["warehouse_id"]
    conn = get_connection(server, key, warehouse_id=wid).json()
    s3 = s3_for(server, conn)
    s3.put_object(Bucket=f"b-{wid}", Key="a.txt", Body=b"12345")
    token = catalog_token(server, conn["catalog_credential"]["client_id"],
                          conn["catalog_credential"]["client_secret"])
    h = {"Authorization": "Bearer " + token}
    assert requests.post(server.catalog + f"/v1/w-{wid}/namespaces", headers=h,
                         json={"namespace": ["ns"]}).status_code == 200
    r = requests.post(server.catalog + f"/v1/w-{wid}/namespaces/ns/tables", headers=h,
                      json={"name": "t", "schema": {"type": "struct", "fields": [
                          {"id": 1, "name": "a", "type": "int", "required": False}]}})
    assert r.status_code == 200, r.text
    # Refusals: no or a wrong confirmation, a non-admin.
    r = delete_warehouse(server, key, wid, None)
    assert_api_error(r, 400, "confirmation_required", confirm_with="doomed")
    assert_api_error(delete_warehouse(server, key, wid, "Doomed"), 400, "confirmation_required")
    agent = create_agent(server, account, {"name": "a1", "grants": [
        {"warehouse_id": wid, "level": "write"}]}).json()
    assert_api_error(delete_warehouse(server, agent["api_key"], wid, "doomed"), 403,
                     "forbidden")
    assert s3.head_object(Bucket=f"b-{wid}", Key="a.txt")["ContentLength"] == 5
    # The deletion, by name.
    r = delete_warehouse(server, key, "doomed", "doomed")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["deleted"] is True and body["warehouse_id"] == wid
    assert body["tables_dropped"] == 1
    assert body["grants_removed"] == 2  # the creator's and the agent's
    assert body["storage"] == {"step": "ok"} and body["storage_complete"] is True
    assert body["bytes_at_deletion"] >= 5
    assert [x["name"] for x in warehouses(server, key).json()["warehouses"]] == ["lake"]
    assert_api_error(get_connection(server, key, warehouse_id=wid), 404, "warehouse_not_found")
    # The buckets are gone and the old credential opens nothing.
    with pytest.raises(botocore.exceptions.ClientError):
        s3.head_object(Bucket=f"b-{wid}", Key="a.txt")
    assert requests.get(server.catalog + f"/v1/w-{wid}/namespaces", headers=h).status_code in \
        (401, 403, 404)
    [event] = audit(server, key, "warehouse.delete")
    assert event["target_id"] == wid and event["detail"]["tables"] == 1
    assert_api_error(delete_warehouse(server, key, wid, "doomed"), 404, "warehouse_not_found")


def grants_of(server, key, warehouse):
    r = requests.get(server.api + f"/v1/warehouses/{warehouse}/grants", headers=auth(key))
    assert r.status_code == 200, r.text
    return {g["principal_id"]: g for g in r.json()}


def put_grant(server, key, warehouse, principal, level):
    return requests.put(server.api + f"/v1/warehouses/{warehouse}/grants/{principal}",
                        headers=auth(key), json={"level": level})


def revoke_grant(server, key, warehouse, principal):
    return requests.delete(server.api + f"/v1/warehouses/{warehouse}/grants/{principal}",
                           headers=auth(key))


def test_grants_list_put_and_revoke(server):
    account = new_account(server)
    key, wid, me = account["api_key"], account["warehouse_id"], account["principal_id"]
    agent = create_agent(server, account, {"name": "etl"}).json()
    aid = agent["agent_id"]
    listed = grants_of(server, key, wid)
    assert (listed[me]["level"], listed[me]["via"], listed[me]["kind"]) == \
        ("write", "admin", "human")
    assert aid not in listed  # an agent holds nothing until granted
    assert_api_error(get_connection(server, agent["api_key"], warehouse_id=wid), 404,
                     "warehouse_not_found")
    # Grant read: the agent's recipe is the read-only identity.
    r = put_grant(server, key, "lake", aid, "read")
    assert r.status_code == 200, r.text
    g = r.json()
    assert (g["warehouse_id"], g["principal_id"], g["level"], g["via"], g["granted_by"]) == \
        (wid, aid, "read", "grant", me)
    assert g["kind"] == "agent" and g["display"] == "etl"
    conn = get_connection(server, agent["api_key"], warehouse_id=wid).json()
    assert conn["level"] == "read" and conn["identity"].endswith("-ro")
    assert grants_of(server, key, wid)[aid]["level"] == "read"
    # Raise to write.
    assert put_grant(server, key, wid, aid, "write").json()["level"] == "write"
    assert get_connection(server, agent["api_key"], warehouse_id=wid).json()["level"] == "write"
    # Refusals.
    assert_api_error(put_grant(server, key, wid, aid, "admin"), 400, "invalid_value",
                     field="level")
    stranger = new_account(server)
    assert_api_error(put_grant(server, key, wid, stranger["principal_id"], "read"), 404,
                     "principal_not_found")
    assert_api_error(put_grant(server, agent["api_key"], wid, aid, "write"), 403, "forbidden")
    assert_api_error(revoke_grant(server, key, wid, me), 409, "implicit_grant")
    assert_api_error(grants_of_raw(server, stranger["api_key"], wid), 404, "warehouse_not_found")
    # Revoke: the agent stops reaching the warehouse at once.
    r = revoke_grant(server, key, wid, aid)
    assert r.status_code == 200, r.text
    assert r.json()["revoked"] == {"level": "write", "via": "grant"}
    assert_api_error(get_connection(server, agent["api_key"], warehouse_id=wid), 404,
                     "warehouse_not_found")
    assert_api_error(revoke_grant(server, key, wid, aid), 404, "grant_not_found")
    actions = [e["action"] for e in audit(server, key, "warehouse.grant*")]
    assert actions == ["warehouse.grant_revoke", "warehouse.grant", "warehouse.grant"]


def grants_of_raw(server, key, warehouse):
    return requests.get(server.api + f"/v1/warehouses/{warehouse}/grants", headers=auth(key))


def test_concurrent_creates_cannot_pass_the_limit_together(server):
    """The limit is counted inside the creating transaction: of creates racing for the
    last free place, one gets it and the others are refused, and nothing of theirs stays."""
    import threading

    account = new_account(server)
    key, project = account["api_key"], account["project_id"]
    assert create_warehouse(server, key, project_id=project, name="two").status_code == 201
    results = []

    def create(i):
        results.append(create_warehouse(server, key, project_id=project, name=f"race{i}"))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.status_code for r in results)
    assert codes == [201] + [409] * 5, [r.text for r in results]
    for r in results:
        if r.status_code == 409:
            assert r.json()["error"]["code"] == "limit_exceeded", r.text
    names = [w["name"] for w in warehouses(server, key).json()["warehouses"]]
    assert len(names) == 3

"""Black-box tests of the tables routes of the control plane (POST /v1/tables, GET
/v1/namespaces, /v1/tables, /v1/table, POST /v1/credentials), with PyIceberg writing
through the catalog in between."""

from concurrent.futures import ThreadPoolExecutor
import uuid

import boto3
import botocore.exceptions
import pyarrow as pa
import pytest
import requests

from engines import pyiceberg_from_recipe
from test_control_api import assert_api_error, auth, create_agent, get_connection
from test_projects_warehouses import new_account

SCHEMA = {"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "name", "type": "string", "required": False},
    {"id": 3, "name": "tags", "type": {"type": "list", "element-id": 4, "element": "string",
                                       "element-required": False}, "required": False}]}


def create_table(server, key, idem=None, **body):
    headers = auth(key)
    if idem:
        headers["Idempotency-Key"] = idem
    return requests.post(server.api + "/v1/tables", headers=headers, json=body)


def get(server, key, path, **params):
    return requests.get(server.api + path, headers=auth(key), params=params)


def test_create_describe_and_list_tables(server):
    account = new_account(server)
    key, wid = account["api_key"], account["warehouse_id"]
    idem = uuid.uuid4().hex
    r = create_table(server, key, idem, warehouse_id="lake", namespace="sales.eu",
                     name="orders", schema=SCHEMA)
    assert r.status_code == 201, r.text
    t = r.json()
    assert (t["table"], t["namespace"], t["name"], t["warehouse_id"]) == \
        ("sales.eu.orders", "sales.eu", "orders", wid)
    assert t["format_version"] == 2 and t["format_version_honoured"] is True
    assert t["location"].startswith(f"s3://w-{wid}/") and len(t["table_uuid"]) == 36
    assert "warnings" not in t
    # A replay answers with the first response; nothing new is created.
    again = create_table(server, key, idem, warehouse_id="lake", namespace="sales.eu",
                         name="orders", schema=SCHEMA)
    assert again.status_code == 201 and again.json() == t
    # The namespace was created on demand, parents first.
    ns = get(server, key, "/v1/namespaces", warehouse=wid).json()
    assert [n["namespace"] for n in ns["namespaces"]] == ["sales", "sales.eu"]
    tables = get(server, key, "/v1/tables", warehouse="lake").json()
    assert tables["tables"] == [{"namespace": "sales.eu", "name": "orders",
                                 "table": "sales.eu.orders"}]
    assert tables["namespaces_searched"] == ["sales", "sales.eu"]
    # Describe before and after PyIceberg appends through the catalog.
    d = get(server, key, "/v1/table", warehouse=wid, namespace="sales.eu", name="orders").json()
    assert [(f["id"], f["name"], f["required"]) for f in d["schema"]] == \
        [(1, "id", True), (2, "name", False), (3, "tags", False)]
    assert d["identifier_field_ids"] == [1]
    assert (d["snapshots"], d["rows"], d["rows_source"]) == (0, 0, "empty")
    catalog = pyiceberg_from_recipe(get_connection(server, key, engine="pyiceberg").json())
    table = catalog.load_table("sales.eu.orders")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                     "name": pa.array(["a", None, "c"]),
                     "tags": pa.array([["x"], [], None], pa.list_(pa.string()))},
                    schema=table.schema().as_arrow())
    table.append(data)
    table.append(data.slice(0, 1))
    d = get(server, key, "/v1/table", warehouse=wid, namespace="sales.eu", name="orders").json()
    assert (d["snapshots"], d["rows"], d["rows_source"]) == (2, 4, "snapshot_summary")
    assert d["data_files"] == 2 and d["delete_files"] == 0
    assert d["current_snapshot_id"] == table.refresh().metadata.current_snapshot_id
    events = get(server, key, "/v1/audit", action="table.create").json()["events"]
    assert len(events) == 1


def test_one_idempotency_key_sent_twice_at_once_creates_one_table(server):
    """A client that retries before the first answer arrives: both calls answer 201 with the
    same table, and one table exists, audited once."""
    account = new_account(server)
    key = account["api_key"]
    for round_ in range(5):
        idem = uuid.uuid4().hex
        body = dict(warehouse_id="lake", namespace="retry", name=f"t{round_}", schema=SCHEMA)
        with ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(lambda _: create_table(server, key, idem, **body), range(3)))
        assert [r.status_code for r in answers] == [201, 201, 201], [r.text for r in answers]
        assert answers[0].json() == answers[1].json() == answers[2].json()
    tables = get(server, key, "/v1/tables", warehouse="lake").json()["tables"]
    assert sorted(t["name"] for t in tables) == [f"t{i}" for i in range(5)]
    events = get(server, key, "/v1/audit", action="table.create").json()["events"]
    assert len(events) == 5


def test_format_version_3_warns_and_errors_are_typed(server):
    account = new_account(server)
    key = account["api_key"]
    r = create_table(server, key, namespace="ns", name="v3", schema=SCHEMA, format_version=3)
    assert r.status_code == 201, r.text
    assert r.json()["format_version"] == 3 and r.json()["writable_by"] == ["spark"]
    assert r.json()["warnings"]
    assert_api_error(create_table(server, key, namespace="ns", name="v4", schema=SCHEMA,
                                  format_version=4), 400, "invalid_value", field="format_version")
    assert_api_error(create_table(server, key, namespace="ns", name="x"), 400, "missing_field",
                     field="schema")
    assert_api_error(create_table(server, key, name="x", schema=SCHEMA), 400, "missing_field",
                     field="namespace")
    assert_api_error(create_table(server, key, warehouse_id="nope", namespace="ns", name="x",
                                  schema=SCHEMA), 404, "warehouse_not_found")
    err = assert_api_error(create_table(server, key, namespace="ns", name="v3", schema=SCHEMA),
                           409, "already_exists")
    assert err["catalog_type"] == "AlreadyExistsException" and err["catalog_status"] == 409
    bad = {"type": "struct", "fields": [{"id": 1, "name": "a", "type": "no-such-type",
                                         "required": False}]}
    err = assert_api_error(create_table(server, key, namespace="ns", name="bad", schema=bad), 400,
                           "catalog_error")
    assert err["catalog_status"] == 400 and err["catalog_message"]
    err = assert_api_error(get(server, key, "/v1/table", namespace="nope", name="t"), 404,
                           "namespace_not_found")
    assert err["available"] == ["ns"]
    err = assert_api_error(get(server, key, "/v1/table", namespace="ns", name="nope"), 404,
                           "table_not_found")
    assert err["available"] == ["v3"]
    assert_api_error(get(server, key, "/v1/tables", namespace="nope"), 404, "namespace_not_found")


def test_credentials_for_write_holders_only(server):
    account = new_account(server)
    key, wid = account["api_key"], account["warehouse_id"]
    assert create_table(server, key, namespace="ns", name="t", schema=SCHEMA).status_code == 201
    r = requests.post(server.api + "/v1/credentials", headers=auth(key),
                      json={"warehouse_id": wid, "namespace": "ns", "name": "t"})
    assert r.status_code == 200, r.text
    c = r.json()
    assert c["level"] == "write" and c["identity"] == f"t-{wid}"
    assert c["scope"].startswith(c["location"])
    s = c["storage"]
    s3 = boto3.client("s3", endpoint_url=s["s3.endpoint"],
                      aws_access_key_id=s["s3.access-key-id"],
                      aws_secret_access_key=s["s3.secret-access-key"],
                      aws_session_token=s["s3.session-token"], region_name="us-east-1")
    key_in_table = c["location"].split(f"w-{wid}/", 1)[1] + "/data/x.parquet"
    s3.put_object(Bucket=f"w-{wid}", Key=key_in_table, Body=b"1")
    # Outside the table's prefix the session is refused.
    with pytest.raises(botocore.exceptions.ClientError, match="AccessDenied"):
        s3.put_object(Bucket=f"w-{wid}", Key="other/t/data/x.parquet", Body=b"1")
    # A read holder is pointed at the read-only credential.
    reader = create_agent(server, account, {"name": "reader", "grants": [
        {"warehouse_id": wid, "level": "read"}]}).json()
    r = requests.post(server.api + "/v1/credentials", headers=auth(reader["api_key"]),
                      json={"warehouse_id": wid, "namespace": "ns", "name": "t"})
    err = assert_api_error(r, 403, "forbidden", level="read")
    assert "/v1/connection" in err["remedy"]
    # The read holder sees the table, but cannot create one.
    assert get(server, reader["api_key"], "/v1/table", namespace="ns", name="t").status_code == 200
    assert_api_error(create_table(server, reader["api_key"], namespace="ns", name="u",
                                  schema=SCHEMA), 403, "forbidden")

"""Server-side scan planning (the Iceberg REST planTableScan) against PyIceberg 0.12 with
scan-planning-mode=server: the same rows as PyIceberg's own client-side planning, on
partitioned tables with spec and schema evolution and position deletes, with filters that
prune partitions and files (the number of files planned is checked, so a planner that
prunes nothing fails), at earlier snapshots, across plan tasks; the spec's errors for bad
filters and unknown plans; plans any server can answer until cancelled."""

import datetime
import time
import uuid

import pyarrow as pa
import pytest
import requests
from pyiceberg.expressions import (And, EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNull,
                                   LessThan, Not, NotEqualTo, NotNull, Or, StartsWith)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType, TimestamptzType

from engines import pyiceberg_from_recipe, pyiceberg_server_planning


server_planning = pyiceberg_server_planning


def rows(table, row_filter=None, snapshot_id=None):
    scan = table.scan(row_filter=row_filter, snapshot_id=snapshot_id) if row_filter is not None \
        else table.scan(snapshot_id=snapshot_id)
    return sorted(map(tuple, scan.to_arrow().to_pylist() and
                      [tuple(r.values()) for r in scan.to_arrow().to_pylist()]))


def planned_files(table, row_filter=None, snapshot_id=None):
    scan = table.scan(row_filter=row_filter, snapshot_id=snapshot_id) if row_filter is not None \
        else table.scan(snapshot_id=snapshot_id)
    return sorted(t.file.file_path for t in scan.plan_files())


SCHEMA = Schema(NestedField(1, "id", LongType(), required=True),
                NestedField(2, "city", StringType(), required=False),
                NestedField(3, "score", DoubleType(), required=False),
                NestedField(4, "ts", TimestamptzType(), required=False))
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("city", pa.string()),
                   pa.field("score", pa.float64()), pa.field("ts", pa.timestamp("us", tz="UTC"))])


def batch(ids, city, day):
    ts = datetime.datetime(2024, 1, day, 12, tzinfo=datetime.timezone.utc)
    return pa.table({"id": ids, "city": [city] * len(ids),
                     "score": [float(i) / 2 for i in ids], "ts": [ts] * len(ids)}, schema=ARROW)


@pytest.fixture(scope="module")
def lake(server):
    acct = server.signup(engine="pyiceberg")
    client = pyiceberg_from_recipe(acct["connection"])
    ns = "plan_" + uuid.uuid4().hex[:6]
    client.create_namespace(ns)
    return {"client": client, "server": server_planning(client), "ns": ns, "acct": acct}


@pytest.fixture(scope="module")
def evolved(lake):
    """Partitioned by city, then also by day(ts); a column added later; rows deleted."""
    client, ns = lake["client"], lake["ns"]
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                                        name="city"))
    t = client.create_table(f"{ns}.evolved", schema=SCHEMA, partition_spec=spec,
                            properties={"write.delete.mode": "merge-on-read"})
    for day, city in enumerate(["Oslo", "Lima", "Oslo", "Pune", None], start=1):
        t.append(batch(list(range(day * 10, day * 10 + 5)), city, day))
    first = t.current_snapshot().snapshot_id
    with t.update_spec() as u:
        u.add_field("ts", DayTransform(), "ts_day")
    for day, city in [(6, "Oslo"), (7, "Lima")]:
        t.append(batch(list(range(day * 10, day * 10 + 5)), city, day))
    with t.update_schema() as u:
        u.add_column("note", StringType())
    t = client.load_table(f"{ns}.evolved")
    t.delete(EqualTo("id", 11))
    t = client.load_table(f"{ns}.evolved")
    return {"name": f"{ns}.evolved", "first": first}


FILTERS = [
    None,
    EqualTo("city", "Oslo"),
    In("city", ["Lima", "Pune"]),
    IsNull("city"),
    NotNull("city"),
    NotEqualTo("city", "Oslo"),
    GreaterThanOrEqual("id", 60),
    LessThan("id", 25),
    And(EqualTo("city", "Oslo"), GreaterThan("score", 10)),
    Or(EqualTo("city", "Lima"), LessThan("id", 12)),
    Not(StartsWith("city", "O")),
    GreaterThanOrEqual("ts", "2024-01-06T00:00:00+00:00"),
    LessThan("ts", "2024-01-02T00:00:00+00:00"),
]


@pytest.mark.parametrize("row_filter", FILTERS, ids=lambda f: str(f)[:60])
def test_server_planning_reads_the_rows_client_planning_reads(lake, evolved, row_filter):
    client_table = lake["client"].load_table(evolved["name"])
    server_table = lake["server"].load_table(evolved["name"])
    expected = rows(client_table, row_filter)
    assert rows(server_table, row_filter) == expected
    # The same files, so pruning is as tight as PyIceberg's own.
    assert planned_files(server_table, row_filter) == planned_files(client_table, row_filter)


def test_filters_prune_files(lake, evolved):
    server_table = lake["server"].load_table(evolved["name"])
    everything = planned_files(server_table)
    oslo = planned_files(server_table, EqualTo("city", "Oslo"))
    assert 0 < len(oslo) < len(everything)
    assert all("Oslo" in p for p in oslo)
    assert planned_files(server_table, EqualTo("city", "Nowhere")) == []
    assert len(planned_files(server_table, GreaterThanOrEqual("id", 60))) == 2


def test_an_earlier_snapshot(lake, evolved):
    client_table = lake["client"].load_table(evolved["name"])
    server_table = lake["server"].load_table(evolved["name"])
    first = evolved["first"]
    assert rows(server_table, snapshot_id=first) == rows(client_table, snapshot_id=first)
    assert len(planned_files(server_table, snapshot_id=first)) == 5


def test_deleted_rows_stay_deleted(lake, evolved):
    server_table = lake["server"].load_table(evolved["name"])
    ids = [r[0] for r in rows(server_table)]
    assert 11 not in ids and 10 in ids and 12 in ids


# ---------------------------------------------------------------- the endpoints themselves

from conftest import BOOTSTRAP_SECRET, Server, advance_clock, catalog_token  # noqa: E402


@pytest.fixture(scope="module")
def paged():
    """A server of this module's own that answers two data files at a time and the rest
    as plan tasks, on a clock the tests move."""
    s = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                          "TABLEMERE_TEST_CLOCK": "1"},
               args=["--scan-plan-files-per-task", "2"])
    acct = s.signup(engine="pyiceberg")
    client = pyiceberg_from_recipe(acct["connection"])
    client.create_namespace("p")
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                                        name="city"))
    t = client.create_table("p.t", schema=SCHEMA, partition_spec=spec)
    for day, city in enumerate(["Oslo", "Lima", "Oslo", "Pune", "Oslo", "Rome", "Oslo"], start=1):
        t.append(batch(list(range(day * 10, day * 10 + 3)), city, day))
    client.create_table("p.other", schema=SCHEMA)
    conn = acct["connection"]
    cred = conn["catalog_credential"]
    token = catalog_token(s, cred["client_id"], cred["client_secret"])
    base = f"{s.catalog}/v1/{client.properties['prefix']}/namespaces/p/tables"
    yield {"server": s, "client": client, "session": _session(token), "base": base, "cred": cred}
    s.cleanup()


def _session(token):
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + token
    return session


def plan(paged, body, table="t"):
    return paged["session"].post(f"{paged['base']}/{table}/plan", json=body)


def tasks(paged, plan_task, table="t"):
    return paged["session"].post(f"{paged['base']}/{table}/tasks", json={"plan-task": plan_task})


def test_config_advertises_the_planning_endpoints(paged):
    prefix = paged["client"].properties["prefix"]
    r = paged["session"].get(f"{paged['server'].catalog}/v1/config", params={"warehouse": prefix})
    endpoints = r.json()["endpoints"]
    for e in ("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
              "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
              "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
              "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"):
        assert e in endpoints
    assert server_planning(paged["client"]).supports_server_side_planning()


def test_a_large_plan_is_paged_through_plan_tasks(paged):
    r = plan(paged, {})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "completed" and body["plan-id"]
    assert len(body["file-scan-tasks"]) == 2
    assert len(body["plan-tasks"]) == 3  # 7 files, two at a time
    assert body["storage-credentials"][0]["config"]["s3.access-key-id"]
    seen = [t["data-file"]["file-path"] for t in body["file-scan-tasks"]]
    for task in body["plan-tasks"]:
        r = tasks(paged, task)
        assert r.status_code == 200, r.text
        assert "plan-tasks" not in r.json()
        seen += [t["data-file"]["file-path"] for t in r.json()["file-scan-tasks"]]
    assert len(seen) == len(set(seen)) == 7
    # PyIceberg follows the plan tasks and reads every row.
    server_table = server_planning(paged["client"]).load_table("p.t")
    assert rows(server_table) == rows(paged["client"].load_table("p.t"))
    assert len(rows(server_table)) == 21


def test_answers_carry_typed_values_and_the_stats_asked_for(paged):
    r = plan(paged, {"filter": {"type": "eq", "term": "city", "value": "Oslo"},
                     "stats-fields": ["id", "ts"]})
    body = r.json()
    task = body["file-scan-tasks"][0]
    f = task["data-file"]
    assert f["content"] == "data" and f["file-format"] == "parquet"
    assert f["partition"] == ["Oslo"] and f["record-count"] == 3
    assert f["lower-bounds"]["keys"] == [1, 4]
    low_id, low_ts = f["lower-bounds"]["values"]
    assert isinstance(low_id, int)
    assert low_ts.endswith("T12:00:00.000000+00:00")
    # The partition decided the filter: nothing of it is left for the reader.
    assert task["residual-filter"] is True
    r = plan(paged, {"filter": {"type": "and",
                                "left": {"type": "eq", "term": "city", "value": "Oslo"},
                                "right": {"type": "gt", "term": "id", "value": 30}}})
    assert {t["residual-filter"]["term"] for t in r.json()["file-scan-tasks"]} == {"id"}


def test_bad_filters_are_400s_naming_what_is_wrong(paged):
    for body, named in [({"filter": {"type": "eq", "term": "nope", "value": 1}}, "nope"),
                        ({"filter": {"type": "eq", "term": "id", "value": "x"}}, "id"),
                        ({"filter": {"type": "lt", "term": "ts", "value": "yesterday"}}, "ts"),
                        ({"filter": {"type": "bogus"}}, "bogus"),
                        ({"select": ["id", "missing"]}, "missing"),
                        ({"snapshot-id": 1, "start-snapshot-id": 2}, "snapshot-id"),
                        ({"snapshot-id": 12345}, "12345")]:
        r = plan(paged, body)
        assert r.status_code == 400, (body, r.text)
        error = r.json()["error"]
        assert error["type"] == "BadRequestException" and named in error["message"], error
    r = plan(paged, {"filter": {"type": "eq", "term": "CITY", "value": "Oslo"},
                     "case-sensitive": False})
    assert r.status_code == 200


def test_unknown_cancelled_and_expired_plans_are_404s(paged):
    s = paged["session"]
    base = paged["base"]
    r = s.get(f"{base}/t/plan/plan-unknown")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchPlanIdException"
    r = tasks(paged, "plan-unknown:1")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchPlanTaskException"
    body = plan(paged, {}).json()
    plan_id, task = body["plan-id"], body["plan-tasks"][0]
    assert s.get(f"{base}/t/plan/{plan_id}").json()["status"] == "completed"
    # A plan belongs to its table: another table's routes do not find it.
    r = s.get(f"{base}/other/plan/{plan_id}")
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchPlanIdException"
    assert tasks(paged, task, table="other").status_code == 404
    assert tasks(paged, plan_id + ":99").status_code == 404
    # Cancelled: gone.
    assert s.delete(f"{base}/t/plan/{plan_id}").status_code == 204
    assert s.get(f"{base}/t/plan/{plan_id}").status_code == 404
    assert tasks(paged, task).status_code == 404
    # Expired: gone after an hour.
    body = plan(paged, {}).json()
    assert tasks(paged, body["plan-tasks"][0]).status_code == 200
    advance_clock(paged["server"], 3601)
    cred = paged["cred"]  # the catalog token expired too
    paged["session"] = _session(catalog_token(paged["server"], cred["client_id"], cred["client_secret"]))
    r = tasks(paged, body["plan-tasks"][0])
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchPlanTaskException"


def test_planning_is_authorised_as_loadtable(paged):
    r = requests.post(f"{paged['base']}/t/plan", json={})
    assert r.status_code == 401
    r = requests.post(f"{paged['base']}/t/plan", json={},
                      headers={"Authorization": "Bearer nonsense"})
    assert r.status_code == 401
    r = paged["session"].post(f"{paged['base']}/missing/plan", json={})
    assert r.status_code == 404 and r.json()["error"]["type"] == "NoSuchTableException"


@pytest.fixture(scope="module")
def polled():
    """A server that answers every plan of a client that polls "submitted"."""
    s = Server(args=["--scan-plan-wait-ms", "0"])
    acct = s.signup(engine="pyiceberg")
    client = pyiceberg_from_recipe(acct["connection"])
    client.create_namespace("p")
    t = client.create_table("p.t", schema=SCHEMA)
    for day in range(1, 4):
        t.append(batch(list(range(day * 10, day * 10 + 3)), "Oslo", day))
    cred = acct["connection"]["catalog_credential"]
    session = _session(catalog_token(s, cred["client_id"], cred["client_secret"]))
    session.headers["User-Agent"] = "Apache-Iceberg-Java-test"
    base = f"{s.catalog}/v1/{client.properties['prefix']}/namespaces/p/tables"
    yield {"server": s, "client": client, "session": session, "base": base}
    s.cleanup()


def poll(polled, plan_id, want):
    for _ in range(200):
        r = polled["session"].get(f"{polled['base']}/t/plan/{plan_id}")
        assert r.status_code == 200, r.text
        if r.json()["status"] != "submitted":
            break
        time.sleep(0.05)
    assert r.json()["status"] == want, r.text
    return r.json()


def test_a_submitted_plan_completes_and_is_fetched(polled):
    r = polled["session"].post(f"{polled['base']}/t/plan", json={})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "submitted" and r.json()["plan-id"]
    body = poll(polled, r.json()["plan-id"], "completed")
    assert body["storage-credentials"]
    files = []
    for task in body["plan-tasks"]:
        got = polled["session"].post(f"{polled['base']}/t/tasks", json={"plan-task": task})
        files += [t["data-file"]["file-path"] for t in got.json()["file-scan-tasks"]]
    assert len(files) == 3
    # PyIceberg cannot poll: it is answered at once, whatever the server's wait.
    server_table = server_planning(polled["client"]).load_table("p.t")
    assert len(rows(server_table)) == 9


def test_a_submitted_plan_that_fails_says_why(polled):
    r = polled["session"].post(f"{polled['base']}/t/plan",
                               json={"filter": {"type": "eq", "term": "nope", "value": 1}})
    assert r.json()["status"] == "submitted"
    body = poll(polled, r.json()["plan-id"], "failed")
    assert body["error"]["code"] == 400 and "nope" in body["error"]["message"]
    # Cancelled while submitted or after: gone.
    r = polled["session"].post(f"{polled['base']}/t/plan", json={})
    plan_id = r.json()["plan-id"]
    assert polled["session"].delete(f"{polled['base']}/t/plan/{plan_id}").status_code == 204
    assert polled["session"].get(f"{polled['base']}/t/plan/{plan_id}").status_code == 404

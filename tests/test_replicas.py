"""Replica mode: two tablemere-server processes over one PostgreSQL database and one
SeaweedFS prefix, behind haproxy. Whatever one replica starts or writes, the other
accepts and reads; the engines work through the balancer."""

import threading
import time
import uuid

import pyarrow as pa
import pytest
import requests
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from engines import duckdb_from_recipe, pyiceberg_from_recipe
from helpers import warehouse_s3, writers_until_killed
from replicas import Deployment


@pytest.fixture(scope="module")
def deployment():
    d = Deployment(replicas=2)
    yield d
    d.cleanup()


@pytest.fixture(scope="module")
def account(deployment):
    return deployment.signup()


def auth(key):
    return {"Authorization": "Bearer " + key}


def test_a_token_issued_by_one_replica_is_accepted_by_the_other(deployment, account):
    a, b = deployment.replicas
    r = requests.post(a.api + "/v1/tokens", json={"api_key": account["api_key"]})
    assert r.status_code == 200, r.text
    token = r.json()["access_token"]
    r = requests.get(b.api + "/v1/warehouses", headers=auth(token))
    assert r.status_code == 200, r.text
    assert account["warehouse_id"] in {w["warehouse_id"] for w in r.json()["warehouses"]}
    # Both publish the same keys.
    assert requests.get(a.api + "/jwks.json").json() == requests.get(b.api + "/jwks.json").json()


def test_an_idempotency_key_holds_across_replicas(deployment, account):
    a, b = deployment.replicas
    key = "idem-" + uuid.uuid4().hex[:8]
    name = "p" + uuid.uuid4().hex[:8]
    headers = {**auth(account["api_key"]), "Idempotency-Key": key}
    first = requests.post(a.api + "/v1/projects", headers=headers, json={"name": name})
    again = requests.post(b.api + "/v1/projects", headers=headers, json={"name": name})
    assert first.status_code == 201, first.text
    assert again.status_code in (200, 201), again.text
    assert again.json()["project_id"] == first.json()["project_id"]
    listed = requests.get(a.api + "/v1/projects", headers=auth(account["api_key"])).json()
    assert [p["name"] for p in listed["projects"]].count(name) == 1


def test_a_multipart_upload_spans_replicas(deployment, account):
    a, b = deployment.replicas
    on_a, on_b = warehouse_s3(a, account), warehouse_s3(b, account)
    bucket = "b-" + account["warehouse_id"]
    up = on_a.create_multipart_upload(Bucket=bucket, Key="big.bin")["UploadId"]
    parts = []
    for n, (client, byte) in enumerate([(on_b, b"x"), (on_a, b"y"), (on_b, b"z")], start=1):
        body = byte * (5 * 1024 * 1024 if n < 3 else 1000)
        etag = client.upload_part(Bucket=bucket, Key="big.bin", UploadId=up, PartNumber=n,
                                  Body=body)["ETag"]
        parts.append({"PartNumber": n, "ETag": etag})
    listed = on_a.list_parts(Bucket=bucket, Key="big.bin", UploadId=up)["Parts"]
    assert [p["PartNumber"] for p in listed] == [1, 2, 3]
    on_b.complete_multipart_upload(Bucket=bucket, Key="big.bin", UploadId=up,
                                   MultipartUpload={"Parts": parts})
    got = on_a.get_object(Bucket=bucket, Key="big.bin")["Body"].read()
    assert got == b"x" * (5 << 20) + b"y" * (5 << 20) + b"z" * 1000


def test_commits_from_both_replicas_to_one_table_lose_no_update(deployment, account):
    a, b = deployment.replicas
    catalogs = [pyiceberg_from_recipe(r.connection(account["api_key"], "pyiceberg"))
                for r in (a, b)]
    ns = "race_" + uuid.uuid4().hex[:6]
    catalogs[0].create_namespace(ns)
    schema = Schema(NestedField(1, "v", LongType(), required=False))
    catalogs[0].create_table(f"{ns}.t", schema=schema)
    per_writer, errors = 6, []

    def writer(w):
        catalog = catalogs[w % 2]
        for i in range(per_writer):
            for _attempt in range(20):
                table = catalog.load_table(f"{ns}.t")
                try:
                    table.append(pa.table({"v": pa.array([w * 100 + i], pa.int64())}))
                    break
                except Exception as e:  # a lost race: reload and try again
                    if "CommitFailed" not in type(e).__name__:
                        errors.append(repr(e))
                        return
            else:
                errors.append(f"writer {w} gave up")

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    rows = catalogs[1].load_table(f"{ns}.t").scan().to_arrow()["v"].to_pylist()
    assert sorted(rows) == sorted(w * 100 + i for w in range(4) for i in range(per_writer))


def test_duckdb_and_pyiceberg_work_through_the_balancer(deployment, account):
    recipe = deployment.connection(account["api_key"], "duckdb")
    assert deployment.catalog in recipe["sql"]  # engines are sent to the balancer
    con = duckdb_from_recipe(recipe)
    ns = "lb_" + uuid.uuid4().hex[:6]
    con.execute(f"CREATE SCHEMA lake.{ns}")
    con.execute(f"CREATE TABLE lake.{ns}.t (id BIGINT, s VARCHAR)")
    for i in range(4):  # several commits, each request free to land on either replica
        con.execute(f"INSERT INTO lake.{ns}.t VALUES ({i}, 'r{i}')")
    assert con.execute(f"SELECT count(*), sum(id) FROM lake.{ns}.t").fetchone() == (4, 6)
    con.close()
    catalog = pyiceberg_from_recipe(deployment.connection(account["api_key"], "pyiceberg"))
    rows = catalog.load_table(f"{ns}.t").scan().to_arrow()
    assert sorted(rows["id"].to_pylist()) == [0, 1, 2, 3]


def _healthz(replica):
    try:
        return requests.get(replica.api + "/healthz", timeout=5).status_code
    except requests.RequestException:
        return None


def test_postgres_restarted_under_load_answers_503_then_resumes_losing_nothing(deployment,
                                                                                account):
    key = account["api_key"]
    before = requests.post(deployment.api + "/v1/projects", headers=auth(key),
                           json={"name": "before-" + uuid.uuid4().hex[:6]})
    assert before.status_code == 201, before.text
    deployment.cluster.stop("fast")
    try:
        # Every replica says it is unhealthy (so a balancer stops sending to it), and a
        # request that needs the database is refused as unavailable, not answered wrongly.
        assert all(_healthz(r) == 503 for r in deployment.replicas)
        r = requests.post(deployment.replicas[0].api + "/v1/projects", headers=auth(key),
                          json={"name": "during-" + uuid.uuid4().hex[:6]})
        assert r.status_code == 503, r.text
    finally:
        deployment.cluster.start()
    deadline = time.time() + 30
    while not all(_healthz(r) == 200 for r in deployment.replicas):
        assert time.time() < deadline, "the replicas did not recover"
        time.sleep(0.2)
    # The balancer takes them back at its next health check.
    while _healthz(deployment) != 200:
        assert time.time() < deadline, "haproxy did not take the replicas back"
        time.sleep(0.2)
    after = requests.post(deployment.api + "/v1/projects", headers=auth(key),
                          json={"name": "after-" + uuid.uuid4().hex[:6]})
    assert after.status_code == 201, after.text
    names = {p["name"] for p in requests.get(deployment.replicas[1].api + "/v1/projects",
                                             headers=auth(key)).json()["projects"]}
    assert before.json()["name"] in names and after.json()["name"] in names


def test_a_rotation_through_one_replica_refuses_old_tokens_on_the_other_at_once(deployment):
    """loadTable reads the warehouse and the table together; neither may be stale on a
    replica that did not make the change."""
    from conftest import catalog_token
    a, b = deployment.replicas
    acct = deployment.signup()
    cred = acct["connection"]["catalog_credential"]
    prefix = acct["connection"]["warehouse_name"]
    headers = auth(catalog_token(a, cred["client_id"], cred["client_secret"]))
    schema = {"type": "struct", "schema-id": 0,
              "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    requests.post(f"{a.catalog}/v1/{prefix}/namespaces", json={"namespace": ["r"]},
                  headers=headers).raise_for_status()
    requests.post(f"{a.catalog}/v1/{prefix}/namespaces/r/tables",
                  json={"name": "t", "schema": schema}, headers=headers).raise_for_status()
    table = f"{b.catalog}/v1/{prefix}/namespaces/r/tables/t"
    for _ in range(3):  # warm whatever b keeps
        assert requests.get(table, headers=headers).status_code == 200
    rotated = requests.post(f"{a.api}/v1/warehouses/{acct['warehouse_id']}/rotate",
                            headers=auth(acct["api_key"]))
    assert rotated.status_code == 200, rotated.text
    assert requests.get(table, headers=headers).status_code == 401
    new = rotated.json()["catalog_credential"]
    fresh = auth(catalog_token(b, new["client_id"], new["client_secret"]))
    assert requests.get(table, headers=fresh).status_code == 200
    requests.delete(f"{a.catalog}/v1/{prefix}/namespaces/r/tables/t",
                    headers=fresh).raise_for_status()
    assert requests.get(table, headers=fresh).status_code == 404


def test_a_killed_replicas_task_is_taken_over_once_its_lease_runs_out():
    """A replica dies (SIGKILL, at a test crash point) right after claiming the purge of a
    dropped table. The task stays leased to it: another replica leaves the files alone
    until the lease has run out on its clock, then takes the task over and purges."""
    from conftest import BOOTSTRAP_SECRET, advance_clock, catalog_token
    from helpers import wait_for
    env = {"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET, "TABLEMERE_TEST_CLOCK": "1"}
    d = Deployment(replicas=1, extra_env={**env,
                                          "TABLEMERE_TEST_CRASH_AT": "task.claimed.purge_prefix"})
    try:
        [a] = d.replicas
        acct = a.signup()
        cred = acct["connection"]["catalog_credential"]
        headers = auth(catalog_token(a, cred["client_id"], cred["client_secret"]))
        base = f"{a.catalog}/v1/{acct['connection']['warehouse_name']}"
        requests.post(base + "/namespaces", json={"namespace": ["k"]},
                      headers=headers).raise_for_status()
        schema = {"type": "struct", "schema-id": 0,
                  "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
        created = requests.post(base + "/namespaces/k/tables", json={"name": "t", "schema": schema},
                                headers=headers)
        created.raise_for_status()
        bucket, prefix = created.json()["metadata"]["location"].removeprefix("s3://").split("/", 1)
        warehouse_s3(a, acct).put_object(Bucket=bucket, Key=prefix + "/data/part-0.parquet",
                                         Body=b"PAR1")
        r = requests.delete(base + "/namespaces/k/tables/t", params={"purgeRequested": "true"},
                            headers=headers)
        assert r.status_code == 204, r.text
        assert a.proc.wait(timeout=30) == -9  # it claimed the purge and died

        b = d.add_replica(extra_env=env)
        s3 = warehouse_s3(b, acct)

        def keys():
            return [o["Key"] for o in s3.list_objects_v2(
                Bucket=bucket, Prefix=prefix + "/").get("Contents", [])]
        assert len(keys()) == 2  # the metadata file and the data file
        # b polls its queue every half second: a few polls find the purge still leased.
        deadline = time.time() + 2
        while time.time() < deadline:
            assert len(keys()) == 2, "the purge ran while its lease was still held"
            time.sleep(0.2)
        advance_clock(b, 601)  # past the 10-minute lease
        wait_for(lambda: keys() == [], "the other replica to take the purge over", timeout=30,
                 interval=0.2)
    finally:
        d.cleanup()


# Last in the module: it leaves one replica.
def test_a_replica_killed_under_write_load_loses_no_acknowledged_write(deployment, account):
    a, b = deployment.replicas
    bucket = "b-" + account["warehouse_id"]

    def body_for(i):
        return (f"object {i} ".encode()) * (1 + i % 700)

    acknowledged = writers_until_killed(a, warehouse_s3(a, account), bucket, body_for,
                                        want=60, timeout=30)
    assert len(acknowledged) >= 20
    survivor = warehouse_s3(b, account)
    for key, i in acknowledged.items():
        assert survivor.get_object(Bucket=bucket, Key=key)["Body"].read() == body_for(i), key
    # Nothing partial is visible: whatever is listed reads whole.
    for page in survivor.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="k"):
        for o in page.get("Contents", []):
            assert o["Size"] == len(body_for(int(o["Key"][1:]))), o["Key"]
    # The balancer stops sending to the dead replica; service goes on through it.
    deadline = time.time() + 15
    while True:
        ok = 0
        for _ in range(4):
            try:
                ok += requests.get(deployment.api + "/v1/warehouses", headers=auth(
                    account["api_key"]), timeout=5).status_code == 200
            except requests.RequestException:
                pass
        if ok == 4:
            break
        assert time.time() < deadline, "haproxy kept sending to the killed replica"
        time.sleep(0.3)

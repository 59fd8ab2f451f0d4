"""Publishing a warehouse (POST/DELETE /v1/warehouses/{id}/public): anyone reads the table
bucket unsigned (boto3 with no credentials) and attaches its catalog with no token
(PyIceberg reads a table end to end), every anonymous write is refused, and unpublishing
refuses anonymous reads at once."""

import uuid

import boto3
import duckdb
import pyarrow as pa
import pytest
import requests
from botocore import UNSIGNED
from botocore.config import Config
from pyiceberg.catalog.rest import RestCatalog

from engines import pyiceberg_from_recipe
from test_control_api import assert_api_error, auth


@pytest.fixture(scope="module")
def owner(server):
    account = server.signup(engine="pyiceberg")
    catalog = pyiceberg_from_recipe(account["connection"])
    catalog.create_namespace("pub")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"])})
    table = catalog.create_table(("pub", "t"), schema=data.schema)
    table.append(data)
    return account, table


def anonymous_s3(server):
    return boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))


def anonymous_catalog(server, warehouse_id):
    return RestCatalog("anon", uri=server.catalog, warehouse=f"w-{warehouse_id}")


def publish(server, key, wid, confirm, anonymous_catalog=None):
    body = {"confirm": confirm}
    if anonymous_catalog is not None:
        body["anonymous_catalog"] = anonymous_catalog
    return requests.post(server.api + f"/v1/warehouses/{wid}/public", json=body,
                         headers=auth(key))


def test_publish_reads_anonymously_and_unpublish_stops_it(server, owner):
    account, table = owner
    key, wid = account["api_key"], account["warehouse_id"]
    bucket = f"w-{wid}"
    s3 = anonymous_s3(server)
    data_key = table.current_snapshot() and next(
        iter(table.inspect.files().column("file_path").to_pylist())).split(f"{bucket}/", 1)[1]
    # Private: anonymous S3 and catalog reads are refused.
    with pytest.raises(Exception) as private:
        s3.get_object(Bucket=bucket, Key=data_key)
    assert "AccessDenied" in str(private.value)
    r = requests.get(server.catalog + f"/v1/w-{wid}/namespaces")
    assert r.status_code == 401, r.text

    assert_api_error(publish(server, key, wid, "wrong-name"), 400, "confirmation_required",
                     confirm_with="lake")
    r = publish(server, key, wid, "lake")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["public"] is True and body["tier"] == "public" and body["changed"] is True
    assert body["public_url"] == f"{server.s3}/{bucket}/"
    listed = requests.get(server.api + "/v1/warehouses", headers=auth(key)).json()
    assert [w["public"] for w in listed["warehouses"]] == [True]

    # Unsigned S3: read and list; every write refused.
    assert s3.get_object(Bucket=bucket, Key=data_key)["Body"].read()[:4] == b"PAR1"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert data_key in keys and any(k.endswith(".metadata.json") for k in keys)
    for write in (lambda: s3.put_object(Bucket=bucket, Key="pub/t/data/x.parquet", Body=b"x"),
                  lambda: s3.delete_object(Bucket=bucket, Key=data_key)):
        with pytest.raises(Exception) as refused:
            write()
        assert "AccessDenied" in str(refused.value)
    # The blob bucket stays private.
    with pytest.raises(Exception):
        s3.list_objects_v2(Bucket=f"b-{wid}")

    # Publishing is storage-level: the REST catalog still wants a token.
    assert body["anonymous_catalog"] is False
    r = requests.get(server.catalog + f"/v1/w-{wid}/namespaces")
    assert r.status_code == 401, r.text
    # Opening the catalog is its own opt-in, with its own audit event and listing field.
    r = publish(server, key, wid, "lake", anonymous_catalog=True)
    assert r.status_code == 200 and r.json()["anonymous_catalog"] is True, r.text
    listed = requests.get(server.api + "/v1/warehouses", headers=auth(key)).json()
    assert [w["anonymous_catalog"] for w in listed["warehouses"]] == [True]
    events = requests.get(server.api + "/v1/audit", params={"action": "warehouse.catalog_open"},
                          headers=auth(key)).json()["events"]
    assert len(events) == 1 and "127.0.0.1" in (events[0]["ip"] or "")

    # The catalog with no token: PyIceberg lists and reads the table end to end.
    anon = anonymous_catalog(server, wid)
    assert ("pub",) in anon.list_namespaces()
    assert anon.list_tables("pub") == [("pub", "t")]
    loaded = anon.load_table(("pub", "t"))
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    # Writes through the anonymous catalog are refused and change nothing.
    with pytest.raises(Exception) as refused:
        anon.create_namespace("evil")
    assert "403" in str(refused.value) or "Forbidden" in type(refused.value).__name__
    with pytest.raises(Exception):
        loaded.append(pa.table({"id": pa.array([9], pa.int64()), "name": pa.array(["z"])}))
    assert sorted(table.refresh().scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    r = requests.get(server.catalog + f"/v1/w-{wid}/namespaces/pub/tables/t/credentials")
    assert r.status_code == 403, r.text
    # DuckDB attaches it with no secret and no token, and reads through the public bucket.
    duck = duckdb.connect()
    for ext in ("httpfs", "iceberg", "avro"):
        duck.execute(f"LOAD {ext}")
    duck.execute(f"ATTACH '{bucket}' AS pub (TYPE iceberg, ENDPOINT '{server.catalog}', "
                 "AUTHORIZATION_TYPE 'none')")
    assert duck.execute("SELECT sum(id) FROM pub.pub.t").fetchall() == [(6,)]
    with pytest.raises(duckdb.Error):
        duck.execute("INSERT INTO pub.pub.t VALUES (7, 'x')")

    # Unpublish: refused at once, both ways.
    r = requests.delete(server.api + f"/v1/warehouses/{wid}/public", headers=auth(key))
    assert r.status_code == 200 and r.json()["public"] is False, r.text
    with pytest.raises(Exception) as again:
        s3.get_object(Bucket=bucket, Key=data_key)
    assert "AccessDenied" in str(again.value)
    assert requests.get(server.catalog + f"/v1/w-{wid}/namespaces").status_code == 401
    events = requests.get(server.api + "/v1/audit", params={"action": "warehouse.*"},
                          headers=auth(key)).json()
    actions = [e["action"] for e in events["events"]]
    assert "warehouse.publish" in actions and "warehouse.unpublish" in actions


def test_only_admins_publish(server, owner):
    account, _ = owner
    org = account["organization"]["org_id"]
    agent = requests.post(server.api + f"/v1/orgs/{org}/agents",
                          json={"name": "reader-" + uuid.uuid4().hex[:6], "role": "member",
                                "grants": [{"warehouse": account["warehouse_id"],
                                            "level": "write"}]},
                          headers=auth(account["api_key"]))
    assert agent.status_code == 201, agent.text
    assert_api_error(publish(server, agent.json()["api_key"], account["warehouse_id"], "lake"),
                     403, "insufficient_role")
    stranger = server.signup()
    assert_api_error(publish(server, stranger["api_key"], account["warehouse_id"], "lake"), 404,
                     "warehouse_not_found")


def run_duckdb_recipe(sql):
    """A public-url DuckDB recipe, executed as printed; the last statement's rows."""
    duck = duckdb.connect()
    return duck.execute(sql).fetchall()


def run_pyiceberg_recipe(code):
    scope = {}
    exec(code, scope)  # the recipe as printed (it prints the table, then we look at it)
    return sorted(scope["table"].scan().to_arrow().column("id").to_pylist())


def test_public_url_recipes_run_as_printed_and_the_version_hint_follows_commits(server, tmp_path):
    from test_cli import base_env, ok

    account = server.signup(engine="pyiceberg")
    catalog = pyiceberg_from_recipe(account["connection"])
    catalog.create_namespace("hint")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    table = catalog.create_table(("hint", "t"), schema=data.schema)
    table.append(data)
    env = base_env(tmp_path, TABLEMERE_URL=server.api, TABLEMERE_API_KEY=account["api_key"])
    ok("catalog", "publish", "--catalog", "lake", "--confirm", "lake", env=env)
    urls = ok("catalog", "public-url", "--catalog", "lake", "--table", "hint.t", env=env)
    # The catalog stays private; the recipes need none of it.
    assert urls["anonymous_catalog"] is False
    assert requests.get(server.catalog + f"/v1/w-{account['warehouse_id']}/namespaces"
                        ).status_code == 401

    def hint():
        r = requests.get(urls["version_hint_url"])
        assert r.status_code == 200, r.text
        return r.text

    stem = urls["metadata_location"].rsplit("/", 1)[1].removesuffix(".metadata.json")
    assert hint() == stem
    assert requests.get(urls["metadata_url"]).json()["current-snapshot-id"] == \
        table.metadata.current_snapshot_id
    assert sorted(i for (i,) in run_duckdb_recipe(urls["duckdb"])) == [1, 2, 3]
    assert sorted(i for (i,) in run_duckdb_recipe(urls["duckdb_latest"])) == [1, 2, 3]
    assert run_pyiceberg_recipe(urls["pyiceberg"]) == [1, 2, 3]
    assert run_pyiceberg_recipe(urls["pyiceberg_latest"]) == [1, 2, 3]

    # A commit moves the hint; the "latest" recipes follow it, the pinned ones do not.
    table.append(pa.table({"id": pa.array([4, 5], pa.int64())}))
    assert hint() != stem and hint() == table.metadata_location.rsplit("/", 1)[1].removesuffix(
        ".metadata.json")
    assert sorted(i for (i,) in run_duckdb_recipe(urls["duckdb_latest"])) == [1, 2, 3, 4, 5]
    assert run_pyiceberg_recipe(urls["pyiceberg_latest"]) == [1, 2, 3, 4, 5]
    assert run_pyiceberg_recipe(urls["pyiceberg"]) == [1, 2, 3]

    # Unpublished, the same recipes are refused.
    ok("catalog", "unpublish", "--catalog", "lake", env=env)
    assert requests.get(urls["version_hint_url"]).status_code == 403
    with pytest.raises(duckdb.Error):
        run_duckdb_recipe(urls["duckdb_latest"])

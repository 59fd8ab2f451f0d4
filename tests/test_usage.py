"""Black-box tests of GET /v1/usage, the operator's metering (POST /internal/usage) and
the storage quota, on a server of their own (its clock moves only in the last test,
so S3 signatures stay in time)."""

import boto3
import pytest
import requests

from conftest import BOOTSTRAP_SECRET, Server, advance_clock
from helpers import wait_for
from test_control_api import assert_api_error, auth, get_connection
from test_signup_codes import internal


@pytest.fixture(scope="module")
def srv(clocked_server):
    return clocked_server


def test_usage_is_unmetered_until_sampled_and_the_storage_quota_refuses_growth(srv):
    account = srv.signup()
    key, wid = account["api_key"], account["warehouse_id"]
    usage = requests.get(srv.api + "/v1/usage", headers=auth(key))
    assert usage.status_code == 200, usage.text
    u = usage.json()
    assert u["limits"]["storage_bytes"] == 5_000_000_000 and u["limits"]["warehouses"] == 3
    [p] = u["projects"]
    assert p["warehouses"] == {"current": 1, "limit": 3, "headroom": 2}
    assert p["storage_bytes"]["unmetered"] is True
    assert p["warehouse_storage"][0]["unmetered"] is True
    # The operator's metering measures the buckets.
    conn = get_connection(srv, key).json()

    cred = conn["catalog_credential"]
    boto3.client("s3", endpoint_url=srv.s3, aws_access_key_id=cred["client_id"],
                 aws_secret_access_key=cred["client_secret"], region_name="us-east-1").put_object(
        Bucket=f"b-{wid}", Key="x.bin", Body=b"x" * 1000)
    r = internal(srv, "POST", "/internal/usage", json={"warehouse_id": wid})
    assert r.status_code == 200, r.text
    assert (r.json()["blob_bytes"], r.json()["blob_objects"], r.json()["measured"]) == \
        (1000, 1, True)
    [p] = requests.get(srv.api + "/v1/usage", headers=auth(key)).json()["projects"]
    assert p["storage_bytes"]["current"] == 1000 and p["storage_bytes"]["unmetered"] is False
    assert p["storage_bytes"]["over_limit"] is False
    # Over the limit: new catalogs, tables and write credentials are refused; reads work.
    r = internal(srv, "POST", "/internal/usage",
                 json={"warehouse_id": wid, "bytes": 6_000_000_000, "objects": 10})
    assert r.status_code == 200 and r.json()["measured"] is False
    r = requests.post(srv.api + "/v1/warehouses", headers=auth(key),
                      json={"project_id": account["project_id"], "name": "more"})
    err = assert_api_error(r, 409, "quota_exceeded", scope="organization")
    assert err["current"] == 6_000_000_000 and err["limit_value"] == 5_000_000_000
    r = requests.post(srv.api + "/v1/tables", headers=auth(key), json={
        "namespace": "ns", "name": "t", "schema": {"type": "struct", "fields": [
            {"id": 1, "name": "a", "type": "int", "required": False}]}})
    assert_api_error(r, 409, "quota_exceeded")
    assert get_connection(srv, key).status_code == 200
    events = requests.get(srv.api + "/v1/audit", headers=auth(key),
                          params={"org_id": account["organization"]["org_id"],
                                  "action": "quota.reject"}).json()["events"]
    assert len(events) == 2
    assert_api_error(internal(srv, "POST", "/internal/usage", json={"warehouse_id": "nope"}),
                     404, "warehouse_not_found")


def test_over_quota_the_buckets_and_the_catalog_go_read_only_until_space_is_freed(srv):
    import pyarrow as pa
    from botocore.exceptions import ClientError
    from engines import pyiceberg_from_recipe

    account = srv.signup(engine="pyiceberg")
    key, wid = account["api_key"], account["warehouse_id"]
    catalog = pyiceberg_from_recipe(account["connection"])
    catalog.create_namespace("q")
    data = pa.table({"id": pa.array([1, 2], pa.int64())})
    table = catalog.create_table(("q", "t"), schema=data.schema)
    table.append(data)
    cred = get_connection(srv, key).json()["catalog_credential"]
    s3 = boto3.client("s3", endpoint_url=srv.s3, aws_access_key_id=cred["client_id"],
                      aws_secret_access_key=cred["client_secret"], region_name="us-east-1")
    s3.put_object(Bucket=f"b-{wid}", Key="keep.bin", Body=b"k")
    # The footprint goes over the limit: recording it runs the enforcement pass.
    r = internal(srv, "POST", "/internal/usage",
                 json={"warehouse_id": wid, "bytes": 6_000_000_000, "objects": 10})
    assert r.status_code == 200 and r.json()["quota"]["made_read_only"] == 1, r.text
    # S3 writes refused with the static credential; reads and deletes work.
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=f"b-{wid}", Key="more.bin", Body=b"m")
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    assert "quota" in refused.value.response["Error"]["Message"]
    assert s3.get_object(Bucket=f"b-{wid}", Key="keep.bin")["Body"].read() == b"k"
    s3.delete_object(Bucket=f"b-{wid}", Key="keep.bin")
    # The catalog: reads work, the vended session is read-only, commits are refused.
    reloaded = catalog.load_table(("q", "t"))
    assert reloaded.scan().to_arrow().num_rows == 2
    with pytest.raises(Exception) as commit:
        reloaded.append(data)
    assert "quota" in str(commit.value)
    assert catalog.load_table(("q", "t")).scan().to_arrow().num_rows == 2
    events = requests.get(srv.api + "/v1/audit", headers=auth(key),
                          params={"org_id": account["organization"]["org_id"],
                                  "action": "quota.*"}).json()["events"]
    assert "quota.enforce" in [e["action"] for e in events]
    # Back under the limit: writable again at the next pass.
    r = internal(srv, "POST", "/internal/usage",
                 json={"warehouse_id": wid, "bytes": 1000, "objects": 1})
    assert r.json()["quota"]["made_writable"] == 1, r.text
    s3.put_object(Bucket=f"b-{wid}", Key="more.bin", Body=b"m")
    catalog.load_table(("q", "t")).append(data)
    assert catalog.load_table(("q", "t")).scan().to_arrow().num_rows == 4
    catalog.drop_table(("q", "t"))


@pytest.fixture
def own_clocked_server():
    """A server of this test's own: its clock moves, and S3 signatures must stay in time
    for the other tests of the module."""
    s = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                          "TABLEMERE_TEST_CLOCK": "1"})
    yield s
    s.cleanup()


def test_usage_history_and_traffic_from_the_buckets_own_counters(own_clocked_server):
    srv = own_clocked_server
    account = srv.signup()
    key, wid = account["api_key"], account["warehouse_id"]
    cred = get_connection(srv, key).json()["catalog_credential"]
    s3 = boto3.client("s3", endpoint_url=srv.s3, aws_access_key_id=cred["client_id"],
                      aws_secret_access_key=cred["client_secret"], region_name="us-east-1")
    assert internal(srv, "POST", "/internal/usage", json={"warehouse_id": wid}).status_code == 200

    def mine():
        [p] = [p for p in requests.get(srv.api + "/v1/usage", headers=auth(key),
                                        params={"days": 3}).json()["projects"]
               if wid in p["warehouse_ids"]]
        [w] = [w for w in p["warehouse_storage"] if w["warehouse_id"] == wid]
        return w

    w = mine()
    # One sample: no traffic yet, and a note that says why.
    assert w["traffic"] is None and "two consecutive" in w["traffic_note"]
    assert len(w["history"]) == 1 and w["history"][0]["samples"] == 1
    # Traffic between two samples: three puts of 2000 bytes, two reads, one failed read.
    for i in range(3):
        s3.put_object(Bucket=f"b-{wid}", Key=f"f{i}.bin", Body=b"z" * 2000)
    for i in range(2):
        assert len(s3.get_object(Bucket=f"b-{wid}", Key=f"f{i}.bin")["Body"].read()) == 2000
    with pytest.raises(Exception):
        s3.get_object(Bucket=f"b-{wid}", Key="missing.bin")
    advance_clock(srv, 3600)
    assert internal(srv, "POST", "/internal/usage", json={"warehouse_id": wid}).status_code == 200
    w = mine()
    t = w["traffic"]
    assert t is not None and t["intervals"] == 1 and t["resets"] == 0, w
    assert t["requests"] == 6 and t["requests_failed"] == 1
    assert t["bytes_in"] >= 6000 and t["bytes_out"] >= 4000
    assert w["trend"]["bytes_delta"] == 6000 and w["trend"]["objects_delta"] == 3
    assert sum(r["samples"] for r in w["history"]) == 2
    assert sum(r["requests"] for r in w["history"]) == 6
    assert_api_error(requests.get(srv.api + "/v1/usage", headers=auth(key),
                                  params={"days": 31}), 400, "invalid_value", field="days")


def test_published_catalogs_count_in_the_public_tier(srv):
    account = srv.signup()
    key, wid = account["api_key"], account["warehouse_id"]
    r = requests.post(srv.api + f"/v1/warehouses/{wid}/public", headers=auth(key),
                      json={"confirm": "lake"})
    assert r.status_code == 200, r.text
    r = internal(srv, "POST", "/internal/usage",
                 json={"warehouse_id": wid, "bytes": 7000, "objects": 3, "blob_bytes": 500})
    assert r.status_code == 200, r.text
    u = requests.get(srv.api + "/v1/usage", headers=auth(key)).json()
    [p] = u["projects"]
    assert p["public_storage_bytes"]["current"] == 7000  # the table bucket only
    assert p["public_storage_bytes"]["limit"] == 50_000_000_000
    assert p["storage_bytes"]["current"] == 7500
    [w] = p["warehouse_storage"]
    assert (w["tier"], w["public"]) == ("public", True)
    [o] = u["organizations"]
    assert o["public_storage_bytes"]["current"] == 7000


def test_the_hourly_metering_pass_samples_every_catalog(srv):
    # Runs last in this module: it moves the server's clock an hour forward.
    account = srv.signup()
    key, wid = account["api_key"], account["warehouse_id"]
    cred = get_connection(srv, key).json()["catalog_credential"]
    boto3.client("s3", endpoint_url=srv.s3, aws_access_key_id=cred["client_id"],
                 aws_secret_access_key=cred["client_secret"], region_name="us-east-1").put_object(
        Bucket=f"b-{wid}", Key="y.bin", Body=b"y" * 2345)

    def storage():
        [p] = requests.get(srv.api + "/v1/usage", headers=auth(key)).json()["projects"]
        return p["warehouse_storage"][0]

    assert storage()["unmetered"] is True
    advance_clock(srv, 3601)
    wait_for(lambda: storage()["unmetered"] is False, "the metering pass")
    w = storage()
    assert (w["blob_bytes"], w["blob_objects"]) == (2345, 1)


def test_handle_checks_are_rate_limited_per_address(srv):
    # 60 checks a minute per caller address; the window passes.
    url = srv.api + "/v1/handles/some-handle"
    for _ in range(60):
        assert requests.get(url).status_code == 200
    r = requests.get(url)
    err = assert_api_error(r, 429, "rate_limited")
    assert 1 <= err["retry_after_seconds"] <= 60 and r.headers["Retry-After"]
    advance_clock(srv, 61)
    assert requests.get(url).status_code == 200

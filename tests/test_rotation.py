"""Rotating a warehouse's credentials retires old secrets, the catalog tokens minted from
them, and the storage sessions vended under them."""

import time

import boto3
import pytest
import requests
from botocore.exceptions import ClientError

from conftest import catalog_token

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}


def s3_client(server, key, secret, token=None):
    return boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        aws_session_token=token)


def error_code(fn):
    with pytest.raises(ClientError) as e:
        fn()
    return e.value.response["Error"]["Code"]


def test_rotation_retires_secrets_tokens_and_sessions(server):
    account = server.signup()
    conn = account["connection"]
    cred = conn["catalog_credential"]
    prefix = conn["warehouse_name"]
    token = catalog_token(server, cred["client_id"], cred["client_secret"])
    h = {"Authorization": "Bearer " + token, "X-Iceberg-Access-Delegation": "vended-credentials"}
    base = f"{server.catalog}/v1/{prefix}"
    assert requests.post(base + "/namespaces", json={"namespace": ["r"]}, headers=h).status_code == 200
    created = requests.post(base + "/namespaces/r/tables", json={"name": "t", "schema": SCHEMA}, headers=h)
    assert created.status_code == 200, created.text
    cfg = created.json()["config"]
    session = s3_client(server, cfg["s3.access-key-id"], cfg["s3.secret-access-key"], cfg["s3.session-token"])
    session.put_object(Bucket=prefix, Key="r/t/data/a.parquet", Body=b"x")
    static = s3_client(server, cred["client_id"], cred["client_secret"])
    static.put_object(Bucket=conn["blob_bucket"], Key="before.txt", Body=b"x")

    assert requests.get(base + "/namespaces/r/tables/t", headers=h).status_code == 200
    rotated = requests.post(f"{server.api}/v1/warehouses/{account['warehouse_id']}/rotate",
                            headers={"Authorization": "Bearer " + account["api_key"]})
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["catalog_credential"]
    assert new["client_id"] == cred["client_id"] and new["client_secret"] != cred["client_secret"]

    # Catalog: the old token and the old secret are refused at once.
    assert requests.get(base + "/namespaces", headers=h).status_code == 401
    assert requests.get(base + "/namespaces/r/tables/t", headers=h).status_code == 401  # loadTable
    assert requests.head(base + "/namespaces/r/tables/t", headers=h).status_code == 401
    old = requests.post(server.catalog + "/v1/oauth/tokens",
                        data={"grant_type": "client_credentials", "client_id": cred["client_id"],
                              "client_secret": cred["client_secret"]})
    assert old.status_code == 401 and old.json()["error"] == "invalid_client"
    # Storage: the old static key and the vended session stop working (within the 1 s cache).
    deadline = time.time() + 5
    while True:
        try:
            static.put_object(Bucket=conn["blob_bucket"], Key="after.txt", Body=b"x")
        except ClientError as e:
            assert e.response["Error"]["Code"] == "SignatureDoesNotMatch"
            break
        assert time.time() < deadline, "old static key still accepted"
        time.sleep(0.05)
    assert error_code(lambda: session.get_object(Bucket=prefix, Key="r/t/data/a.parquet")) == "ExpiredToken"
    # The new credential works end to end.
    new_token = catalog_token(server, new["client_id"], new["client_secret"])
    assert requests.get(base + "/namespaces", headers={"Authorization": "Bearer " + new_token}).status_code == 200
    fresh = s3_client(server, new["client_id"], new["client_secret"])
    assert fresh.get_object(Bucket=conn["blob_bucket"], Key="before.txt")["Body"].read() == b"x"
    # Read holders cannot rotate; unknown warehouses are 404.
    missing = requests.post(f"{server.api}/v1/warehouses/nope/rotate",
                            headers={"Authorization": "Bearer " + account["api_key"]})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "warehouse_not_found"


def test_audit_records_rotation_for_the_caller_and_the_organisation(server):
    account = server.signup()
    key = {"Authorization": "Bearer " + account["api_key"]}
    assert requests.post(f"{server.api}/v1/warehouses/{account['warehouse_id']}/rotate",
                         headers=key).status_code == 200
    own = requests.get(f"{server.api}/v1/audit", params={"action": "warehouse.*"}, headers=key)
    assert own.status_code == 200, own.text
    events = own.json()["events"]
    assert [e["action"] for e in events] == ["warehouse.rotate"]
    assert events[0]["target_id"] == account["warehouse_id"]
    org_id = account["organization"]["org_id"]
    org = requests.get(f"{server.api}/v1/audit", params={"org_id": org_id}, headers=key).json()
    assert org["scope"] == "organization"
    assert {"signup.complete", "warehouse.rotate"} <= {e["action"] for e in org["events"]}
    other = server.signup()
    refused = requests.get(f"{server.api}/v1/audit", params={"org_id": org_id},
                           headers={"Authorization": "Bearer " + other["api_key"]})
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "org_not_found"
    bad = requests.get(f"{server.api}/v1/audit", params={"since": "yesterday"}, headers=key)
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "since"

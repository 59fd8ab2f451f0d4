"""Black-box tests of the Iceberg REST catalog (spec 1.11) against a running tablemere-server.

Every request goes over HTTP to the real binary started by conftest; storage effects are
checked through the server's own S3 endpoint with boto3, and the concurrency test drives
PyIceberg from the recipe GET /v1/connection hands out. The engine traps these tests pin
are collected in /work/shared/spec/engines-interop.md (§2.13-2.14)."""

import base64
import concurrent.futures
import json
import re
import threading
import time
import urllib.parse
import uuid

import boto3
import botocore.config
import botocore.exceptions
import pyarrow as pa
import pytest
import requests

from conftest import Server, catalog_token
from helpers import uid, wait_for, ns_path

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
CREDENTIAL_KEYS = {"s3.access-key-id", "s3.secret-access-key", "s3.session-token",
                   "s3.session-token-expires-at-ms"}
UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# Exactly what the server implements; an endpoint listed here but missing (or the
# reverse) breaks Java's and PyIceberg's endpoint checks.
ENDPOINTS = {
    "GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
}

SCHEMA = {
    "type": "struct", "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
    ],
}


# ---------------------------------------------------------------------------- helpers

# Every new table gets Iceberg Java's one persisted default unless the client sets it.
ZSTD = {"write.parquet.compression-codec": "zstd"}

def assert_iceberg_error(r, status, error_type, message_contains=None):
    """Every catalog error is JSON {"error": {"message", "type", "code"}}."""
    assert r.status_code == status, f"{r.status_code} {r.text}"
    if r.request.method == "HEAD":
        assert r.content == b""
        return None
    assert r.headers.get("Content-Type", "").startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert {"message", "type", "code"} <= set(err), err
    assert err["code"] == status, err
    assert err["type"] == error_type, err
    assert isinstance(err["message"], str) and err["message"], err
    if message_contains is not None:
        assert message_contains in err["message"], err
    return err


def assert_oauth_error(r, status, error):
    """Token endpoint errors use the RFC 6749 shape."""
    assert r.status_code == status, f"{r.status_code} {r.text}"
    body = r.json()
    assert body["error"] == error, body
    assert isinstance(body.get("error_description"), str) and body["error_description"], body
    return body


def s3_client(server, key, secret, token=None):
    return boto3.client(
        "s3", endpoint_url=server.s3, aws_access_key_id=key, aws_secret_access_key=secret,
        aws_session_token=token, region_name="us-east-1",
        config=botocore.config.Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def s3_from_config(server, config):
    """A boto3 client from a vended s3.* config map."""
    return s3_client(server, config["s3.access-key-id"], config["s3.secret-access-key"],
                     config["s3.session-token"])


def list_keys(client, bucket, prefix):
    keys, token = [], None
    while True:
        kw = {"Bucket": bucket, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = client.list_objects_v2(**kw)
        keys += [o["Key"] for o in page.get("Contents", [])]
        if not page.get("IsTruncated"):
            return keys
        token = page["NextContinuationToken"]


def assert_access_denied(call):
    with pytest.raises(botocore.exceptions.ClientError) as info:
        call()
    assert info.value.response["Error"]["Code"] == "AccessDenied", info.value.response


def claims(token):
    """The (unverified) claims of a catalog token, which is a JWT."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def token_response(server, data=None, auth=None, headers=None):
    return requests.post(server.catalog + "/v1/oauth/tokens", data=data or {}, auth=auth,
                         headers=headers or {})


def key_of(location, warehouse_id):
    prefix = f"s3://w-{warehouse_id}/"
    assert location.startswith(prefix), location
    return location[len(prefix):]


def snapshot(location, snapshot_id, parent_id, sequence_number):
    """A snapshot as PyIceberg sends it; the server never opens the manifest list."""
    s = {"snapshot-id": snapshot_id, "sequence-number": sequence_number,
         "timestamp-ms": int(time.time() * 1000),
         "manifest-list": f"{location}/metadata/snap-{snapshot_id}-1-{uuid.uuid4()}.avro",
         "summary": {"operation": "append"}, "schema-id": 0}
    if parent_id is not None:
        s["parent-snapshot-id"] = parent_id
    return s


class Catalog:
    """A catalog client for one identity of one warehouse."""

    def __init__(self, server, credential, warehouse_id):
        self.server = server
        self.client_id = credential["client_id"]
        self.client_secret = credential["client_secret"]
        self.warehouse_id = warehouse_id
        self.prefix = "w-" + warehouse_id
        self.bucket = "w-" + warehouse_id
        self.token = catalog_token(server, self.client_id, self.client_secret)
        self.http = requests.Session()
        self.http.headers["Authorization"] = "Bearer " + self.token

    @classmethod
    def for_account(cls, server, account):
        return cls(server, account["connection"]["catalog_credential"], account["warehouse_id"])

    # -- raw requests
    def url(self, path):
        return f"{self.server.catalog}/v1/{self.prefix}{path}"

    def request(self, method, path, **kw):
        return self.http.request(method, self.url(path), **kw)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def head(self, path, **kw):
        return self.request("HEAD", path, **kw)

    @staticmethod
    def table_path(ns, name):
        return f"/namespaces/{ns_path(ns)}/tables/{urllib.parse.quote(name, safe='')}"

    # -- operations that must succeed
    def create_namespace(self, levels, properties=None):
        body = {"namespace": levels}
        if properties is not None:
            body["properties"] = properties
        r = self.post("/namespaces", json=body)
        assert r.status_code == 200, r.text
        return r.json()

    def create_table(self, ns, name, **extra):
        r = self.post(f"/namespaces/{ns_path(ns)}/tables",
                      json={"name": name, "schema": SCHEMA, **extra})
        assert r.status_code == 200, r.text
        return r.json()

    def load_table(self, ns, name, **kw):
        r = self.get(self.table_path(ns, name), **kw)
        assert r.status_code == 200, r.text
        return r.json()

    def commit(self, ns, name, requirements, updates):
        return self.post(self.table_path(ns, name),
                         json={"identifier": {"namespace": ns, "name": name},
                               "requirements": requirements, "updates": updates})

    def set_properties(self, ns, name, props):
        uuid_ = self.load_table(ns, name)["metadata"]["table-uuid"]
        r = self.commit(ns, name, [{"type": "assert-table-uuid", "uuid": uuid_}],
                        [{"action": "set-properties", "updates": props}])
        assert r.status_code == 200, r.text
        return r.json()

    def append_snapshot(self, ns, name):
        """Commits one snapshot onto main the way PyIceberg does; returns its id."""
        m = self.load_table(ns, name)["metadata"]
        parent = m.get("current-snapshot-id")
        sid = int(uuid.uuid4().int % (2 ** 62))
        r = self.commit(ns, name,
                        [{"type": "assert-table-uuid", "uuid": m["table-uuid"]},
                         {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}],
                        [{"action": "add-snapshot",
                          "snapshot": snapshot(m["location"], sid, parent,
                                               m["last-sequence-number"] + 1)},
                         {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                          "snapshot-id": sid}])
        assert r.status_code == 200, r.text
        return sid

    def s3(self):
        """The static read/write identity used as an S3 key pair."""
        return s3_client(self.server, self.client_id, self.client_secret)


def create_agent(server, account, name, level):
    r = requests.post(f"{server.api}/v1/orgs/{account['organization']['org_id']}/agents",
                      headers={"Authorization": "Bearer " + account["api_key"]},
                      json={"name": name,
                            "grants": [{"warehouse_id": account["warehouse_id"], "level": level}]})
    assert r.status_code == 201, r.text
    return r.json()


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def owner(server):
    """This module's own account, so other modules' listings never see its namespaces."""
    return server.signup()


@pytest.fixture(scope="module")
def cat(server, owner):
    return Catalog.for_account(server, owner)


@pytest.fixture
def ns(cat):
    """A fresh namespace in this module's account."""
    levels = [uid("ns")]
    cat.create_namespace(levels)
    return levels


@pytest.fixture
def fresh(server):
    """A catalog of a brand-new account, for exact listings."""
    return Catalog.for_account(server, server.signup())


@pytest.fixture(scope="module")
def other(server):
    """A second account: its warehouse is not ours."""
    return Catalog.for_account(server, server.signup())


@pytest.fixture(scope="module")
def reader(server, owner):
    """The read-only identity t-<id>-ro, reached through an agent with a read grant."""
    agent = create_agent(server, owner, uid("reader"), "read")
    conn = server.connection(agent["api_key"])
    assert conn["identity"] == f"t-{owner['warehouse_id']}-ro"
    assert conn["catalog_credential"]["client_id"] == conn["identity"]
    assert conn["level"] == "read"
    return Catalog(server, conn["catalog_credential"], owner["warehouse_id"])


@pytest.fixture(scope="module")
def short_server():
    """A second server whose catalog tokens live one second."""
    s = Server(extra_env={"TABLEMERE_CATALOG_TOKEN_SECONDS": "1"})
    yield s
    s.cleanup()


# ---------------------------------------------------------------------------- /v1/config

@pytest.mark.parametrize("spelling", ["w-{id}", "s3://w-{id}/", "s3://w-{id}", None])
def test_config_resolves_the_warehouse_in_every_spelling(cat, spelling):
    params = {} if spelling is None else {"warehouse": spelling.format(id=cat.warehouse_id)}
    r = requests.get(cat.server.catalog + "/v1/config", params=params,
                     headers={"Authorization": "Bearer " + cat.token})
    assert r.status_code == 200, r.text
    body = r.json()
    # DuckDB's parser requires both maps as objects; every client wants string values.
    assert isinstance(body["defaults"], dict) and isinstance(body["overrides"], dict)
    for m in (body["defaults"], body["overrides"]):
        assert all(isinstance(v, str) for v in m.values()), m
    assert body["overrides"]["prefix"] == f"w-{cat.warehouse_id}"
    assert body["overrides"]["warehouse"] == f"s3://w-{cat.warehouse_id}/"
    assert len(body["endpoints"]) == len(ENDPOINTS)
    assert set(body["endpoints"]) == ENDPOINTS
    # No S3 secrets in config: PyIceberg would merge them into every FileIO.
    assert not any(k.startswith("s3.") for m in (body["defaults"], body["overrides"]) for k in m)


def test_config_for_another_accounts_warehouse_is_forbidden(cat, other):
    for spelling in (f"w-{other.warehouse_id}", f"s3://w-{other.warehouse_id}/"):
        r = requests.get(cat.server.catalog + "/v1/config", params={"warehouse": spelling},
                         headers={"Authorization": "Bearer " + cat.token})
        assert_iceberg_error(r, 403, "ForbiddenException", f"w-{cat.warehouse_id}")
    # The other warehouse's prefix is refused on every route, not only on /v1/config.
    other.create_namespace([uid("secret")])
    r = cat.http.get(f"{cat.server.catalog}/v1/w-{other.warehouse_id}/namespaces")
    assert_iceberg_error(r, 403, "ForbiddenException")
    r = cat.http.post(f"{cat.server.catalog}/v1/w-{other.warehouse_id}/namespaces",
                      json={"namespace": [uid("intruder")]})
    assert_iceberg_error(r, 403, "ForbiddenException")


# ---------------------------------------------------------------------------- /v1/oauth/tokens

def assert_token_works(server, token, warehouse_id):
    r = requests.get(server.catalog + "/v1/config", params={"warehouse": f"w-{warehouse_id}"},
                     headers={"Authorization": "Bearer " + token})
    assert r.status_code == 200, r.text
    assert r.json()["overrides"]["prefix"] == f"w-{warehouse_id}"


def assert_token_body(r):
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"].lower() == "bearer"
    assert body["expires_in"] == 900
    assert body["issued_token_type"] == ACCESS_TOKEN_TYPE
    assert isinstance(body["access_token"], str) and len(body["access_token"]) > 20
    assert r.headers.get("Cache-Control") == "no-store"
    return body["access_token"]


@pytest.mark.parametrize("scope", [None, "catalog", "PRINCIPAL_ROLE:ALL"])
def test_token_client_credentials_in_form_body(cat, scope):
    data = {"grant_type": "client_credentials", "client_id": cat.client_id,
            "client_secret": cat.client_secret}
    if scope:
        data["scope"] = scope
    token = assert_token_body(token_response(cat.server, data))
    assert_token_works(cat.server, token, cat.warehouse_id)


@pytest.mark.parametrize("scope", [None, "catalog", "PRINCIPAL_ROLE:ALL"])
def test_token_client_credentials_with_http_basic(cat, scope):
    # DuckDB: Basic auth, no client_id in the body.
    data = {"grant_type": "client_credentials"}
    if scope:
        data["scope"] = scope
    token = assert_token_body(token_response(cat.server, data,
                                             auth=(cat.client_id, cat.client_secret)))
    assert_token_works(cat.server, token, cat.warehouse_id)


def test_token_wrong_credentials_are_invalid_client(cat, other):
    good = {"grant_type": "client_credentials", "client_id": cat.client_id}
    cases = [
        dict(data={**good, "client_secret": cat.client_secret + "x"}),
        dict(data={**good, "client_secret": other.client_secret}),  # another warehouse's secret
        dict(data={"grant_type": "client_credentials", "client_id": "t-nobody",
                   "client_secret": "tms_x"}),
        dict(data={"grant_type": "client_credentials", "client_id": f"t-{uuid.uuid4()}",
                   "client_secret": cat.client_secret}),
        dict(data={"grant_type": "client_credentials"}, auth=(cat.client_id, "wrong")),
        dict(data={"grant_type": "client_credentials"}),  # no credentials at all
        dict(data=good),  # no secret
    ]
    for case in cases:
        assert_oauth_error(token_response(cat.server, **case), 401, "invalid_client")


def test_token_unsupported_grant_type(cat):
    for grant in ("password", "authorization_code", ""):
        r = token_response(cat.server, {"grant_type": grant, "client_id": cat.client_id,
                                        "client_secret": cat.client_secret})
        assert_oauth_error(r, 400, "unsupported_grant_type")


def test_token_exchange_returns_a_new_working_token(cat):
    old = catalog_token(cat.server, cat.client_id, cat.client_secret)
    exchange = {"grant_type": TOKEN_EXCHANGE, "subject_token": old,
                "subject_token_type": ACCESS_TOKEN_TYPE, "scope": "catalog"}
    # Java refreshes with the current token as Bearer beside the subject token.
    for headers in ({}, {"Authorization": "Bearer " + old}):
        new = assert_token_body(token_response(cat.server, exchange, headers=headers))
        # The same principal, and a lifetime that starts no earlier than the old one's.
        assert {k: claims(new)[k] for k in ("sub", "wh", "ro")} == \
            {"sub": cat.client_id, "wh": cat.warehouse_id, "ro": False}
        assert claims(new)["exp"] >= claims(old)["exp"]
        assert_token_works(cat.server, new, cat.warehouse_id)
        ns = [uid("exch")]
        r = requests.post(cat.url("/namespaces"), json={"namespace": ns},
                          headers={"Authorization": "Bearer " + new})
        assert r.status_code == 200, r.text  # the exchanged token keeps write access


def test_token_exchange_rejects_bad_subject_tokens(cat):
    r = token_response(cat.server, {"grant_type": TOKEN_EXCHANGE,
                                    "subject_token_type": ACCESS_TOKEN_TYPE})
    assert_oauth_error(r, 400, "invalid_request")
    for subject in ("garbage", "a.b.c", cat.token[:-4] + "AAAA"):
        r = token_response(cat.server, {"grant_type": TOKEN_EXCHANGE, "subject_token": subject,
                                        "subject_token_type": ACCESS_TOKEN_TYPE})
        assert_oauth_error(r, 400, "invalid_grant")


def test_token_exchange_keeps_read_only(reader):
    new = assert_token_body(token_response(reader.server, {
        "grant_type": TOKEN_EXCHANGE, "subject_token": reader.token,
        "subject_token_type": ACCESS_TOKEN_TYPE}))
    r = requests.post(reader.url("/namespaces"), json={"namespace": [uid("ro")]},
                      headers={"Authorization": "Bearer " + new})
    assert_iceberg_error(r, 403, "ForbiddenException")


def tampered(token):
    """The token with its claims widened (write access, long life) and the old signature."""
    header, _, sig = token.split(".")
    c = claims(token)
    c["ro"] = False
    c["exp"] += 10 ** 6
    forged = base64.urlsafe_b64encode(json.dumps(c).encode()).decode().rstrip("=")
    return f"{header}.{forged}.{sig}"


def test_missing_garbage_and_forged_bearers_are_401(cat, reader):
    headers = [
        {},
        {"Authorization": "Bearer garbage"},
        {"Authorization": "Bearer a.b.c"},
        {"Authorization": "Bearer "},
        {"Authorization": "Basic " + base64.b64encode(
            f"{cat.client_id}:{cat.client_secret}".encode()).decode()},
        {"Authorization": cat.token},  # no scheme
        {"Authorization": "Bearer " + tampered(reader.token)},  # forged claims, old signature
    ]
    for h in headers:
        r = requests.get(cat.server.catalog + "/v1/config", headers=h)
        assert_iceberg_error(r, 401, "NotAuthorizedException")
        r = requests.get(cat.url("/namespaces"), headers=h)
        assert_iceberg_error(r, 401, "NotAuthorizedException")
        r = requests.post(cat.url("/namespaces"), headers=h, json={"namespace": [uid("x")]})
        assert_iceberg_error(r, 401, "NotAuthorizedException")


def test_expired_tokens_are_401_and_can_be_refreshed(short_server):
    account = short_server.signup()
    cred = account["connection"]["catalog_credential"]
    wid = account["warehouse_id"]
    data = {"grant_type": "client_credentials", "client_id": cred["client_id"],
            "client_secret": cred["client_secret"]}
    r = token_response(short_server, data)
    assert r.status_code == 200, r.text
    assert r.json()["expires_in"] == 1
    token = r.json()["access_token"]

    def rejected():
        resp = requests.get(f"{short_server.catalog}/v1/w-{wid}/namespaces",
                            headers={"Authorization": "Bearer " + token})
        assert resp.status_code in (200, 401), resp.text
        return [resp] if resp.status_code == 401 else None  # a 401 Response is falsy

    [expired] = wait_for(rejected, "the 1 s token to expire", timeout=10)
    # 401, never 5xx or 501: DuckDB and PyIceberg only re-authenticate on 401.
    assert_iceberg_error(expired, 401, "NotAuthorizedException", "expired")
    r = requests.get(short_server.catalog + "/v1/config",
                     headers={"Authorization": "Bearer " + token})
    assert_iceberg_error(r, 401, "NotAuthorizedException")

    exchange = {"grant_type": TOKEN_EXCHANGE, "subject_token": token,
                "subject_token_type": ACCESS_TOKEN_TYPE}
    # An expired subject alone cannot be exchanged...
    assert_oauth_error(token_response(short_server, exchange), 400, "invalid_grant")
    # ...but Java sends its client credentials as Basic once the token expired.
    r = token_response(short_server, exchange, auth=(cred["client_id"], cred["client_secret"]))
    assert r.status_code == 200, r.text
    assert r.json()["token_type"] == "bearer" and r.json()["expires_in"] == 1
    assert r.json()["access_token"] != token

    # A fresh token works (retried: a 1 s token minted at the end of a second may already
    # be past its whole-second expiry when it arrives).
    def fresh_token_works():
        t = token_response(short_server, data).json()["access_token"]
        return requests.get(f"{short_server.catalog}/v1/w-{wid}/namespaces",
                            headers={"Authorization": "Bearer " + t}).status_code == 200
    wait_for(fresh_token_works, "a fresh token to be accepted", timeout=10)


# ---------------------------------------------------------------------------- namespaces

def test_namespace_create_load_head_drop(cat):
    levels = [uid("ns")]
    r = cat.post("/namespaces", json={"namespace": levels, "properties": {"owner": "ana"}})
    assert r.status_code == 200, r.text  # DuckDB demands 200, not 201
    assert r.json() == {"namespace": levels, "properties": {"owner": "ana"}}

    r = cat.post("/namespaces", json={"namespace": levels})
    assert_iceberg_error(r, 409, "AlreadyExistsException", levels[0])

    r = cat.get(f"/namespaces/{ns_path(levels)}")
    assert r.status_code == 200, r.text
    assert r.json() == {"namespace": levels, "properties": {
        "owner": "ana", "location": f"s3://w-{cat.warehouse_id}/{levels[0]}"}}

    r = cat.head(f"/namespaces/{ns_path(levels)}")
    assert r.status_code == 204 and r.content == b""
    r = cat.head(f"/namespaces/{uid('missing')}")
    assert r.status_code == 404 and r.content == b""
    assert_iceberg_error(cat.get(f"/namespaces/{uid('missing')}"), 404, "NoSuchNamespaceException")

    r = cat.delete(f"/namespaces/{ns_path(levels)}")
    assert r.status_code == 204, r.text
    assert_iceberg_error(cat.get(f"/namespaces/{ns_path(levels)}"), 404, "NoSuchNamespaceException")
    assert cat.head(f"/namespaces/{ns_path(levels)}").status_code == 404
    assert_iceberg_error(cat.delete(f"/namespaces/{ns_path(levels)}"), 404,
                         "NoSuchNamespaceException")


def test_namespace_explicit_location_is_kept(cat):
    levels = [uid("ns")]
    cat.create_namespace(levels, {"location": "s3://w-elsewhere/x"})
    assert cat.get(f"/namespaces/{ns_path(levels)}").json()["properties"] == {
        "location": "s3://w-elsewhere/x"}


def list_all(cat, path, key, page_size, first_token):
    """Follows next-page-token like the engines; returns (items, page sizes)."""
    items, sizes = [], []
    params = {"pageSize": str(page_size)}
    if first_token is not None:
        params["pageToken"] = first_token
    for _ in range(50):
        r = cat.get(path, params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        items += body[key]
        sizes.append(len(body[key]))
        if not body.get("next-page-token"):
            assert body["next-page-token"] is None
            return items, sizes
        params = {"pageSize": str(page_size), "pageToken": body["next-page-token"]}
    raise AssertionError("pagination did not terminate")


def test_list_namespaces_and_pagination(fresh):
    names = sorted(uid("ns") for _ in range(5))
    for n in names:
        fresh.create_namespace([n])
    expected = [[n] for n in names]

    # No paging parameters (DuckDB, first PyIceberg call without rest-page-size): all of them.
    r = fresh.get("/namespaces")
    assert r.status_code == 200, r.text
    assert r.json() == {"namespaces": expected, "next-page-token": None}
    # Java sends an empty pageToken first; without pageSize that is still everything.
    assert fresh.get("/namespaces", params={"pageToken": ""}).json()["namespaces"] == expected

    for first in ("", None):  # Java (pageToken=) and PyIceberg (none) with pageSize
        items, sizes = list_all(fresh, "/namespaces", "namespaces", 2, first)
        assert items == expected
        assert sizes == [2, 2, 1]
    items, sizes = list_all(fresh, "/namespaces", "namespaces", 5, "")
    assert (items, sizes) == (expected, [5])

    r = fresh.get("/namespaces", params={"pageSize": "2"})
    token = r.json()["next-page-token"]
    assert isinstance(token, str) and token
    r = fresh.get("/namespaces", params={"pageSize": "2", "pageToken": token})
    assert r.json()["namespaces"] == expected[2:4]

    for params in ({"pageToken": "not-a-token"}, {"pageSize": "0"}, {"pageSize": "-3"},
                   {"pageSize": "x"}):
        assert_iceberg_error(fresh.get("/namespaces", params=params), 400, "BadRequestException")


def test_nested_namespaces_and_the_unit_separator(fresh):
    fresh.create_namespace(["p"])
    fresh.create_namespace(["p", "c1"])
    fresh.create_namespace(["p", "c2"])
    fresh.create_namespace(["p", "c1", "g"])

    assert fresh.get("/namespaces").json()["namespaces"] == [["p"]]
    r = fresh.get("/namespaces", params={"parent": "p"})
    assert r.json() == {"namespaces": [["p", "c1"], ["p", "c2"]], "next-page-token": None}
    # The parent travels as a%1Fb (Java) ...
    r = fresh.http.get(fresh.url("/namespaces") + "?parent=p%1Fc1")
    assert r.status_code == 200, r.text
    assert r.json()["namespaces"] == [["p", "c1", "g"]]
    # ... or as a raw 0x1F that requests encodes (PyIceberg).
    r = fresh.get("/namespaces", params={"parent": "p\x1fc1"})
    assert r.json()["namespaces"] == [["p", "c1", "g"]]
    r = fresh.get("/namespaces", params={"parent": "p\x1fc2"})
    assert r.json()["namespaces"] == []

    r = fresh.http.get(fresh.url("/namespaces/p%1Fc1"))
    assert r.status_code == 200, r.text
    assert r.json()["namespace"] == ["p", "c1"]
    assert r.json()["properties"]["location"] == f"s3://w-{fresh.warehouse_id}/p/c1"
    assert fresh.http.head(fresh.url("/namespaces/p%1Fc1%1Fg")).status_code == 204

    assert_iceberg_error(fresh.get("/namespaces", params={"parent": "nope"}), 404,
                         "NoSuchNamespaceException")
    r = fresh.post("/namespaces", json={"namespace": ["nope", "child"]})
    assert_iceberg_error(r, 404, "NoSuchNamespaceException")
    # A parent with children is not empty.
    assert_iceberg_error(fresh.delete("/namespaces/p"), 409, "NamespaceNotEmptyException")
    assert_iceberg_error(fresh.http.delete(fresh.url("/namespaces/p%1Fc1")), 409,
                         "NamespaceNotEmptyException")
    assert fresh.http.delete(fresh.url("/namespaces/p%1Fc1%1Fg")).status_code == 204
    assert fresh.http.delete(fresh.url("/namespaces/p%1Fc1")).status_code == 204
    assert fresh.get("/namespaces", params={"parent": "p"}).json()["namespaces"] == [["p", "c2"]]


def test_concurrent_namespace_property_updates_keep_every_key(cat):
    """Each update reads and writes the properties in one transaction: sixteen clients
    setting sixteen different keys at once leave all sixteen."""
    from concurrent.futures import ThreadPoolExecutor
    levels = [uid("ns")]
    cat.create_namespace(levels)
    path = f"/namespaces/{ns_path(levels)}/properties"
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda i: cat.post(path, json={"updates": {f"k{i}": str(i)}})
                              .status_code, range(16)))
    assert codes == [200] * 16
    props = cat.get(f"/namespaces/{ns_path(levels)}").json()["properties"]
    assert {k: v for k, v in props.items() if k.startswith("k")} == {
        f"k{i}": str(i) for i in range(16)}


def test_namespace_properties_update(cat):
    levels = [uid("ns")]
    cat.create_namespace(levels, {"owner": "ana", "keep": "1"})
    path = f"/namespaces/{ns_path(levels)}/properties"
    r = cat.post(path, json={"removals": ["owner", "absent"],
                             "updates": {"team": "x", "keep": "2"}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert sorted(body["updated"]) == ["keep", "team"]
    assert body["removed"] == ["owner"]
    assert body["missing"] == ["absent"]
    props = cat.get(f"/namespaces/{ns_path(levels)}").json()["properties"]
    assert props == {"keep": "2", "team": "x",
                     "location": f"s3://w-{cat.warehouse_id}/{levels[0]}"}

    r = cat.post(path, json={"removals": ["keep"]})
    assert r.status_code == 200 and r.json() == {"updated": [], "removed": ["keep"], "missing": []}
    # The same key both removed and updated is 422 in the spec.
    r = cat.post(path, json={"removals": ["team"], "updates": {"team": "y"}})
    assert_iceberg_error(r, 422, "UnprocessableEntityException", "team")
    assert_iceberg_error(cat.post(path, json={"updates": {"n": 1}}), 400, "BadRequestException")
    assert_iceberg_error(cat.post(path, json={"removals": [1]}), 400, "BadRequestException")
    assert_iceberg_error(cat.post(f"/namespaces/{uid('missing')}/properties", json={"updates": {}}),
                         404, "NoSuchNamespaceException")
    assert cat.get(f"/namespaces/{ns_path(levels)}").json()["properties"]["team"] == "x"


def test_drop_non_empty_namespace_is_409(cat, ns):
    cat.create_table(ns, "t")
    assert_iceberg_error(cat.delete(f"/namespaces/{ns_path(ns)}"), 409,
                         "NamespaceNotEmptyException")
    assert cat.head(f"/namespaces/{ns_path(ns)}").status_code == 204
    assert cat.delete(cat.table_path(ns, "t")).status_code == 204
    assert cat.delete(f"/namespaces/{ns_path(ns)}").status_code == 204


@pytest.mark.parametrize("body", [
    {"namespace": "flat"}, {"namespace": []}, {"namespace": ["a/b"]}, {"namespace": [""]},
    {"namespace": [1]}, {}, {"namespace": ["ok"], "properties": {"n": 1}},
    {"namespace": ["ok"], "properties": ["x"]},
])
def test_invalid_namespace_bodies_are_400(cat, body):
    assert_iceberg_error(cat.post("/namespaces", json=body), 400, "BadRequestException")


# ---------------------------------------------------------------------------- tables

def assert_vended_config(cat, config, ns, name):
    assert config["s3.endpoint"] == cat.server.s3
    assert config["s3.path-style-access"] == "true"
    assert config["s3.region"] == "us-east-1" and config["client.region"] == "us-east-1"
    assert CREDENTIAL_KEYS <= set(config)
    assert int(config["s3.session-token-expires-at-ms"]) > time.time() * 1000
    assert config["client.refresh-credentials-endpoint"] == \
        f"v1/w-{cat.warehouse_id}{Catalog.table_path(ns, name)}/credentials"
    assert all(isinstance(v, str) for v in config.values())


def test_create_table_returns_a_full_load_result(cat, ns):
    body = cat.create_table(ns, "t", properties={"owner": "ana", "format-version": "2"})
    loc = f"s3://w-{cat.warehouse_id}/{ns[0]}/t"
    assert re.fullmatch(re.escape(loc) + r"/metadata/00000-" + UUID_RE + r"\.metadata\.json",
                        body["metadata-location"]), body["metadata-location"]
    m = body["metadata"]
    assert m["format-version"] == 2
    assert m["location"] == loc
    assert re.fullmatch(UUID_RE, m["table-uuid"])
    assert m["properties"] == {**ZSTD, "owner": "ana"}  # format-version is reserved, not stored
    assert m["current-schema-id"] == 0 and m["schemas"][0]["fields"] == SCHEMA["fields"]
    assert m["last-column-id"] == 2
    assert m["current-snapshot-id"] is None and m["snapshots"] == [] and m["refs"] == {}
    assert_vended_config(cat, body["config"], ns, "t")
    creds = body["storage-credentials"]
    assert len(creds) == 1
    assert creds[0]["prefix"] == f"s3://w-{cat.warehouse_id}/{ns[0]}/t/"
    assert_vended_config(cat, creds[0]["config"], ns, "t")

    # The metadata file really is in the warehouse bucket, and says the same thing.
    obj = cat.s3().get_object(Bucket=cat.bucket,
                              Key=key_of(body["metadata-location"], cat.warehouse_id))
    stored = json.loads(obj["Body"].read())
    assert stored["table-uuid"] == m["table-uuid"] and stored["location"] == loc

    r = cat.post(f"/namespaces/{ns_path(ns)}/tables", json={"name": "t", "schema": SCHEMA})
    assert_iceberg_error(r, 409, "AlreadyExistsException", "t")


def test_create_table_assigns_fresh_field_ids(cat, ns):
    # Ids left out are numbered the reference's way: a struct's fields first, then nested.
    schema = {"type": "struct", "fields": [
        {"name": "a", "required": True, "type": "int"},
        {"name": "b", "required": False,
         "type": {"type": "struct", "fields": [
             {"name": "c", "required": False, "type": "string"}]}}]}
    r = cat.post(f"/namespaces/{ns_path(ns)}/tables", json={"name": "fresh", "schema": schema})
    assert r.status_code == 200, r.text
    m = r.json()["metadata"]
    fields = m["schemas"][0]["fields"]
    assert [f["id"] for f in fields] == [1, 2]
    assert fields[1]["type"]["fields"][0]["id"] == 3
    assert m["last-column-id"] == 3


def test_create_table_bad_requests(cat, ns):
    path = f"/namespaces/{ns_path(ns)}/tables"
    cases = [
        {"schema": SCHEMA},                                    # no name
        {"name": "x"},                                         # no schema
        {"name": "a/b", "schema": SCHEMA},                     # invalid name
        {"name": "x", "schema": SCHEMA, "location": "s3://w-other/x"},   # outside warehouse
        {"name": "x", "schema": SCHEMA, "properties": {"format-version": "9"}},
        {"name": "x", "schema": SCHEMA, "properties": {"n": 1}},
    ]
    for body in cases:
        assert_iceberg_error(cat.post(path, json=body), 400, "BadRequestException")
    assert_iceberg_error(cat.get(cat.table_path(ns, "x")), 404, "NoSuchTableException")


def test_client_managed_access_gets_no_credentials(cat, ns):
    body = cat.create_table(ns, "t")
    for headers in ({"X-Iceberg-Access-Delegation": "client-managed"},
                    {"X-Iceberg-Access-Delegation": "remote-signing"}):
        r = cat.get(cat.table_path(ns, "t"), headers=headers)
        assert r.status_code == 200, r.text
        assert "storage-credentials" not in r.json()
        assert not CREDENTIAL_KEYS & set(r.json()["config"])
        assert r.json()["metadata-location"] == body["metadata-location"]
    r = cat.get(cat.table_path(ns, "t"),
                headers={"X-Iceberg-Access-Delegation": "vended-credentials,remote-signing"})
    assert len(r.json()["storage-credentials"]) == 1


def test_load_head_and_snapshot_modes(cat, ns):
    created = cat.create_table(ns, "t")
    loaded = cat.load_table(ns, "t")
    assert loaded["metadata-location"] == created["metadata-location"]
    assert loaded["metadata"] == created["metadata"]
    assert_vended_config(cat, loaded["config"], ns, "t")

    r = cat.head(cat.table_path(ns, "t"))
    assert r.status_code == 204 and r.content == b""
    r = cat.head(cat.table_path(ns, "nope"))
    assert r.status_code == 404 and r.content == b""

    first = cat.append_snapshot(ns, "t")
    second = cat.append_snapshot(ns, "t")
    # An unreferenced snapshot: added, never pointed at by a ref.
    m = cat.load_table(ns, "t")["metadata"]
    stray = 7
    r = cat.commit(ns, "t", [{"type": "assert-table-uuid", "uuid": m["table-uuid"]}],
                   [{"action": "add-snapshot",
                     "snapshot": snapshot(m["location"], stray, None,
                                          m["last-sequence-number"] + 1)}])
    assert r.status_code == 200, r.text

    full = cat.load_table(ns, "t", params={"snapshots": "all"})["metadata"]
    assert {s["snapshot-id"] for s in full["snapshots"]} == {first, second, stray}
    assert full["current-snapshot-id"] == second
    assert full["refs"] == {"main": {"snapshot-id": second, "type": "branch"}}
    assert [e["snapshot-id"] for e in full["snapshot-log"]] == [first, second]
    assert cat.load_table(ns, "t")["metadata"]["snapshots"] == full["snapshots"]

    refs = cat.load_table(ns, "t", params={"snapshots": "refs"})["metadata"]
    assert [s["snapshot-id"] for s in refs["snapshots"]] == [second]
    assert refs["current-snapshot-id"] == second and refs["refs"] == full["refs"]


def test_list_tables_with_pagination(cat, ns):
    for name in ("t3", "t1", "t2"):
        cat.create_table(ns, name)
    path = f"/namespaces/{ns_path(ns)}/tables"
    expected = [{"namespace": ns, "name": n} for n in ("t1", "t2", "t3")]
    r = cat.get(path)
    assert r.status_code == 200, r.text
    assert r.json() == {"identifiers": expected, "next-page-token": None}
    for first in ("", None):
        items, sizes = list_all(cat, path, "identifiers", 2, first)
        assert items == expected and sizes == [2, 1]
    assert_iceberg_error(cat.get(f"/namespaces/{uid('missing')}/tables"), 404,
                         "NoSuchNamespaceException")


def test_commit_set_properties_writes_the_next_metadata_version(cat, ns):
    created = cat.create_table(ns, "t")
    loc0 = created["metadata-location"]
    base = f"s3://w-{cat.warehouse_id}/{ns[0]}/t/metadata/"

    one = cat.set_properties(ns, "t", {"k1": "v1"})
    assert re.fullmatch(re.escape(base) + "00001-" + UUID_RE + r"\.metadata\.json",
                        one["metadata-location"]), one["metadata-location"]
    assert one["metadata"]["properties"] == {**ZSTD, "k1": "v1"}
    assert [e["metadata-file"] for e in one["metadata"]["metadata-log"]] == [loc0]
    assert one["metadata"]["last-updated-ms"] >= created["metadata"]["last-updated-ms"]
    loaded = cat.load_table(ns, "t")
    assert loaded["metadata-location"] == one["metadata-location"]
    assert loaded["metadata"]["properties"] == {**ZSTD, "k1": "v1"}

    r = cat.commit(ns, "t", [], [{"action": "remove-properties", "removals": ["k1"]},
                                 {"action": "set-properties", "updates": {"k2": "v2"}}])
    assert r.status_code == 200, r.text
    two = r.json()
    assert two["metadata-location"].startswith(base + "00002-")
    assert two["metadata"]["properties"] == {**ZSTD, "k2": "v2"}
    assert [e["metadata-file"] for e in two["metadata"]["metadata-log"]] == \
        [loc0, one["metadata-location"]]

    # A commit that changes nothing writes no new version.
    r = cat.commit(ns, "t", [], [])
    assert r.status_code == 200 and r.json()["metadata-location"] == two["metadata-location"]
    keys = list_keys(cat.s3(), cat.bucket, f"{ns[0]}/t/metadata/")
    assert sorted(k.rsplit("/", 1)[1][:5] for k in keys) == ["00000", "00001", "00002"]


def duckdb_create_updates(staged_metadata, with_snapshot):
    """The updates DuckDB 1.5 commits for a staged CREATE (TABLE AS), in its order:
    set-current-schema comes last, after the snapshot."""
    loc = staged_metadata["location"]
    updates = [
        {"action": "assign-uuid", "uuid": staged_metadata["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": SCHEMA, "last-column-id": 2},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": loc},
        {"action": "set-properties", "updates": {"created-by": "duckdb"}},
    ]
    sid = None
    if with_snapshot:
        sid = 4242
        updates += [
            {"action": "add-snapshot", "snapshot": snapshot(loc, sid, None, 1)},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": sid},
        ]
    updates.append({"action": "set-current-schema", "schema-id": 0})
    return updates, sid


def test_stage_create_then_commit_with_assert_create(cat, ns):
    r = cat.post(f"/namespaces/{ns_path(ns)}/tables",
                 json={"name": "staged", "schema": SCHEMA, "stage-create": True})
    assert r.status_code == 200, r.text
    staged = r.json()
    assert staged["metadata-location"] is None
    assert staged["metadata"]["location"] == f"s3://w-{cat.warehouse_id}/{ns[0]}/staged"
    # PyIceberg ignores storage-credentials when metadata-location is null: config carries them.
    assert_vended_config(cat, staged["config"], ns, "staged")
    assert staged["storage-credentials"][0]["prefix"] == \
        f"s3://w-{cat.warehouse_id}/{ns[0]}/staged/"

    # Nothing exists yet.
    assert_iceberg_error(cat.get(cat.table_path(ns, "staged")), 404, "NoSuchTableException")
    assert cat.head(cat.table_path(ns, "staged")).status_code == 404
    assert cat.get(f"/namespaces/{ns_path(ns)}/tables").json()["identifiers"] == []
    assert list_keys(cat.s3(), cat.bucket, f"{ns[0]}/staged/") == []

    # The staged session can write data under the future table's prefix, and only there.
    s3 = s3_from_config(cat.server, staged["config"])
    s3.put_object(Bucket=cat.bucket, Key=f"{ns[0]}/staged/data/part-0.parquet", Body=b"PAR1")
    assert_access_denied(lambda: s3.put_object(Bucket=cat.bucket,
                                               Key=f"{ns[0]}/other/data/x.parquet", Body=b"x"))

    updates, sid = duckdb_create_updates(staged["metadata"], with_snapshot=True)
    r = cat.commit(ns, "staged", [{"type": "assert-create"}], updates)
    assert r.status_code == 200, r.text
    committed = r.json()
    assert committed["metadata-location"].startswith(
        f"s3://w-{cat.warehouse_id}/{ns[0]}/staged/metadata/00000-")
    m = committed["metadata"]
    assert m["table-uuid"] == staged["metadata"]["table-uuid"]
    assert m["format-version"] == 2 and m["current-schema-id"] == 0
    assert m["current-snapshot-id"] == sid and m["last-sequence-number"] == 1
    assert m["properties"] == {"created-by": "duckdb"}

    loaded = cat.load_table(ns, "staged")
    assert loaded["metadata-location"] == committed["metadata-location"]
    assert loaded["metadata"]["table-uuid"] == staged["metadata"]["table-uuid"]

    # A second create of the same name loses.
    r = cat.commit(ns, "staged", [{"type": "assert-create"}], updates)
    assert_iceberg_error(r, 409, "CommitFailedException", "Requirement failed: table already exists")


def test_assert_create_rules(cat, ns):
    updates, _ = duckdb_create_updates(
        {"table-uuid": str(uuid.uuid4()), "location": f"s3://w-{cat.warehouse_id}/{ns[0]}/c"},
        with_snapshot=False)
    # assert-create must be the only requirement.
    r = cat.commit(ns, "c", [{"type": "assert-create"},
                             {"type": "assert-current-schema-id", "current-schema-id": 0}], updates)
    assert_iceberg_error(r, 400, "BadRequestException")
    # A plain commit to a table that does not exist is 404, not a create.
    r = cat.commit(ns, "c", [], updates)
    assert_iceberg_error(r, 404, "NoSuchTableException")
    # A create in a missing namespace.
    missing = [uid("missing")]
    r = cat.commit(missing, "c", [{"type": "assert-create"}], updates)
    assert_iceberg_error(r, 404, "NoSuchNamespaceException")
    # PyIceberg's create transaction: -1 means "last added" everywhere.
    pyiceberg_updates = [
        {"action": "assign-uuid", "uuid": str(uuid.uuid4())},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": SCHEMA},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": f"s3://w-{cat.warehouse_id}/{ns[0]}/py"},
        {"action": "set-properties", "updates": {}},
    ]
    r = cat.commit(ns, "py", [{"type": "assert-create"}], pyiceberg_updates)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["table-uuid"] == pyiceberg_updates[0]["uuid"]
    assert cat.load_table(ns, "py")["metadata"]["current-schema-id"] == 0


def metadata_keys(cat, ns, name):
    return sorted(list_keys(cat.s3(), cat.bucket, f"{ns[0]}/{name}/metadata/"))


def test_multi_table_transaction_is_atomic(cat, ns):
    a = cat.create_table(ns, "a")
    b = cat.create_table(ns, "b")
    keys_before = metadata_keys(cat, ns, "a") + metadata_keys(cat, ns, "b")

    def change(name, uuid_, props):
        return {"identifier": {"namespace": ns, "name": name},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuid_}],
                "updates": [{"action": "set-properties", "updates": props}]}

    wrong = str(uuid.uuid4())
    r = cat.post("/transactions/commit", json={"table-changes": [
        change("a", a["metadata"]["table-uuid"], {"tx": "1"}),
        change("b", wrong, {"tx": "1"})]})
    err = assert_iceberg_error(r, 409, "CommitFailedException")
    assert err["message"] == \
        f"Requirement failed: UUID does not match: expected {b['metadata']['table-uuid']} != {wrong}"
    # Neither table moved, and the metadata file prepared for `a` was removed again.
    assert cat.load_table(ns, "a")["metadata-location"] == a["metadata-location"]
    assert cat.load_table(ns, "b")["metadata-location"] == b["metadata-location"]
    assert "tx" not in cat.load_table(ns, "a")["metadata"]["properties"]
    assert metadata_keys(cat, ns, "a") + metadata_keys(cat, ns, "b") == keys_before

    # A stale requirement on the first table fails the whole transaction too.
    snap = cat.append_snapshot(ns, "b")
    b_now = cat.load_table(ns, "b")["metadata-location"]
    r = cat.post("/transactions/commit", json={"table-changes": [
        {"identifier": {"namespace": ns, "name": "b"},
         "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
         "updates": [{"action": "set-properties", "updates": {"tx": "2"}}]},
        change("a", a["metadata"]["table-uuid"], {"tx": "2"})]})
    assert_iceberg_error(r, 409, "CommitFailedException",
                         "Requirement failed: branch main was created concurrently")
    assert cat.load_table(ns, "a")["metadata-location"] == a["metadata-location"]
    assert cat.load_table(ns, "b")["metadata-location"] == b_now

    r = cat.post("/transactions/commit", json={"table-changes": [
        change("a", a["metadata"]["table-uuid"], {"tx": "3"}),
        change("b", b["metadata"]["table-uuid"], {"tx": "3"})]})
    assert r.status_code == 204, r.text
    for name in ("a", "b"):
        t = cat.load_table(ns, name)
        assert t["metadata"]["properties"] == {**ZSTD, "tx": "3"}
        assert "/metadata/0000" in t["metadata-location"]
    assert cat.load_table(ns, "a")["metadata-location"].split("/")[-1].startswith("00001-")
    assert cat.load_table(ns, "b")["metadata-location"].split("/")[-1].startswith("00002-")
    assert cat.load_table(ns, "b")["metadata"]["current-snapshot-id"] == snap


def test_transaction_request_errors(cat, ns):
    cat.create_table(ns, "t")
    cases = [
        ({}, 400, "BadRequestException"),
        ({"table-changes": {}}, 400, "BadRequestException"),
        ({"table-changes": []}, 400, "BadRequestException"),
        ({"table-changes": [{"requirements": [], "updates": []}]}, 400, "BadRequestException"),
        ({"table-changes": [{"identifier": {"namespace": ns, "name": "t"},
                             "requirements": [], "updates": [{"action": "explode"}]}]},
         400, "BadRequestException"),
        ({"table-changes": [{"identifier": {"namespace": ns, "name": "nope"},
                             "requirements": [], "updates": []}]}, 404, "NoSuchTableException"),
    ]
    for body, status, type_ in cases:
        assert_iceberg_error(cat.post("/transactions/commit", json=body), status, type_)


def rename(cat, src_ns, src, dst_ns, dst):
    return cat.post("/tables/rename", json={"source": {"namespace": src_ns, "name": src},
                                            "destination": {"namespace": dst_ns, "name": dst}})


def test_rename_table(cat, ns):
    created = cat.create_table(ns, "old")
    cat.create_table(ns, "taken")
    other_ns = [uid("ns")]
    cat.create_namespace(other_ns)

    r = rename(cat, ns, "old", other_ns, "new")
    assert r.status_code == 204, r.text
    assert_iceberg_error(cat.get(cat.table_path(ns, "old")), 404, "NoSuchTableException")
    moved = cat.load_table(other_ns, "new")
    assert moved["metadata"]["table-uuid"] == created["metadata"]["table-uuid"]
    assert moved["metadata-location"] == created["metadata-location"]
    # Credentials follow the new name.
    assert moved["config"]["client.refresh-credentials-endpoint"].endswith(
        Catalog.table_path(other_ns, "new") + "/credentials")
    assert [i["name"] for i in cat.get(f"/namespaces/{ns_path(other_ns)}/tables")
            .json()["identifiers"]] == ["new"]
    # And it still commits under the new name.
    assert cat.set_properties(other_ns, "new", {"renamed": "yes"})["metadata"]["properties"] == \
        {**ZSTD, "renamed": "yes"}

    assert_iceberg_error(rename(cat, ns, "old", ns, "x"), 404, "NoSuchTableException")
    assert_iceberg_error(rename(cat, other_ns, "new", ns, "taken"), 409, "AlreadyExistsException")
    assert_iceberg_error(rename(cat, other_ns, "new", [uid("missing")], "x"), 404,
                         "NoSuchNamespaceException")
    assert_iceberg_error(cat.post("/tables/rename", json={"source": {"namespace": ns}}), 400,
                         "BadRequestException")
    assert cat.load_table(other_ns, "new")["metadata"]["table-uuid"] == \
        created["metadata"]["table-uuid"]


def test_register_table(cat, ns):
    cat.create_table(ns, "src")
    src = cat.set_properties(ns, "src", {"p": "1"})
    path = f"/namespaces/{ns_path(ns)}/register"

    r = cat.post(path, json={"name": "adopted", "metadata-location": src["metadata-location"]})
    assert r.status_code == 200, r.text
    assert r.json()["metadata-location"] == src["metadata-location"]
    assert r.json()["metadata"]["table-uuid"] == src["metadata"]["table-uuid"]
    assert r.json()["metadata"]["properties"] == {**ZSTD, "p": "1"}
    assert len(r.json()["storage-credentials"]) == 1
    loaded = cat.load_table(ns, "adopted")
    assert loaded["metadata-location"] == src["metadata-location"]
    assert cat.head(cat.table_path(ns, "adopted")).status_code == 204

    r = cat.post(path, json={"name": "adopted", "metadata-location": src["metadata-location"]})
    assert_iceberg_error(r, 409, "AlreadyExistsException")
    missing_file = src["metadata-location"].rsplit("/", 1)[0] + "/00099-nope.metadata.json"
    assert_iceberg_error(cat.post(path, json={"name": "r2", "metadata-location": missing_file}),
                         400, "BadRequestException")
    assert_iceberg_error(cat.post(path, json={"name": "r3",
                                              "metadata-location": "s3://w-elsewhere/x.json"}),
                         400, "BadRequestException")
    assert_iceberg_error(cat.post(path, json={"name": "r4"}), 400, "BadRequestException")
    r = cat.post(f"/namespaces/{uid('missing')}/register",
                 json={"name": "r5", "metadata-location": src["metadata-location"]})
    assert_iceberg_error(r, 404, "NoSuchNamespaceException")


def test_drop_table_without_purge_keeps_its_files_for_now(cat, ns):
    # The catalog purges a plain drop of a managed table too, but only after the
    # dropper's sessions have run out (two lifetimes: 30 minutes here); see
    # test_a_plain_drop_serves_the_droppers_refresh_then_purges.
    cat.create_table(ns, "t")
    r = cat.delete(cat.table_path(ns, "t"), params={"purgeRequested": "False"})
    assert r.status_code == 204, r.text
    assert_iceberg_error(cat.get(cat.table_path(ns, "t")), 404, "NoSuchTableException")
    assert cat.head(cat.table_path(ns, "t")).status_code == 404
    assert_iceberg_error(cat.delete(cat.table_path(ns, "t")), 404, "NoSuchTableException")
    assert len(list_keys(cat.s3(), cat.bucket, f"{ns[0]}/t/metadata/")) == 1
    # The name is free again.
    cat.create_table(ns, "t")


@pytest.fixture(scope="module")
def brief_server():
    """A server whose vended storage sessions live two seconds."""
    s = Server(args=["--session-seconds", "2"])
    yield s
    s.cleanup()


def test_a_plain_drop_serves_the_droppers_refresh_then_purges(brief_server):
    owner = brief_server.signup()
    cat = Catalog.for_account(brief_server, owner)
    reader = Catalog(brief_server, brief_server.connection(
        create_agent(brief_server, owner, uid("reader"), "read")["api_key"])["catalog_credential"],
        owner["warehouse_id"])
    ns = [uid("ns")]
    cat.create_namespace(ns)
    location = cat.create_table(ns, "t")["metadata"]["location"]
    victim = cat.create_table(ns, "victim")
    cat.create_table(ns, "twin", location=victim["metadata"]["location"])
    s3 = cat.s3()
    data = f"{ns[0]}/t/data/part-0.parquet"
    s3.put_object(Bucket=cat.bucket, Key=data, Body=b"PAR1")
    started = time.monotonic()
    assert cat.delete(cat.table_path(ns, "t")).status_code == 204
    assert cat.delete(cat.table_path(ns, "twin")).status_code == 204  # shares victim's files

    # An engine purging the table itself (Spark's DROP TABLE ... PURGE) refreshes its
    # session after the drop: the dropper gets one for the dropped location, and may delete.
    r = cat.get(cat.table_path(ns, "t") + "/credentials")
    assert r.status_code == 200, r.text
    [cred] = r.json()["storage-credentials"]
    assert cred["prefix"] == location + "/"
    # It ends with the window (one lifetime after the drop), before the catalog's purge.
    assert int(cred["config"]["s3.session-token-expires-at-ms"]) <= time.time() * 1000 + 2000
    s3_from_config(brief_server, cred["config"]).delete_object(Bucket=cat.bucket, Key=data)
    assert data not in list_keys(s3, cat.bucket, f"{ns[0]}/t/")
    # Only the dropper, only the credentials endpoint.
    assert_iceberg_error(reader.get(cat.table_path(ns, "t") + "/credentials"), 404,
                         "NoSuchTableException")
    assert_iceberg_error(cat.get(cat.table_path(ns, "t")), 404, "NoSuchTableException")
    assert_iceberg_error(cat.get(cat.table_path(ns, "never") + "/credentials"), 404,
                         "NoSuchTableException")

    # One lifetime later the refresh is over; the files wait for the catalog's purge,
    # which waits a little longer (a request signed just before the expiry may be arriving).
    time.sleep(max(0.0, started + 2.6 - time.monotonic()))
    assert_iceberg_error(cat.get(cat.table_path(ns, "t") + "/credentials"), 404,
                         "NoSuchTableException")
    assert list_keys(s3, cat.bucket, f"{ns[0]}/t/metadata/") != []
    wait_for(lambda: list_keys(s3, cat.bucket, f"{ns[0]}/t/") == [],
             "the catalog's purge of a plain drop", timeout=30, interval=0.1)
    # A table sharing another's location is never the catalog's to purge.
    time.sleep(1.0)
    assert list_keys(s3, cat.bucket, f"{ns[0]}/victim/metadata/") != []
    assert cat.load_table(ns, "victim")["metadata-location"] == victim["metadata-location"]


@pytest.mark.parametrize("spelling", ["True", "true"])
def test_drop_table_with_purge_removes_its_objects(cat, ns, spelling):
    cat.create_table(ns, "t")
    cat.set_properties(ns, "t", {"a": "1"})
    cat.create_table(ns, "t2")  # its prefix starts with "t" too: must survive the purge
    s3 = cat.s3()
    s3.put_object(Bucket=cat.bucket, Key=f"{ns[0]}/t/data/part-0.parquet", Body=b"PAR1")
    s3.put_object(Bucket=cat.bucket, Key=f"{ns[0]}/t2/data/part-0.parquet", Body=b"PAR1")
    assert len(list_keys(s3, cat.bucket, f"{ns[0]}/t/")) == 3
    survivors = sorted(list_keys(s3, cat.bucket, f"{ns[0]}/t2/"))
    assert len(survivors) == 2

    r = cat.delete(cat.table_path(ns, "t"), params={"purgeRequested": spelling})
    assert r.status_code == 204, r.text
    assert_iceberg_error(cat.get(cat.table_path(ns, "t")), 404, "NoSuchTableException")
    wait_for(lambda: list_keys(s3, cat.bucket, f"{ns[0]}/t/") == [],
             "the purge to empty the table prefix", timeout=30, interval=0.1)
    assert sorted(list_keys(s3, cat.bucket, f"{ns[0]}/t2/")) == survivors
    assert cat.load_table(ns, "t2")["metadata"]["location"].endswith(f"{ns[0]}/t2")


def test_a_table_recreated_before_the_purge_keeps_its_files(cat, ns):
    cat.create_table(ns, "t")
    s3 = cat.s3()
    old_data = f"{ns[0]}/t/data/old.parquet"
    s3.put_object(Bucket=cat.bucket, Key=old_data, Body=b"PAR1")
    assert cat.delete(cat.table_path(ns, "t"), params={"purgeRequested": "true"}).status_code == 204
    # Recreated at once, while the purge of the old prefix is still queued.
    new = cat.create_table(ns, "t")
    new_key = key_of(new["metadata-location"], cat.warehouse_id)
    wait_for(lambda: old_data not in list_keys(s3, cat.bucket, f"{ns[0]}/"),
             "the purge of the dropped table", timeout=30, interval=0.1)
    # The purge took the old table's files and none of the new one's.
    assert json.loads(s3.get_object(Bucket=cat.bucket, Key=new_key)["Body"].read())[
        "table-uuid"] == new["metadata"]["table-uuid"]
    assert cat.load_table(ns, "t")["metadata-location"] == new["metadata-location"]
    assert new["storage-credentials"][0]["prefix"] == new["metadata"]["location"] + "/"


def test_a_new_table_never_shares_a_renamed_tables_directory(cat, ns):
    old = cat.create_table(ns, "a")
    assert rename(cat, ns, "a", ns, "b").status_code == 204
    new = cat.create_table(ns, "a")
    staged = cat.post(f"/namespaces/{ns_path(ns)}/tables",
                      json={"name": "c", "schema": SCHEMA, "stage-create": True}).json()
    b_location = cat.load_table(ns, "b")["metadata"]["location"]
    assert b_location == old["metadata"]["location"] == f"s3://w-{cat.warehouse_id}/{ns[0]}/a"
    assert new["metadata"]["location"] != b_location
    assert not new["metadata"]["location"].startswith(b_location + "/")
    assert staged["metadata"]["location"] == f"s3://w-{cat.warehouse_id}/{ns[0]}/c"
    # Purging the renamed table leaves the new one whole.
    s3 = cat.s3()
    assert cat.delete(cat.table_path(ns, "b"), params={"purgeRequested": "true"}).status_code == 204
    wait_for(lambda: list_keys(s3, cat.bucket, key_of(b_location, cat.warehouse_id) + "/") == [],
             "the purge of the renamed table", timeout=30, interval=0.1)
    new_key = key_of(new["metadata-location"], cat.warehouse_id)
    assert s3.head_object(Bucket=cat.bucket, Key=new_key)["ContentLength"] > 0
    assert cat.load_table(ns, "a")["metadata"]["table-uuid"] == new["metadata"]["table-uuid"]


def test_purge_is_refused_when_the_location_is_shared(cat, ns):
    victim = cat.create_table(ns, "victim")
    s3 = cat.s3()
    victim_key = key_of(victim["metadata-location"], cat.warehouse_id)
    base = f"s3://w-{cat.warehouse_id}/{ns[0]}"
    cat.create_table(ns, "wide", location=base)                 # around the victim
    cat.create_table(ns, "twin", location=base + "/victim")      # the victim's own directory
    cat.create_table(ns, "inner", location=base + "/victim/data")  # inside the victim
    r = cat.post(f"/namespaces/{ns_path(ns)}/register",
                 json={"name": "copy", "metadata-location": victim["metadata-location"]})
    assert r.status_code == 200, r.text
    for name in ("wide", "twin", "inner", "copy", "victim"):
        r = cat.delete(cat.table_path(ns, name), params={"purgeRequested": "true"})
        assert_iceberg_error(r, 400, "BadRequestException", "purge")
        assert cat.head(cat.table_path(ns, name)).status_code == 204  # not dropped either
    # Without purge the drops go through, and once it owns its prefix alone the victim
    # can be purged.
    for name in ("wide", "twin", "inner", "copy"):
        assert cat.delete(cat.table_path(ns, name)).status_code == 204
    assert s3.head_object(Bucket=cat.bucket, Key=victim_key)["ContentLength"] > 0
    r = cat.delete(cat.table_path(ns, "victim"), params={"purgeRequested": "true"})
    assert r.status_code == 204, r.text
    wait_for(lambda: list_keys(s3, cat.bucket, f"{ns[0]}/victim/") == [],
             "the purge of the victim", timeout=30, interval=0.1)


def test_table_credentials_endpoint(cat, ns):
    created = cat.create_table(ns, "t")
    r = cat.get(cat.table_path(ns, "t") + "/credentials")
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["storage-credentials"]
    creds = body["storage-credentials"]
    # Java's VendedCredentialsProvider needs exactly one s3 credential with all four keys.
    assert len(creds) == 1
    assert creds[0]["prefix"] == f"s3://w-{cat.warehouse_id}/{ns[0]}/t/"
    assert CREDENTIAL_KEYS <= set(creds[0]["config"])
    assert_vended_config(cat, creds[0]["config"], ns, "t")
    # The refreshed session reads the table and nothing beside it.
    s3 = s3_from_config(cat.server, creds[0]["config"])
    key = key_of(created["metadata-location"], cat.warehouse_id)
    assert json.loads(s3.get_object(Bucket=cat.bucket, Key=key)["Body"].read())["table-uuid"] == \
        created["metadata"]["table-uuid"]
    cat.create_table(ns, "neighbour")
    neighbour = key_of(cat.load_table(ns, "neighbour")["metadata-location"], cat.warehouse_id)
    assert_access_denied(lambda: s3.get_object(Bucket=cat.bucket, Key=neighbour))

    assert_iceberg_error(cat.get(cat.table_path(ns, "nope") + "/credentials"), 404,
                         "NoSuchTableException")


def test_metrics_endpoint(cat, ns):
    cat.create_table(ns, "t")
    report = {"report-type": "scan-report", "table-name": f"{ns[0]}.t", "snapshot-id": 1,
              "filter": True, "schema-id": 0, "projected-field-ids": [1],
              "projected-field-names": ["id"], "metrics": {}}
    r = cat.post(cat.table_path(ns, "t") + "/metrics", json=report)
    assert r.status_code == 204 and r.content == b""
    r = cat.post(cat.table_path(ns, "t") + "/metrics", data="{not json",
                 headers={"Content-Type": "application/json"})
    assert_iceberg_error(r, 400, "BadRequestException")


# ---------------------------------------------------------------------------- error paths

@pytest.fixture
def table(cat, ns):
    """A table with one snapshot on main: (ns, name, metadata)."""
    cat.create_table(ns, "t")
    cat.append_snapshot(ns, "t")
    return ns, "t", cat.load_table(ns, "t")


@pytest.mark.parametrize("route", ["namespaces", "create", "commit", "transaction", "rename",
                                   "register", "properties"])
def test_malformed_json_is_bad_request(cat, table, route):
    ns, name, _ = table
    path = {
        "namespaces": "/namespaces",
        "create": f"/namespaces/{ns_path(ns)}/tables",
        "commit": cat.table_path(ns, name),
        "transaction": "/transactions/commit",
        "rename": "/tables/rename",
        "register": f"/namespaces/{ns_path(ns)}/register",
        "properties": f"/namespaces/{ns_path(ns)}/properties",
    }[route]
    for body in ('{"namespace": [', "", "[1, 2", "nul"):
        r = cat.post(path, data=body, headers={"Content-Type": "application/json"})
        assert_iceberg_error(r, 400, "BadRequestException")


def test_unknown_update_action_and_requirement_type_are_400(cat, table):
    ns, name, loaded = table
    r = cat.commit(ns, name, [], [{"action": "set-colour", "colour": "blue"}])
    assert_iceberg_error(r, 400, "BadRequestException", "set-colour")
    r = cat.commit(ns, name, [{"type": "assert-mood", "mood": "good"}], [])
    assert_iceberg_error(r, 400, "BadRequestException", "assert-mood")
    r = cat.commit(ns, name, [], [{"colour": "blue"}])  # no action at all
    assert_iceberg_error(r, 400, "BadRequestException")
    assert cat.load_table(ns, name)["metadata-location"] == loaded["metadata-location"]


@pytest.mark.parametrize("body", [
    {"requirements": [{"type": 5}], "updates": []},
    {"requirements": [{"type": None}], "updates": []},
    {"requirements": ["assert-create"], "updates": []},
    {"requirements": {"type": "assert-create"}, "updates": []},
    {"requirements": [], "updates": "set-properties"},
    {"requirements": [], "updates": [{"action": 7}]},
    {"requirements": [{"type": "assert-table-uuid", "uuid": 7}], "updates": []},
    {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": "x"}],
     "updates": []},
    {"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": 1}}]},
])
def test_wrongly_typed_commit_fields_are_400_not_500(cat, table, body):
    ns, name, loaded = table
    r = cat.post(cat.table_path(ns, name), json=body)
    assert_iceberg_error(r, 400, "BadRequestException")
    assert cat.load_table(ns, name)["metadata-location"] == loaded["metadata-location"]


@pytest.mark.parametrize("field,value", [("stage-create", "yes"), ("stage-create", 1),
                                         ("name", 5), ("schema", "struct"),
                                         ("location", 5), ("properties", "x")])
def test_wrongly_typed_create_fields_are_400_not_500(cat, ns, field, value):
    body = {"name": "typed", "schema": SCHEMA, field: value}
    r = cat.post(f"/namespaces/{ns_path(ns)}/tables", json=body)
    assert_iceberg_error(r, 400, "BadRequestException")
    assert cat.head(cat.table_path(ns, "typed")).status_code == 404


def test_wrongly_typed_register_fields_are_400_not_500(cat, table):
    ns, name, loaded = table
    for body in ({"name": "r", "metadata-location": loaded["metadata-location"], "overwrite": "yes"},
                 {"name": 1, "metadata-location": loaded["metadata-location"]},
                 {"name": "r", "metadata-location": ["x"]}):
        r = cat.post(f"/namespaces/{ns_path(ns)}/register", json=body)
        assert_iceberg_error(r, 400, "BadRequestException")
    # A metadata file whose fields have the wrong types is the client's fault too.
    bad = dict(loaded["metadata"], location=5)
    key = f"{ns[0]}/{name}/metadata/00099-{uuid.uuid4()}.metadata.json"
    cat.s3().put_object(Bucket=cat.bucket, Key=key, Body=json.dumps(bad).encode())
    r = cat.post(f"/namespaces/{ns_path(ns)}/register",
                 json={"name": "r", "metadata-location": f"s3://{cat.bucket}/{key}"})
    assert_iceberg_error(r, 400, "BadRequestException")
    assert cat.head(cat.table_path(ns, "r")).status_code == 404


def stale_requirements(m):
    snap = m["current-snapshot-id"]
    uid_ = m["table-uuid"]
    wrong_uuid = str(uuid.uuid4())
    return [
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snap + 1},
         f"Requirement failed: branch main has changed: expected id {snap + 1} != {snap}"),
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
         "Requirement failed: branch main was created concurrently"),
        ({"type": "assert-ref-snapshot-id", "ref": "dev", "snapshot-id": snap},
         f"Requirement failed: branch or tag dev is missing, expected {snap}"),
        ({"type": "assert-table-uuid", "uuid": wrong_uuid},
         f"Requirement failed: UUID does not match: expected {uid_} != {wrong_uuid}"),
        ({"type": "assert-current-schema-id", "current-schema-id": 7},
         "Requirement failed: current schema changed: expected id 7 != 0"),
        ({"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1},
         "Requirement failed: last assigned field id changed: expected id 1 != 2"),
        ({"type": "assert-default-spec-id", "default-spec-id": 3},
         "Requirement failed: default partition spec changed: expected id 3 != 0"),
        ({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1000},
         "Requirement failed: last assigned partition id changed: expected id 1000 != 999"),
        ({"type": "assert-default-sort-order-id", "default-sort-order-id": 2},
         "Requirement failed: default sort order changed: expected id 2 != 0"),
        ({"type": "assert-create"}, "Requirement failed: table already exists"),
    ]


def test_stale_requirements_are_409_with_reference_messages(cat, table):
    ns, name, loaded = table
    m = loaded["metadata"]
    for requirement, message in stale_requirements(m):
        r = cat.commit(ns, name, [requirement],
                       [{"action": "set-properties", "updates": {"x": "1"}}])
        err = assert_iceberg_error(r, 409, "CommitFailedException")
        assert err["message"] == message, (requirement, err)
        # The same through the multi-table endpoint.
        r = cat.post("/transactions/commit", json={"table-changes": [
            {"identifier": {"namespace": ns, "name": name}, "requirements": [requirement],
             "updates": [{"action": "set-properties", "updates": {"x": "1"}}]}]})
        assert_iceberg_error(r, 409, "CommitFailedException")
        assert r.json()["error"]["message"] == message
    after = cat.load_table(ns, name)
    assert after["metadata-location"] == loaded["metadata-location"]
    assert "x" not in after["metadata"]["properties"]
    # The current values pass.
    fresh = [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": m["current-snapshot-id"]},
             {"type": "assert-table-uuid", "uuid": m["table-uuid"]},
             {"type": "assert-current-schema-id", "current-schema-id": 0},
             {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 2},
             {"type": "assert-default-spec-id", "default-spec-id": 0},
             {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
             {"type": "assert-default-sort-order-id", "default-sort-order-id": 0}]
    r = cat.commit(ns, name, fresh, [{"action": "set-properties", "updates": {"x": "1"}}])
    assert r.status_code == 200, r.text


def test_stale_sequence_number_is_409(cat, table):
    ns, name, loaded = table
    m = loaded["metadata"]
    r = cat.commit(ns, name, [], [
        {"action": "add-snapshot",
         "snapshot": snapshot(m["location"], 99, m["current-snapshot-id"],
                              m["last-sequence-number"])}])
    assert_iceberg_error(r, 409, "CommitFailedException", "sequence number")


def test_missing_namespace_and_table_errors(cat, ns):
    missing = [uid("missing")]
    # Spark's metadata-table probe needs NoSuchTable even when the namespace is missing.
    assert_iceberg_error(cat.get(cat.table_path(missing, "t")), 404, "NoSuchTableException")
    assert_iceberg_error(cat.get(cat.table_path(missing, "t") + "/credentials"), 404,
                         "NoSuchTableException")
    r = cat.post(f"/namespaces/{ns_path(missing)}/tables", json={"name": "t", "schema": SCHEMA})
    assert_iceberg_error(r, 404, "NoSuchNamespaceException")
    r = cat.post(f"/namespaces/{ns_path(missing)}/tables",
                 json={"name": "t", "schema": SCHEMA, "stage-create": True})
    assert_iceberg_error(r, 404, "NoSuchNamespaceException")
    assert_iceberg_error(cat.commit(ns, "nope", [], []), 404, "NoSuchTableException")
    assert_iceberg_error(cat.delete(cat.table_path(missing, "t")), 404, "NoSuchTableException")


def test_unknown_routes_and_methods_answer_json(cat):
    r = requests.get(cat.server.catalog + "/v1/nothing-here",
                     headers={"Authorization": "Bearer " + cat.token})
    assert_iceberg_error(r, 404, "NotFoundException")
    r = cat.request("PUT", "/namespaces", json={})
    assert_iceberg_error(r, 405, "MethodNotAllowedException")
    r = cat.request("PATCH", "/namespaces/x/tables/y", json={})
    assert_iceberg_error(r, 405, "MethodNotAllowedException")


# ---------------------------------------------------------------------------- read-only identity

def test_read_only_identity_can_read(cat, reader, ns):
    created = cat.create_table(ns, "t")
    cat.append_snapshot(ns, "t")
    r = requests.get(reader.server.catalog + "/v1/config",
                     params={"warehouse": f"s3://w-{reader.warehouse_id}/"},
                     headers={"Authorization": "Bearer " + reader.token})
    assert r.status_code == 200 and r.json()["overrides"]["prefix"] == f"w-{reader.warehouse_id}"
    assert ns in reader.get("/namespaces").json()["namespaces"]
    assert reader.get(f"/namespaces/{ns_path(ns)}").status_code == 200
    assert reader.head(f"/namespaces/{ns_path(ns)}").status_code == 204
    assert reader.get(f"/namespaces/{ns_path(ns)}/tables").json()["identifiers"] == \
        [{"namespace": ns, "name": "t"}]
    loaded = reader.load_table(ns, "t")
    assert loaded["metadata"]["table-uuid"] == created["metadata"]["table-uuid"]
    assert reader.head(reader.table_path(ns, "t")).status_code == 204
    assert reader.get(reader.table_path(ns, "t") + "/credentials").status_code == 200
    r = reader.post(reader.table_path(ns, "t") + "/metrics", json={"report-type": "scan-report"})
    assert r.status_code == 204


def test_read_only_identity_cannot_change_anything(cat, reader, ns):
    created = cat.create_table(ns, "t")
    m = created["metadata"]
    uuid_req = [{"type": "assert-table-uuid", "uuid": m["table-uuid"]}]
    props = [{"action": "set-properties", "updates": {"ro": "1"}}]
    attempts = [
        ("POST", "/namespaces", {"namespace": [uid("ro")]}),
        ("POST", f"/namespaces/{ns_path(ns)}/properties", {"updates": {"ro": "1"}}),
        ("DELETE", f"/namespaces/{ns_path(ns)}", None),
        ("POST", f"/namespaces/{ns_path(ns)}/tables", {"name": "ro", "schema": SCHEMA}),
        ("POST", f"/namespaces/{ns_path(ns)}/tables",
         {"name": "ro", "schema": SCHEMA, "stage-create": True}),
        ("POST", reader.table_path(ns, "t"), {"requirements": uuid_req, "updates": props}),
        ("POST", reader.table_path(ns, "ro2"),
         {"requirements": [{"type": "assert-create"}],
          "updates": duckdb_create_updates({"table-uuid": str(uuid.uuid4()),
                                            "location": m["location"] + "x"}, False)[0]}),
        ("POST", "/transactions/commit", {"table-changes": [
            {"identifier": {"namespace": ns, "name": "t"}, "requirements": uuid_req,
             "updates": props}]}),
        ("POST", "/tables/rename", {"source": {"namespace": ns, "name": "t"},
                                    "destination": {"namespace": ns, "name": "t9"}}),
        ("POST", f"/namespaces/{ns_path(ns)}/register",
         {"name": "ro3", "metadata-location": created["metadata-location"]}),
        ("DELETE", reader.table_path(ns, "t"), None),
        ("DELETE", reader.table_path(ns, "t") + "?purgeRequested=true", None),
    ]
    for method, path, body in attempts:
        r = reader.request(method, path, json=body)
        assert_iceberg_error(r, 403, "ForbiddenException", "read-only")
    after = cat.load_table(ns, "t")
    assert after["metadata-location"] == created["metadata-location"]
    assert cat.get(f"/namespaces/{ns_path(ns)}/tables").json()["identifiers"] == \
        [{"namespace": ns, "name": "t"}]
    assert "ro" not in cat.get(f"/namespaces/{ns_path(ns)}").json()["properties"]


def test_read_only_sessions_cannot_write_storage(cat, reader, ns):
    created = cat.create_table(ns, "t")
    key = key_of(created["metadata-location"], cat.warehouse_id)
    loaded = reader.load_table(ns, "t")
    for config in (loaded["config"], loaded["storage-credentials"][0]["config"],
                   reader.get(reader.table_path(ns, "t") + "/credentials")
                   .json()["storage-credentials"][0]["config"]):
        s3 = s3_from_config(reader.server, config)
        assert json.loads(s3.get_object(Bucket=reader.bucket, Key=key)["Body"].read())[
            "table-uuid"] == created["metadata"]["table-uuid"]
        assert_access_denied(lambda: s3.put_object(
            Bucket=reader.bucket, Key=f"{ns[0]}/t/data/evil.parquet", Body=b"x"))
        assert_access_denied(lambda: s3.delete_object(Bucket=reader.bucket, Key=key))
    # The static read-only identity is read-only in S3 as well.
    static = reader.s3()
    assert static.get_object(Bucket=reader.bucket, Key=key)["ContentLength"] > 0
    assert_access_denied(lambda: static.put_object(
        Bucket=reader.bucket, Key=f"{ns[0]}/t/data/evil.parquet", Body=b"x"))
    assert list_keys(cat.s3(), cat.bucket, f"{ns[0]}/t/") == [key]


# ---------------------------------------------------------------------------- concurrency

def pyiceberg_catalog(server, api_key):
    conn = server.connection(api_key, engine="pyiceberg")
    scope = {}
    exec(conn["python"], scope)  # the recipe as a user would paste it
    return scope["catalog"]


def test_concurrent_pyiceberg_appends_lose_nothing(server, owner, caplog):
    from pyiceberg.exceptions import CommitFailedException

    caplog.set_level("WARNING", logger="pyiceberg")
    threads, appends, rows_per_append = 8, 5, 3
    ns = uid("conc")
    catalog = pyiceberg_catalog(server, owner["api_key"])
    catalog.create_namespace(ns)
    arrow_schema = pa.schema([pa.field("writer", pa.int32()), pa.field("seq", pa.int32()),
                              pa.field("row", pa.int32())])
    catalog.create_table((ns, "events"), schema=arrow_schema)
    start = threading.Barrier(threads)
    retries = []

    def writer(w):
        local = pyiceberg_catalog(server, owner["api_key"])
        tbl = local.load_table((ns, "events"))
        start.wait()
        for seq in range(appends):
            batch = pa.table({"writer": [w] * rows_per_append, "seq": [seq] * rows_per_append,
                              "row": list(range(rows_per_append))}, schema=arrow_schema)
            deadline = time.monotonic() + 120
            while True:
                try:
                    tbl.append(batch)
                    break
                except CommitFailedException:
                    retries.append(w)
                    assert time.monotonic() < deadline, "append kept losing for 120 s"
                    tbl = local.load_table((ns, "events"))
        return w

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        done = sorted(f.result() for f in [pool.submit(writer, w) for w in range(threads)])
    assert done == list(range(threads))

    table = catalog.load_table((ns, "events"))
    snapshots = table.metadata.snapshots
    assert len(snapshots) == threads * appends
    assert len({s.snapshot_id for s in snapshots}) == threads * appends
    # One linear history: every snapshot's parent is the previous one.
    ids = [s.snapshot_id for s in snapshots]
    assert [s.parent_snapshot_id for s in snapshots] == [None] + ids[:-1]
    assert [s.sequence_number for s in snapshots] == list(range(1, threads * appends + 1))
    assert table.metadata.current_snapshot_id == ids[-1]
    # The catalog wrote one metadata version per successful commit and no more.
    assert table.metadata_location.split("/")[-1].startswith(f"{threads * appends:05d}-")
    rows = table.scan().to_arrow()
    assert rows.num_rows == threads * appends * rows_per_append
    got = sorted(zip(rows["writer"].to_pylist(), rows["seq"].to_pylist(), rows["row"].to_pylist()))
    assert got == sorted((w, s, r) for w in range(threads) for s in range(appends)
                         for r in range(rows_per_append))
    # The writers really raced: PyIceberg retried internally, or we did.
    internal = sum("concurrent update" in rec.getMessage() for rec in caplog.records)
    assert len(retries) + internal > 0


def test_racing_raw_commits_never_answer_5xx(cat, ns):
    cat.create_table(ns, "race")
    stale_snapshot = cat.append_snapshot(ns, "race")
    cat.append_snapshot(ns, "race")
    m = cat.load_table(ns, "race")["metadata"]
    start_version = int(cat.load_table(ns, "race")["metadata-location"].split("/")[-1][:5])
    n = 24
    barrier = threading.Barrier(n)

    def attempt(i):
        session = requests.Session()
        session.headers["Authorization"] = "Bearer " + cat.token
        if i % 2 == 0:
            reqs = [{"type": "assert-table-uuid", "uuid": m["table-uuid"]}]
        else:  # PyIceberg-style requirement against a snapshot that is no longer current
            reqs = [{"type": "assert-table-uuid", "uuid": m["table-uuid"]},
                    {"type": "assert-ref-snapshot-id", "ref": "main",
                     "snapshot-id": stale_snapshot}]
        barrier.wait()
        r = session.post(cat.url(Catalog.table_path(ns, "race")),
                         json={"requirements": reqs,
                               "updates": [{"action": "set-properties",
                                            "updates": {f"k{i}": str(i)}}]})
        return i, r

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        results = [f.result() for f in [pool.submit(attempt, i) for i in range(n)]]

    won = []
    for i, r in results:
        assert r.status_code < 500, r.text
        if i % 2 == 1:
            err = assert_iceberg_error(r, 409, "CommitFailedException")
            assert err["message"].startswith("Requirement failed: branch main has changed")
        elif r.status_code == 200:
            won.append(i)
        else:  # only a lost race after the server's own retries
            assert_iceberg_error(r, 409, "CommitFailedException", "concurrently")
    assert won, "no fresh commit succeeded"
    final = cat.load_table(ns, "race")
    props = final["metadata"]["properties"]
    assert props == {**ZSTD, **{f"k{i}": str(i) for i in won}}
    version = int(final["metadata-location"].split("/")[-1][:5])
    assert version == start_version + len(won)
    assert len(final["metadata"]["metadata-log"]) == version

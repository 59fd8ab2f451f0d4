"""Iceberg views on the catalog listener, end to end against a running tablemere-server:
list, create, load, replace (commit with view requirements and updates), drop, HEAD,
rename and register-view over HTTP; the same through PyIceberg and Spark, with Spark
reading an Iceberg table through a view. View metadata files are checked in the table
bucket through the server's S3 endpoint with boto3."""

import json
import re
import time
import urllib.parse
import uuid

import boto3
import botocore.config
import pytest
import requests
from pyiceberg.catalog.rest import IdentifierKind
from pyiceberg.exceptions import NoSuchViewError, ViewAlreadyExistsError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from conftest import catalog_token
from helpers import uid
from engines import pyiceberg_from_recipe, spark_from_recipe

UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
VIEW_ENDPOINTS = {
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
}
TABLE_SCHEMA = {"type": "struct", "schema-id": 0,
                "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
VIEW_SCHEMA = {"type": "struct", "schema-id": 0,
               "fields": [{"id": 1, "name": "one", "required": False, "type": "int"}]}


# ---------------------------------------------------------------------------- helpers

def ns_path(levels):
    return urllib.parse.quote("\x1f".join(levels), safe="")


def assert_iceberg_error(r, status, error_type, message_contains=None):
    """Every catalog error is JSON {"error": {"message", "type", "code"}}; HEAD has no body."""
    assert r.status_code == status, f"{r.status_code} {r.text}"
    if r.request.method == "HEAD":
        assert r.content == b""
        return None
    body = r.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert {"message", "type", "code"} <= set(err), err
    assert err["code"] == status and err["type"] == error_type, err
    assert isinstance(err["message"], str) and err["message"], err
    if message_contains is not None:
        assert message_contains in err["message"], err
    return err


def create_agent(server, account, name, level):
    r = requests.post(f"{server.api}/v1/orgs/{account['organization']['org_id']}/agents",
                      headers={"Authorization": "Bearer " + account["api_key"]},
                      json={"name": name,
                            "grants": [{"warehouse_id": account["warehouse_id"], "level": level}]})
    assert r.status_code == 201, r.text
    return r.json()


def view_version(ns, sql, version_id=1, schema_id=0, dialect="spark"):
    return {"version-id": version_id, "schema-id": schema_id, "timestamp-ms": int(time.time() * 1000),
            "summary": {"engine-name": "tests", "engine-version": "1"}, "default-namespace": ns,
            "representations": [{"type": "sql", "sql": sql, "dialect": dialect}]}


class Rest:
    """The Iceberg REST API for one catalog identity of one warehouse."""

    def __init__(self, server, credential, warehouse_id):
        self.server = server
        self.warehouse_id = warehouse_id
        self.bucket = "w-" + warehouse_id
        self.credential = credential
        self.http = requests.Session()
        self.http.headers["Authorization"] = "Bearer " + catalog_token(
            server, credential["client_id"], credential["client_secret"])

    def req(self, method, path, **kw):
        return self.http.request(method, f"{self.server.catalog}/v1/w-{self.warehouse_id}{path}", **kw)

    @staticmethod
    def views(ns):
        return f"/namespaces/{ns_path(ns)}/views"

    @staticmethod
    def view(ns, name):
        return f"/namespaces/{ns_path(ns)}/views/{urllib.parse.quote(name, safe='')}"

    def create_namespace(self, levels):
        r = self.req("POST", "/namespaces", json={"namespace": levels})
        assert r.status_code == 200, r.text

    def create_table(self, ns, name):
        r = self.req("POST", f"/namespaces/{ns_path(ns)}/tables", json={"name": name, "schema": TABLE_SCHEMA})
        assert r.status_code == 200, r.text
        return r.json()

    def create_view_raw(self, ns, name, sql="SELECT 1 AS one", schema=VIEW_SCHEMA, **extra):
        return self.req("POST", self.views(ns), json={"name": name, "schema": schema,
                                                       "view-version": view_version(ns, sql), **extra})

    def create_view(self, ns, name, **kw):
        r = self.create_view_raw(ns, name, **kw)
        assert r.status_code == 200, r.text
        return r.json()

    def load_view(self, ns, name):
        r = self.req("GET", self.view(ns, name))
        assert r.status_code == 200, r.text
        return r.json()

    def replace(self, ns, name, requirements, updates):
        return self.req("POST", self.view(ns, name), json={
            "identifier": {"namespace": ns, "name": name},
            "requirements": requirements, "updates": updates})

    def rename(self, src_ns, src, dst_ns, dst):
        return self.req("POST", "/views/rename", json={"source": {"namespace": src_ns, "name": src},
                                                       "destination": {"namespace": dst_ns, "name": dst}})

    def s3(self):
        return boto3.client(
            "s3", endpoint_url=self.server.s3, aws_access_key_id=self.credential["client_id"],
            aws_secret_access_key=self.credential["client_secret"], region_name="us-east-1",
            config=botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def read_json(self, location):
        prefix = f"s3://{self.bucket}/"
        assert location.startswith(prefix), location
        return json.loads(self.s3().get_object(Bucket=self.bucket, Key=location[len(prefix):])["Body"].read())


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def owner(server):
    """This module's own account, so listings are only ours."""
    return server.signup()


@pytest.fixture(scope="module")
def cat(server, owner):
    return Rest(server, owner["connection"]["catalog_credential"], owner["warehouse_id"])


@pytest.fixture(scope="module")
def reader(server, owner):
    agent = create_agent(server, owner, uid("reader"), "read")
    conn = server.connection(agent["api_key"])
    assert conn["catalog_credential"]["client_id"] == f"t-{owner['warehouse_id']}-ro"
    return Rest(server, conn["catalog_credential"], owner["warehouse_id"])


@pytest.fixture
def ns(cat):
    levels = [uid("ns")]
    cat.create_namespace(levels)
    return levels


@pytest.fixture(scope="module")
def pyice(server, owner):
    return pyiceberg_from_recipe(server.connection(owner["api_key"], "pyiceberg"))


@pytest.fixture(scope="module")
def spark(server, owner):
    session = spark_from_recipe(server.connection(owner["api_key"], "spark"))
    yield session
    session.stop()


# ---------------------------------------------------------------------------- REST

def test_config_advertises_the_view_endpoints(server, cat):
    r = cat.http.get(server.catalog + "/v1/config")
    assert r.status_code == 200, r.text
    assert VIEW_ENDPOINTS <= set(r.json()["endpoints"])


def test_create_writes_view_metadata_to_the_table_bucket(owner, cat, ns):
    wid = owner["warehouse_id"]
    r = cat.create_view_raw(ns, "daily", sql="SELECT 1 AS one", properties={"owner": "tests"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"metadata-location", "metadata", "config"}
    location = f"s3://w-{wid}/{ns[0]}/daily"
    assert re.fullmatch(rf"{location}/metadata/00000-{UUID_RE}\.metadata\.json", body["metadata-location"])
    m = body["metadata"]
    assert re.fullmatch(UUID_RE, m["view-uuid"])
    assert m["format-version"] == 1
    assert m["location"] == location
    assert m["current-version-id"] == 1
    assert m["properties"] == {"owner": "tests"}
    assert [s["schema-id"] for s in m["schemas"]] == [0]
    assert [(f["id"], f["name"], f["type"]) for f in m["schemas"][0]["fields"]] == [(1, "one", "int")]
    assert len(m["versions"]) == 1
    v = m["versions"][0]
    assert (v["version-id"], v["schema-id"], v["default-namespace"]) == (1, 0, ns)
    assert v["representations"] == [{"type": "sql", "sql": "SELECT 1 AS one", "dialect": "spark"}]
    assert v["summary"] == {"engine-name": "tests", "engine-version": "1"}
    assert [e["version-id"] for e in m["version-log"]] == [1]
    assert body["config"]["s3.endpoint"] == cat.server.s3

    # The metadata file is in the table bucket, and is exactly what was returned.
    assert cat.read_json(body["metadata-location"]) == m
    assert cat.load_view(ns, "daily") == body


def test_load_and_head(cat, ns):
    cat.create_view(ns, "v")
    cat.create_table(ns, "t")
    r = cat.req("HEAD", cat.view(ns, "v"))
    assert r.status_code == 204 and r.content == b""
    assert_iceberg_error(cat.req("HEAD", cat.view(ns, "missing")), 404, None)
    assert_iceberg_error(cat.req("HEAD", cat.view(ns, "t")), 404, None)  # a table is not a view
    assert_iceberg_error(cat.req("GET", cat.view(ns, "missing")), 404, "NoSuchViewException",
                         f"View does not exist: {ns[0]}.missing")
    assert_iceberg_error(cat.req("GET", cat.view(ns, "t")), 404, "NoSuchViewException")
    assert_iceberg_error(cat.req("GET", f"/namespaces/{ns_path(ns)}/tables/v"), 404, "NoSuchTableException")
    assert_iceberg_error(cat.req("GET", cat.view(["nowhere" + uid()], "v")), 404, "NoSuchViewException")


def test_list_views_lists_only_views_and_pages(cat, ns):
    for name in ("v1", "v2", "v3"):
        cat.create_view(ns, name)
    cat.create_table(ns, "t")
    r = cat.req("GET", cat.views(ns))
    assert r.status_code == 200, r.text
    assert r.json() == {"identifiers": [{"namespace": ns, "name": n} for n in ("v1", "v2", "v3")],
                        "next-page-token": None}
    first = cat.req("GET", cat.views(ns), params={"pageSize": 2}).json()
    assert [i["name"] for i in first["identifiers"]] == ["v1", "v2"]
    assert isinstance(first["next-page-token"], str)
    second = cat.req("GET", cat.views(ns), params={"pageSize": 2, "pageToken": first["next-page-token"]}).json()
    assert second == {"identifiers": [{"namespace": ns, "name": "v3"}], "next-page-token": None}
    tables = cat.req("GET", f"/namespaces/{ns_path(ns)}/tables").json()["identifiers"]
    assert [t["name"] for t in tables] == ["t"]
    assert_iceberg_error(cat.req("GET", cat.views(["nowhere" + uid()])), 404, "NoSuchNamespaceException")


def test_replace_commits_requirements_and_updates(cat, ns):
    created = cat.create_view(ns, "evolving", properties={"owner": "tests", "stage": "1"})
    view_uuid = created["metadata"]["view-uuid"]
    schema = {"type": "struct", "schema-id": 1,
              "fields": [{"id": 1, "name": "id", "required": False, "type": "long"},
                         {"id": 2, "name": "item", "required": False, "type": "string"}]}
    r = cat.replace(ns, "evolving", [{"type": "assert-view-uuid", "uuid": view_uuid}], [
        {"action": "add-schema", "schema": schema},
        {"action": "add-view-version", "view-version": view_version(ns, "SELECT 2 AS id, 'x' AS item", 2, -1)},
        {"action": "set-current-view-version", "view-version-id": -1},
        {"action": "set-properties", "updates": {"stage": "2", "comment": "second"}},
        {"action": "remove-properties", "removals": ["owner"]},
    ])
    assert r.status_code == 200, r.text
    body = r.json()
    m = body["metadata"]
    assert m["view-uuid"] == view_uuid
    assert m["current-version-id"] == 2
    assert [v["version-id"] for v in m["versions"]] == [1, 2]
    assert [v["schema-id"] for v in m["versions"]] == [0, 1]
    assert m["versions"][1]["representations"][0]["sql"] == "SELECT 2 AS id, 'x' AS item"
    assert [s["schema-id"] for s in m["schemas"]] == [0, 1]
    assert [e["version-id"] for e in m["version-log"]] == [1, 2]
    assert m["properties"] == {"stage": "2", "comment": "second"}
    assert re.fullmatch(rf".*/evolving/metadata/00001-{UUID_RE}\.metadata\.json", body["metadata-location"])
    assert cat.read_json(body["metadata-location"]) == m
    assert cat.read_json(created["metadata-location"]) == created["metadata"]  # history stays
    assert cat.load_view(ns, "evolving") == body

    # Back to version 1: the version log records the switch.
    r = cat.replace(ns, "evolving", [], [{"action": "set-current-view-version", "view-version-id": 1}])
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["current-version-id"] == 1
    assert [e["version-id"] for e in r.json()["metadata"]["version-log"]] == [1, 2, 1]
    assert re.fullmatch(rf".*/metadata/00002-{UUID_RE}\.metadata\.json", r.json()["metadata-location"])

    # Re-adding version 2's content under another id reuses version 2 (the reference's rule).
    same = view_version(ns, "SELECT 2 AS id, 'x' AS item", 7, 1)
    r = cat.replace(ns, "evolving", [], [{"action": "add-view-version", "view-version": same},
                                         {"action": "set-current-view-version", "view-version-id": -1}])
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["current-version-id"] == 2
    assert [v["version-id"] for v in r.json()["metadata"]["versions"]] == [1, 2]
    assert [e["version-id"] for e in r.json()["metadata"]["version-log"]] == [1, 2, 1, 2]
    r = cat.replace(ns, "evolving", [], [{"action": "set-location", "location": "s3://elsewhere/v"}])
    assert_iceberg_error(r, 400, "BadRequestException", "outside this warehouse")

    # A failed requirement changes nothing.
    before = cat.load_view(ns, "evolving")
    r = cat.replace(ns, "evolving", [{"type": "assert-view-uuid", "uuid": str(uuid.uuid4())}],
                    [{"action": "set-properties", "updates": {"stage": "3"}}])
    assert_iceberg_error(r, 409, "CommitFailedException", "UUID")
    assert_iceberg_error(cat.replace(ns, "evolving", [], [{"action": "add-snapshot", "snapshot": {}}]),
                         400, "BadRequestException")
    assert_iceberg_error(cat.replace(ns, "evolving", [], [{"action": "set-current-view-version",
                                                           "view-version-id": 99}]),
                         400, "BadRequestException")
    assert cat.load_view(ns, "evolving") == before
    assert_iceberg_error(cat.replace(ns, "absent", [], []), 404, "NoSuchViewException")


def test_drop(cat, ns):
    cat.create_view(ns, "short_lived")
    cat.create_table(ns, "t")
    assert_iceberg_error(cat.req("DELETE", f"/namespaces/{ns_path(ns)}/tables/short_lived"),
                         404, "NoSuchTableException")
    assert_iceberg_error(cat.req("DELETE", cat.view(ns, "t")), 404, "NoSuchViewException")
    r = cat.req("DELETE", cat.view(ns, "short_lived"))
    assert r.status_code == 204 and r.content == b""
    assert_iceberg_error(cat.req("GET", cat.view(ns, "short_lived")), 404, "NoSuchViewException")
    assert_iceberg_error(cat.req("DELETE", cat.view(ns, "short_lived")), 404, "NoSuchViewException")
    assert cat.req("GET", cat.views(ns)).json()["identifiers"] == []
    assert cat.req("GET", f"/namespaces/{ns_path(ns)}/tables/t").status_code == 200
    # The name is free again; the old metadata files stay, so the new view gets a
    # location of its own beside them.
    again = cat.create_view(ns, "short_lived")["metadata"]
    assert re.fullmatch(rf"s3://{cat.bucket}/{ns[0]}/short_lived-[0-9a-f]{{8}}", again["location"])


def test_rename_across_namespaces(cat, ns):
    created = cat.create_view(ns, "before")
    dst = [uid("ns")]
    cat.create_namespace(dst)
    r = cat.rename(ns, "before", dst, "after")
    assert r.status_code == 204 and r.content == b""
    assert_iceberg_error(cat.req("GET", cat.view(ns, "before")), 404, "NoSuchViewException")
    moved = cat.load_view(dst, "after")
    assert moved["metadata"] == created["metadata"]
    assert moved["metadata-location"] == created["metadata-location"]
    assert cat.req("GET", cat.views(dst)).json()["identifiers"] == [{"namespace": dst, "name": "after"}]

    cat.create_table(dst, "occupied")
    assert_iceberg_error(cat.rename(dst, "after", dst, "occupied"), 409, "AlreadyExistsException",
                         f"Cannot rename {dst[0]}.after to {dst[0]}.occupied. Table already exists")
    assert_iceberg_error(cat.rename(ns, "before", dst, "x"), 404, "NoSuchViewException")
    assert_iceberg_error(cat.rename(dst, "occupied", dst, "x"), 404, "NoSuchViewException")
    assert_iceberg_error(cat.rename(dst, "after", ["nowhere" + uid()], "x"), 404, "NoSuchNamespaceException")
    assert cat.load_view(dst, "after")["metadata"]["view-uuid"] == created["metadata"]["view-uuid"]


def test_register_view(owner, cat, ns):
    created = cat.create_view(ns, "original")
    location = created["metadata-location"]
    assert cat.req("DELETE", cat.view(ns, "original")).status_code == 204
    r = cat.req("POST", f"/namespaces/{ns_path(ns)}/register-view",
                json={"name": "restored", "metadata-location": location})
    assert r.status_code == 200, r.text
    assert r.json()["metadata-location"] == location
    assert r.json()["metadata"] == created["metadata"]
    assert cat.load_view(ns, "restored")["metadata"]["view-uuid"] == created["metadata"]["view-uuid"]

    cat.create_table(ns, "t")
    register = lambda name, loc: cat.req("POST", f"/namespaces/{ns_path(ns)}/register-view",
                                         json={"name": name, "metadata-location": loc})
    assert_iceberg_error(register("t", location), 409, "AlreadyExistsException",
                         f"Table with same name already exists: {ns[0]}.t")
    assert_iceberg_error(register("restored", location), 409, "AlreadyExistsException",
                         f"View already exists: {ns[0]}.restored")
    assert_iceberg_error(register("x", "s3://elsewhere/m.metadata.json"), 400, "BadRequestException",
                         "outside this warehouse")
    assert_iceberg_error(register("x", location.replace("00000-", "00099-")), 400, "BadRequestException")
    table_metadata = cat.req("GET", f"/namespaces/{ns_path(ns)}/tables/t").json()["metadata-location"]
    assert_iceberg_error(register("x", table_metadata), 400, "BadRequestException", "not Iceberg view metadata")
    assert_iceberg_error(cat.req("POST", f"/namespaces/{ns_path(ns)}/register-view", json={"name": "x"}),
                         400, "BadRequestException")


def test_views_and_tables_share_one_name_space(cat, ns):
    cat.create_table(ns, "t")
    cat.create_view(ns, "v")
    assert_iceberg_error(cat.create_view_raw(ns, "t"), 409, "AlreadyExistsException",
                         f"Table with same name already exists: {ns[0]}.t")
    assert_iceberg_error(cat.create_view_raw(ns, "v"), 409, "AlreadyExistsException",
                         f"View already exists: {ns[0]}.v")
    r = cat.req("POST", f"/namespaces/{ns_path(ns)}/tables", json={"name": "v", "schema": TABLE_SCHEMA})
    assert_iceberg_error(r, 409, "AlreadyExistsException", f"View with same name already exists: {ns[0]}.v")


def test_create_errors(server, cat, ns):
    assert_iceberg_error(cat.create_view_raw(["nowhere" + uid()], "v"), 404, "NoSuchNamespaceException")
    assert_iceberg_error(cat.req("POST", cat.views(ns), json={"schema": VIEW_SCHEMA}), 400, "BadRequestException",
                         "name")
    assert_iceberg_error(cat.req("POST", cat.views(ns), json={"name": "nov", "schema": VIEW_SCHEMA}),
                         400, "BadRequestException")
    assert_iceberg_error(cat.req("POST", cat.views(ns), data="{"), 400, "BadRequestException")
    assert_iceberg_error(cat.create_view_raw(ns, "far", location="s3://elsewhere/v"), 400,
                         "BadRequestException", "outside this warehouse")
    assert_iceberg_error(requests.get(f"{server.catalog}/v1/w-{cat.warehouse_id}{cat.views(ns)}"),
                         401, "NotAuthorizedException")
    assert cat.req("GET", cat.views(ns)).json()["identifiers"] == []


def test_read_only_identity_reads_views_but_cannot_change_them(owner, cat, reader, ns):
    created = cat.create_view(ns, "guarded")
    assert reader.req("GET", reader.views(ns)).json()["identifiers"] == [{"namespace": ns, "name": "guarded"}]
    assert reader.load_view(ns, "guarded") == created
    assert reader.req("HEAD", reader.view(ns, "guarded")).status_code == 204
    ro = f"t-{owner['warehouse_id']}-ro"
    for r in (reader.create_view_raw(ns, "new"),
              reader.replace(ns, "guarded", [], [{"action": "set-properties", "updates": {"a": "b"}}]),
              reader.rename(ns, "guarded", ns, "renamed"),
              reader.req("DELETE", reader.view(ns, "guarded")),
              reader.req("POST", f"/namespaces/{ns_path(ns)}/register-view",
                         json={"name": "copy", "metadata-location": created["metadata-location"]})):
        assert_iceberg_error(r, 403, "ForbiddenException", ro)
    assert cat.load_view(ns, "guarded") == created
    assert [i["name"] for i in cat.req("GET", cat.views(ns)).json()["identifiers"]] == ["guarded"]


# ---------------------------------------------------------------------------- PyIceberg

def test_pyiceberg_create_list_load_replace_drop(pyice, cat, ns):
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "item", StringType(), required=False))
    version = ViewVersion(version_id=1, schema_id=0, timestamp_ms=int(time.time() * 1000),
                          summary={"engine-name": "pyiceberg"}, default_namespace=tuple(ns),
                          representations=[SQLViewRepresentation(type="sql", dialect="spark",
                                                                 sql="SELECT id, item FROM orders")])
    view = pyice.create_view((ns[0], "recent"), schema=schema, view_version=version,
                             properties={"owner": "pyiceberg"})
    assert view.current_version().representations[0].root.sql == "SELECT id, item FROM orders"
    assert [f.name for f in view.schema().fields] == ["id", "item"]
    assert pyice.list_views(ns[0]) == [(ns[0], "recent")]
    assert pyice.view_exists((ns[0], "recent")) is True
    assert pyice.view_exists((ns[0], "nothing")) is False
    loaded = pyice.load_view((ns[0], "recent"))
    assert str(loaded.metadata.view_uuid) == str(view.metadata.view_uuid)
    assert loaded.properties == {"owner": "pyiceberg"}
    assert loaded.location() == f"s3://{cat.bucket}/{ns[0]}/recent"

    # PyIceberg 0.12 has no replace-view call; send the spec's CommitViewRequest through
    # the catalog's own authenticated session, built from PyIceberg's models.
    new_schema = Schema(NestedField(1, "id", LongType(), required=False), schema_id=1)
    new_version = ViewVersion(version_id=2, schema_id=1, timestamp_ms=int(time.time() * 1000),
                              summary={"engine-name": "pyiceberg"}, default_namespace=tuple(ns),
                              representations=[SQLViewRepresentation(type="sql", dialect="spark",
                                                                     sql="SELECT id FROM orders")])
    url = pyice.url("namespaces/{namespace}/views/{view}", prefixed=True,
                    **pyice._split_identifier_for_path((ns[0], "recent"), IdentifierKind.VIEW))
    r = pyice._session.post(url, data=json.dumps({
        "requirements": [{"type": "assert-view-uuid", "uuid": str(loaded.metadata.view_uuid)}],
        "updates": [{"action": "add-schema", "schema": json.loads(new_schema.model_dump_json())},
                    {"action": "add-view-version", "view-version": json.loads(new_version.model_dump_json())},
                    {"action": "set-current-view-version", "view-version-id": -1}]}))
    assert r.status_code == 200, r.text
    replaced = pyice.load_view((ns[0], "recent"))
    assert replaced.metadata.current_version_id == 2
    assert replaced.current_version().representations[0].root.sql == "SELECT id FROM orders"
    assert [f.name for f in replaced.schema().fields] == ["id"]
    assert [v.version_id for v in replaced.versions] == [1, 2]
    assert [h.version_id for h in replaced.history()] == [1, 2]

    pyice.create_table((ns[0], "orders"), schema=schema)
    with pytest.raises(ViewAlreadyExistsError):
        pyice.create_view((ns[0], "orders"), schema=schema, view_version=version)
    with pytest.raises(ViewAlreadyExistsError):
        pyice.create_view((ns[0], "recent"), schema=schema, view_version=version)
    assert pyice.list_tables(ns[0]) == [(ns[0], "orders")]

    pyice.drop_view((ns[0], "recent"))
    assert pyice.view_exists((ns[0], "recent")) is False
    assert pyice.list_views(ns[0]) == []
    with pytest.raises(NoSuchViewError):
        pyice.load_view((ns[0], "recent"))


# ---------------------------------------------------------------------------- Spark

@pytest.mark.spark
class TestSpark:
    def test_create_list_select_replace_drop(self, spark, cat):
        ns = uid("sv")
        spark.sql(f"CREATE NAMESPACE lake.{ns}")
        spark.sql(f"CREATE TABLE lake.{ns}.orders (id bigint, item string, qty int) USING iceberg")
        spark.sql(f"INSERT INTO lake.{ns}.orders VALUES (1, 'apple', 1), (2, 'pear', 3), (3, 'plum', 7)")

        spark.sql(f"CREATE VIEW lake.{ns}.big_orders AS "
                  f"SELECT id, item FROM lake.{ns}.orders WHERE qty > 1")
        assert [r.viewName for r in spark.sql(f"SHOW VIEWS IN lake.{ns}").collect()] == ["big_orders"]
        assert [tuple(r) for r in spark.sql(f"SELECT * FROM lake.{ns}.big_orders ORDER BY id").collect()] == \
            [(2, "pear"), (3, "plum")]

        described = spark.sql(f"DESCRIBE TABLE EXTENDED lake.{ns}.big_orders").collect()
        assert [r.col_name for r in described[:2]] == ["id", "item"]
        assert [r.data_type for r in described[:2]] == ["bigint", "string"]
        info = {r.col_name: r.data_type for r in described}
        assert info["View Catalog and Namespace"] == f"lake.{ns}"
        assert info["View Query Output Columns"] == "[id, item]"
        assert f"'location' = 's3://{cat.bucket}/{ns}/big_orders'" in info["View Properties"]

        created = cat.load_view([ns], "big_orders")
        m = created["metadata"]
        assert m["current-version-id"] == 1
        rep = m["versions"][0]["representations"]
        assert [(x["type"], x["dialect"]) for x in rep] == [("sql", "spark")]
        assert "qty > 1" in rep[0]["sql"]
        assert [f["name"] for f in m["schemas"][0]["fields"]] == ["id", "item"]
        assert cat.read_json(created["metadata-location"]) == m

        spark.sql(f"CREATE OR REPLACE VIEW lake.{ns}.big_orders AS "
                  f"SELECT id, item, qty FROM lake.{ns}.orders WHERE qty > 5")
        replaced = cat.load_view([ns], "big_orders")
        rm = replaced["metadata"]
        assert rm["view-uuid"] == m["view-uuid"]
        assert rm["current-version-id"] == 2 and len(rm["versions"]) == 2
        assert [e["version-id"] for e in rm["version-log"]] == [1, 2]
        assert replaced["metadata-location"] != created["metadata-location"]
        assert [tuple(r) for r in spark.sql(f"SELECT * FROM lake.{ns}.big_orders").collect()] == [(3, "plum", 7)]

        # New rows in the base table show through the view once Spark's table cache is refreshed.
        spark.sql(f"INSERT INTO lake.{ns}.orders VALUES (4, 'fig', 9)")
        spark.sql(f"REFRESH TABLE lake.{ns}.orders")
        assert [tuple(r) for r in spark.sql(f"SELECT id FROM lake.{ns}.big_orders ORDER BY id").collect()] == \
            [(3,), (4,)]

        spark.sql(f"ALTER VIEW lake.{ns}.big_orders SET TBLPROPERTIES ('comment' = 'large orders')")
        assert cat.load_view([ns], "big_orders")["metadata"]["properties"]["comment"] == "large orders"

        with pytest.raises(Exception, match="(?i)already exists"):
            spark.sql(f"CREATE VIEW lake.{ns}.orders AS SELECT 1 AS one")
        spark.sql(f"DROP VIEW lake.{ns}.big_orders")
        assert spark.sql(f"SHOW VIEWS IN lake.{ns}").collect() == []
        assert_iceberg_error(cat.req("GET", cat.view([ns], "big_orders")), 404, "NoSuchViewException")

    def test_spark_reads_a_view_created_over_rest(self, spark, cat):
        ns = uid("sv")
        spark.sql(f"CREATE NAMESPACE lake.{ns}")
        spark.sql(f"CREATE TABLE lake.{ns}.items (id bigint, name string) USING iceberg")
        spark.sql(f"INSERT INTO lake.{ns}.items VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        schema = {"type": "struct", "schema-id": 0,
                  "fields": [{"id": 1, "name": "id", "required": False, "type": "long"},
                             {"id": 2, "name": "name", "required": False, "type": "string"}]}
        cat.create_view([ns], "odd", schema=schema, sql="SELECT id, name FROM items WHERE id % 2 = 1")
        assert [tuple(r) for r in spark.sql(f"SELECT * FROM lake.{ns}.odd ORDER BY id").collect()] == \
            [(1, "a"), (3, "c")]
        # Replaced over REST, the view changes for Spark too.
        m = cat.load_view([ns], "odd")["metadata"]
        r = cat.replace([ns], "odd", [{"type": "assert-view-uuid", "uuid": m["view-uuid"]}], [
            {"action": "add-view-version",
             "view-version": view_version([ns], "SELECT id, name FROM items WHERE id > 1", 2, 0)},
            {"action": "set-current-view-version", "view-version-id": 2}])
        assert r.status_code == 200, r.text
        assert [tuple(r) for r in spark.sql(f"SELECT * FROM lake.{ns}.odd ORDER BY id").collect()] == \
            [(2, "b"), (3, "c")]


# ---------------------------------------------------------------------------- onto other kinds

def test_table_rename_and_register_onto_a_view_name_the_view(cat, ns):
    table = cat.create_table(ns, "t")
    created = cat.create_view(ns, "v")
    r = cat.req("POST", "/tables/rename", json={"source": {"namespace": ns, "name": "t"},
                                               "destination": {"namespace": ns, "name": "v"}})
    assert_iceberg_error(r, 409, "AlreadyExistsException",
                         f"Cannot rename {ns[0]}.t to {ns[0]}.v. View already exists")
    r = cat.req("POST", f"/namespaces/{ns_path(ns)}/register",
                json={"name": "v", "metadata-location": table["metadata-location"]})
    assert_iceberg_error(r, 409, "AlreadyExistsException", f"View with same name already exists: {ns[0]}.v")
    assert cat.load_view(ns, "v") == created

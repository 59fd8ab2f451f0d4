"""Lakekeeper generic tables (Lance, Delta, CSV, Parquet) end to end, against a running
tablemere-server: the six operations of /work/shared/spec/lakekeeper-generic-tables.openapi.yaml
plus protection, over HTTP and through pylakekeeper, and the formats themselves written and
read by their own engines (pylance, deltalake, DuckDB, pyarrow) with the sessions the
catalog vends. Storage effects are checked through the server's S3 endpoint with boto3."""

from concurrent.futures import ThreadPoolExecutor
import json
import re
import time
import urllib.parse

import boto3
import botocore.config
import botocore.exceptions
import duckdb
import pyarrow as pa
import pyarrow.fs
import pyarrow.parquet as pq
import pytest
import requests
from deltalake import DeltaTable, write_deltalake
from pylakekeeper import Client, ClientCredentials, LakekeeperHTTPError, NotFoundError

from conftest import catalog_token
from helpers import uid, wait_for, ns_path

UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SESSION_KEYS = {"s3.access-key-id", "s3.secret-access-key", "s3.session-token",
                "s3.session-token-expires-at-ms", "client.refresh-credentials-endpoint"}
SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}


# ---------------------------------------------------------------------------- helpers

def view_ref(levels, view):
    """One referenced-by entry: namespace levels and view name joined by %1F."""
    return ns_path(list(levels) + [view])


def assert_iceberg_error(r, status, error_type, message_contains=None):
    """Every error is the Iceberg envelope {"error": {"message", "type", "code"}}."""
    assert r.status_code == status, f"{r.status_code} {r.text}"
    assert r.headers.get("Content-Type", "").startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert set(err) == {"message", "type", "code"}, err
    assert err["code"] == status, err
    assert err["type"] == error_type, err
    assert isinstance(err["message"], str) and err["message"], err
    if message_contains is not None:
        assert message_contains in err["message"], err
    return err


def s3_client(server, key, secret, token=None):
    return boto3.client(
        "s3", endpoint_url=server.s3, aws_access_key_id=key, aws_secret_access_key=secret,
        aws_session_token=token, region_name="us-east-1",
        config=botocore.config.Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def session_s3(server, credential):
    """boto3 over one vended storage credential ({"prefix", "config"})."""
    c = credential["config"]
    return s3_client(server, c["s3.access-key-id"], c["s3.secret-access-key"], c["s3.session-token"])


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


def s3_error(call):
    """The S3 error code of a call that must fail."""
    with pytest.raises(botocore.exceptions.ClientError) as info:
        call()
    return info.value.response["Error"]["Code"]


def host_port(url):
    return urllib.parse.urlsplit(url).netloc


def create_agent(server, account, name, level):
    r = requests.post(f"{server.api}/v1/orgs/{account['organization']['org_id']}/agents",
                      headers={"Authorization": "Bearer " + account["api_key"]},
                      json={"name": name,
                            "grants": [{"warehouse_id": account["warehouse_id"], "level": level}]})
    assert r.status_code == 201, r.text
    return r.json()


class Lake:
    """Raw HTTP for one catalog identity of one warehouse: the Iceberg REST API under
    /v1/w-<id> and the Lakekeeper API under /lakekeeper/v1/{prefix}."""

    def __init__(self, server, credential, warehouse_id):
        self.server = server
        self.warehouse_id = warehouse_id
        self.bucket = "w-" + warehouse_id
        self.root = f"s3://w-{warehouse_id}/"
        self.credential = credential
        self.token = catalog_token(server, credential["client_id"], credential["client_secret"])
        self.http = requests.Session()
        self.http.headers["Authorization"] = "Bearer " + self.token

    # -- Iceberg REST
    def iceberg(self, method, path, **kw):
        return self.http.request(method, f"{self.server.catalog}/v1/w-{self.warehouse_id}{path}", **kw)

    def create_namespace(self, levels):
        r = self.iceberg("POST", "/namespaces", json={"namespace": levels})
        assert r.status_code == 200, r.text

    def create_table(self, ns, name):
        r = self.iceberg("POST", f"/namespaces/{ns_path(ns)}/tables", json={"name": name, "schema": SCHEMA})
        assert r.status_code == 200, r.text
        return r.json()

    def create_view(self, ns, name):
        r = self.iceberg("POST", f"/namespaces/{ns_path(ns)}/views", json={
            "name": name, "schema": SCHEMA,
            "view-version": {"version-id": 1, "schema-id": 0, "timestamp-ms": int(time.time() * 1000),
                             "summary": {"engine-name": "tests"}, "default-namespace": ns,
                             "representations": [{"type": "sql", "sql": "SELECT 1 AS id",
                                                  "dialect": "spark"}]}})
        assert r.status_code == 200, r.text
        return r.json()

    # -- Lakekeeper
    def lk(self, method, path, prefix=None, vended=False, **kw):
        headers = dict(kw.pop("headers", {}))
        if vended:
            headers["X-Iceberg-Access-Delegation"] = "vended-credentials"
        prefix = prefix if prefix is not None else "w-" + self.warehouse_id
        return self.http.request(method, f"{self.server.catalog}/lakekeeper/v1/{prefix}{path}",
                                 headers=headers, **kw)

    @staticmethod
    def gt(ns, name=None):
        path = f"/namespaces/{ns_path(ns)}/generic-tables"
        return path if name is None else f"{path}/{urllib.parse.quote(name, safe='')}"

    def create(self, ns, name, fmt, vended=False, **fields):
        r = self.lk("POST", self.gt(ns), vended=vended, json={"name": name, "format": fmt, **fields})
        assert r.status_code == 200, r.text
        return r.json()

    def load(self, ns, name, vended=False):
        r = self.lk("GET", self.gt(ns, name), vended=vended)
        assert r.status_code == 200, r.text
        return r.json()

    def rename(self, src_ns, src, dst_ns, dst):
        return self.lk("POST", "/generic-tables/rename",
                       json={"source": {"namespace": src_ns, "name": src},
                             "destination": {"namespace": dst_ns, "name": dst}})

    def protect(self, ns, name, value):
        return self.lk("POST", self.gt(ns, name) + "/protection", json={"protected": value})

    def s3(self):
        """The warehouse's static key pair (the catalog credential) as an S3 client."""
        return s3_client(self.server, self.credential["client_id"], self.credential["client_secret"])

    def key_of(self, location):
        assert location.startswith(self.root), location
        return location[len(self.root):]


def pylakekeeper_client(server, credential, warehouse):
    return Client(base_url=server.catalog, warehouse=warehouse,
                  auth=ClientCredentials(token_url=server.catalog + "/v1/oauth/tokens",
                                         client_id=credential["client_id"],
                                         client_secret=credential["client_secret"]))


def vended_credential(load_response, base_location):
    """The single storage credential of a vended load, checked for shape."""
    creds = load_response["storage-credentials"]
    assert isinstance(creds, list) and len(creds) == 1, load_response
    cred = creds[0]
    assert set(cred) == {"prefix", "config"}, cred
    assert cred["prefix"] == base_location + "/", cred
    assert SESSION_KEYS <= set(cred["config"]), cred
    return cred


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def owner(server):
    """This module's own account, so listings and audit events are only ours."""
    return server.signup()


@pytest.fixture(scope="module")
def lake(server, owner):
    return Lake(server, owner["connection"]["catalog_credential"], owner["warehouse_id"])


@pytest.fixture(scope="module")
def reader_credential(server, owner):
    """The read-only identity t-<id>-ro, reached through an agent with a read grant."""
    agent = create_agent(server, owner, uid("reader"), "read")
    conn = server.connection(agent["api_key"])
    assert conn["catalog_credential"]["client_id"] == f"t-{owner['warehouse_id']}-ro"
    return conn["catalog_credential"]


@pytest.fixture(scope="module")
def reader(server, owner, reader_credential):
    return Lake(server, reader_credential, owner["warehouse_id"])


@pytest.fixture(scope="module")
def lk(server, owner):
    """pylakekeeper, authenticating with the warehouse's catalog credential."""
    client = pylakekeeper_client(server, owner["connection"]["catalog_credential"],
                                 "w-" + owner["warehouse_id"])
    yield client
    client.close()


@pytest.fixture
def ns(lake):
    levels = [uid("ns")]
    lake.create_namespace(levels)
    return levels


# ---------------------------------------------------------------------------- pylakekeeper

def test_pylakekeeper_create_list_load_rename_drop(server, owner, lake, lk, ns):
    wid = owner["warehouse_id"]
    created = lk.generic_tables.create(ns[0], "embeddings", format="lance", doc="image vectors",
                                       properties={"team": "ml"})
    assert created.table.name == "embeddings"
    assert created.table.format == "lance"
    assert created.location == f"s3://w-{wid}/{ns[0]}/embeddings"
    assert created.table.doc == "image vectors"
    assert created.table.properties == {"team": "ml"}
    assert created.table.protected is False
    assert created.storage_credentials is None  # create was not asked to vend

    lk.generic_tables.create(ns[0], "docs", format="parquet")
    listed = sorted((i.name, i.format, tuple(i.namespace)) for i in lk.generic_tables.list(ns[0], page_size=1))
    assert listed == [("docs", "parquet", tuple(ns)), ("embeddings", "lance", tuple(ns))]

    loaded = lk.generic_tables.load(ns[0], "embeddings", vended=True)
    assert loaded.location == created.location
    assert [c.prefix for c in loaded.storage_credentials] == [created.location + "/"]
    assert loaded.credentials["s3.session-token"]
    assert loaded.expires_at is not None and not loaded.expires_within(60)
    opts = loaded.lance_storage_options
    assert opts["aws_endpoint"] == server.s3 and opts["allow_http"] == "true"
    assert opts["aws_region"] == "us-east-1"
    assert {"aws_access_key_id", "aws_secret_access_key", "aws_session_token"} <= set(opts)

    # pylakekeeper 0.4 has no rename: send the spec's request through its own transport
    # (same token) to a second namespace.
    other = [uid("ns")]
    lake.create_namespace(other)
    r = lk._transport.request("POST", f"/lakekeeper/v1/w-{wid}/generic-tables/rename",
                              json={"source": {"namespace": ns, "name": "embeddings"},
                                    "destination": {"namespace": other, "name": "vectors"}})
    assert r.status_code == 204 and r.content == b""
    with pytest.raises(NotFoundError):
        lk.generic_tables.load(ns[0], "embeddings")
    moved = lk.generic_tables.load(other[0], "vectors")
    assert moved.table.name == "vectors"
    assert moved.location == created.location  # a rename moves the name, not the files
    assert [i.name for i in lk.generic_tables.list(ns[0])] == ["docs"]
    assert [i.name for i in lk.generic_tables.list(other[0])] == ["vectors"]

    lk.generic_tables.drop(other[0], "vectors")
    with pytest.raises(NotFoundError) as info:
        lk.generic_tables.load(other[0], "vectors")
    assert json.loads(info.value.body)["error"]["type"] == "NoSuchGenericTableException"
    assert list(lk.generic_tables.list(other[0])) == []


def test_pylance_writes_and_reads_a_dataset_at_the_vended_location(lake, lk, ns):
    import lance  # here, not at collection: Lance warns when Spark's JVM is forked after it loads
    lk.generic_tables.create(ns[0], "frames", format="lance")
    t = lk.generic_tables.load(ns[0], "frames", vended=True)
    opts = t.lance_storage_options  # exactly as pylakekeeper derives them
    first = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "label": ["cat", "dog", "owl"]})
    lance.write_dataset(first, t.location, storage_options=opts)
    lance.write_dataset(pa.table({"id": pa.array([4], pa.int64()), "label": ["elk"]}), t.location,
                        mode="append", storage_options=opts)

    ds = lance.dataset(t.location, storage_options=opts)
    assert ds.version == 2
    assert ds.count_rows() == 4
    assert ds.to_table().sort_by("id").to_pydict() == {"id": [1, 2, 3, 4],
                                                       "label": ["cat", "dog", "owl", "elk"]}
    assert ds.to_table(filter="id > 2").sort_by("id").column("label").to_pylist() == ["owl", "elk"]

    # Every file Lance wrote is inside the base location, in Lance's own layout.
    key = lake.key_of(t.location)
    keys = list_keys(lake.s3(), lake.bucket, ns[0] + "/")
    mine = [k for k in keys if k.startswith(key + "/")]
    assert any(k.startswith(key + "/_versions/") for k in mine), mine
    assert sum(1 for k in mine if k.startswith(key + "/data/") and k.endswith(".lance")) == 2, mine
    assert not [k for k in keys if k.startswith(key) and not k.startswith(key + "/")]


def delta_storage_options(cred):
    """delta-rs (object_store) options for a vended session; the endpoint is plain http,
    hence AWS_ALLOW_HTTP. No locking provider and no AWS_S3_ALLOW_UNSAFE_RENAME: deltalake
    1.x commits each _delta_log/<version>.json with a single PUT carrying If-None-Match: *
    (seen on the wire, whatever the conditional_put / unsafe-rename options say), and the
    server refuses that PUT with 412 when the version exists (s3_api.cc,
    CheckWritePreconditions), which is what makes concurrent Delta commits safe."""
    c = cred["config"]
    return {"AWS_ACCESS_KEY_ID": c["s3.access-key-id"],
            "AWS_SECRET_ACCESS_KEY": c["s3.secret-access-key"],
            "AWS_SESSION_TOKEN": c["s3.session-token"],
            "AWS_ENDPOINT_URL": c["s3.endpoint"],
            "AWS_REGION": c["s3.region"],
            "AWS_ALLOW_HTTP": "true"}


def duckdb_with_session(cred, server):
    """DuckDB with one S3 secret holding the vended session (http, path-style)."""
    c = cred["config"]
    con = duckdb.connect()
    con.execute("LOAD httpfs")
    con.execute(f"""CREATE SECRET vended (TYPE S3, KEY_ID '{c["s3.access-key-id"]}',
                    SECRET '{c["s3.secret-access-key"]}', SESSION_TOKEN '{c["s3.session-token"]}',
                    ENDPOINT '{host_port(server.s3)}', URL_STYLE 'path', USE_SSL false,
                    REGION 'us-east-1')""")
    return con


def test_deltalake_writes_delta_and_duckdb_reads_it(server, lake, ns):
    created = lake.create(ns, "events", "delta")
    location = created["table"]["base-location"]
    cred = vended_credential(lake.load(ns, "events", vended=True), location)
    opts = delta_storage_options(cred)

    write_deltalake(location, pa.table({"id": pa.array([1, 2], pa.int64()), "kind": ["open", "click"]}),
                    storage_options=opts)
    stale = DeltaTable(location, storage_options=opts)  # a second writer, still at version 0
    write_deltalake(location, pa.table({"id": pa.array([3], pa.int64()), "kind": ["close"]}),
                    mode="append", storage_options=opts)
    # The stale writer's PUT of _delta_log/...01.json meets If-None-Match: * and a 412;
    # delta-rs then rebases its append onto version 1 and commits version 2.
    write_deltalake(stale, pa.table({"id": pa.array([4], pa.int64()), "kind": ["late"]}), mode="append")

    dt = DeltaTable(location, storage_options=opts)
    assert dt.version() == 2
    assert dt.to_pyarrow_table().sort_by("id").to_pydict() == {"id": [1, 2, 3, 4],
                                                               "kind": ["open", "click", "close", "late"]}
    assert [h["version"] for h in dt.history()] == [2, 1, 0]
    key = lake.key_of(location)
    keys = list_keys(lake.s3(), lake.bucket, key + "/")
    assert {key + f"/_delta_log/{v:020d}.json" for v in range(3)} <= set(keys), keys
    assert sum(1 for k in keys if k.endswith(".parquet")) == 3, keys

    con = duckdb_with_session(cred, server)
    con.execute("LOAD delta")
    rows = con.execute(f"SELECT id, kind FROM delta_scan('{location}') ORDER BY id").fetchall()
    assert rows == [(1, "open"), (2, "click"), (3, "close"), (4, "late")]
    con.close()


def test_parquet_drop_written_by_pyarrow_read_by_duckdb(server, lake, ns):
    created = lake.create(ns, "drops", "parquet")
    location = created["table"]["base-location"]
    cred = vended_credential(lake.load(ns, "drops", vended=True), location)
    c = cred["config"]
    fs = pyarrow.fs.S3FileSystem(access_key=c["s3.access-key-id"], secret_key=c["s3.secret-access-key"],
                                 session_token=c["s3.session-token"], region="us-east-1",
                                 endpoint_override=host_port(server.s3), scheme="http")
    path = location[len("s3://"):]
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": [0.5, 1.5]}),
                   f"{path}/part-0.parquet", filesystem=fs)
    pq.write_table(pa.table({"id": pa.array([3], pa.int64()), "v": [2.5]}),
                   f"{path}/part-1.parquet", filesystem=fs)
    # The session is held to the declared format: a CSV is refused in a Parquet table.
    with pytest.raises(OSError, match="InvalidArgument|parquet generic table"):
        with fs.open_output_stream(f"{path}/notes.csv") as out:
            out.write(b"id\n1\n")

    con = duckdb_with_session(cred, server)
    rows = con.execute(f"SELECT id, v FROM read_parquet('{location}/*.parquet') ORDER BY id").fetchall()
    assert rows == [(1, 0.5), (2, 1.5), (3, 2.5)]
    con.close()


# ---------------------------------------------------------------------------- exact shapes

def test_create_keeps_fields_as_given_and_assigns_the_location(owner, lake, ns):
    schema = {"type": "struct", "fields": [{"name": "vector", "type": "fixed_size_list<float>[4]"}]}
    statistics = {"num-rows": 12, "by-column": {"vector": {"nulls": 0}}}
    r = lake.lk("POST", lake.gt(ns), json={
        "name": "t1", "format": "lance", "doc": "four floats", "properties": {"a": "1", "b": "two"},
        "schema": schema, "statistics": statistics})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"table", "config", "storage-credentials"}
    assert body["table"] == {"name": "t1", "format": "lance",
                             "base-location": f"s3://w-{owner['warehouse_id']}/{ns[0]}/t1",
                             "doc": "four floats", "properties": {"a": "1", "b": "two"},
                             "protected": False, "schema": schema, "statistics": statistics}
    assert body["storage-credentials"] is None
    assert body["config"]["s3.endpoint"] == lake.server.s3
    assert not SESSION_KEYS & set(body["config"])  # no secrets without delegation
    assert lake.load(ns, "t1") == body

    # Only name and format are required; doc is null, properties empty, schema and
    # statistics absent when not given.
    minimal = lake.create(ns, "t2", "csv")
    assert minimal["table"] == {"name": "t2", "format": "csv",
                                "base-location": f"s3://w-{owner['warehouse_id']}/{ns[0]}/t2",
                                "doc": None, "properties": {}, "protected": False}


def test_create_with_vended_credentials_returns_a_session(lake, ns):
    body = lake.create(ns, "fresh", "parquet", vended=True)
    cred = vended_credential(body, body["table"]["base-location"])
    assert body["config"]["s3.session-token"] == cred["config"]["s3.session-token"]
    assert int(cred["config"]["s3.session-token-expires-at-ms"]) > time.time() * 1000 + 60_000
    assert cred["config"]["client.refresh-credentials-endpoint"] == (
        f"lakekeeper/v1/w-{lake.warehouse_id}/namespaces/{ns[0]}/generic-tables/fresh/credentials")
    key = lake.key_of(body["table"]["base-location"])
    session_s3(lake.server, cred).put_object(Bucket=lake.bucket, Key=key + "/a.parquet", Body=b"PAR1")
    assert list_keys(lake.s3(), lake.bucket, key + "/") == [key + "/a.parquet"]


def test_create_requires_name_and_a_supported_format(lake, ns):
    for body, message in [({"format": "lance"}, "name"), ({"name": "x"}, "format"),
                          ({"name": 7, "format": "lance"}, "name"),
                          ({"name": "x", "format": "vortex"}, "Unsupported format"),
                          ({"name": "x", "format": "lance", "properties": {"a": 1}}, "property 'a'"),
                          ({"name": "x", "format": "lance", "base-location": 5}, "base-location")]:
        assert_iceberg_error(lake.lk("POST", lake.gt(ns), json=body), 400, "BadRequestException", message)
    assert_iceberg_error(lake.lk("POST", lake.gt(ns), data="not json"), 400, "BadRequestException")
    assert_iceberg_error(lake.lk("POST", lake.gt(["missing" + uid()]), json={"name": "x", "format": "lance"}),
                         404, "NoSuchNamespaceException")
    assert lake.lk("GET", lake.gt(ns)).json() == {"identifiers": [], "next-page-token": None}


def test_list_pages_with_page_token_and_page_size(lake, ns):
    names = [f"t{i}" for i in range(5)]
    ids = {n: None for n in names}
    for i, n in enumerate(names):
        lake.create(ns, n, ["lance", "delta", "csv", "parquet", "lance"][i])
    lake.create_table(ns, "iceberg_t")  # other kinds in the namespace are not listed
    lake.create_view(ns, "iceberg_v")

    everything = lake.lk("GET", lake.gt(ns)).json()
    assert everything["next-page-token"] is None
    assert [i["name"] for i in everything["identifiers"]] == names
    for ident in everything["identifiers"]:
        assert set(ident) == {"namespace", "name", "id", "format"}
        assert ident["namespace"] == ns and re.fullmatch(UUID_RE, ident["id"])
        ids[ident["name"]] = ident["id"]
    assert [i["format"] for i in everything["identifiers"]] == ["lance", "delta", "csv", "parquet", "lance"]
    assert len(set(ids.values())) == 5

    seen, token, pages = [], None, 0
    while True:
        params = {"pageSize": 2} | ({"pageToken": token} if token else {})
        page = lake.lk("GET", lake.gt(ns), params=params).json()
        pages += 1
        assert len(page["identifiers"]) == (2 if pages < 3 else 1)
        seen += [(i["name"], i["id"]) for i in page["identifiers"]]
        token = page["next-page-token"]
        if token is None:
            break
        assert isinstance(token, str)
    assert pages == 3 and seen == [(n, ids[n]) for n in names]

    huge = lake.lk("GET", lake.gt(ns), params={"pageSize": 2**63 - 1, "pageToken": "1"}).json()
    assert [i["name"] for i in huge["identifiers"]] == names[1:] and huge["next-page-token"] is None
    assert lake.lk("GET", lake.gt(ns), params={"pageToken": "99"}).json() == {"identifiers": [],
                                                                           "next-page-token": None}
    assert_iceberg_error(lake.lk("GET", lake.gt(ns), params={"pageSize": 0}), 400, "BadRequestException")
    assert_iceberg_error(lake.lk("GET", lake.gt(ns), params={"pageToken": "-1"}), 400, "BadRequestException")
    assert_iceberg_error(lake.lk("GET", lake.gt(ns), params={"pageToken": "x"}), 400, "BadRequestException")


def test_prefix_accepts_w_prefix_and_bare_uuid_only_for_our_warehouse(server, owner, lake, ns):
    lake.create(ns, "both", "csv")
    by_prefix = lake.load(ns, "both")
    r = lake.lk("GET", lake.gt(ns, "both"), prefix=owner["warehouse_id"])
    assert r.status_code == 200, r.text
    assert r.json() == by_prefix
    r = lake.lk("GET", lake.gt(ns), prefix=owner["warehouse_id"])
    assert [i["name"] for i in r.json()["identifiers"]] == ["both"]

    stranger = server.signup()
    for prefix in ("w-" + stranger["warehouse_id"], stranger["warehouse_id"]):
        assert_iceberg_error(lake.lk("GET", lake.gt(ns, "both"), prefix=prefix), 403, "ForbiddenException")


def test_unauthenticated_and_unknown_routes_use_the_envelope(server, lake, ns):
    url = f"{server.catalog}/lakekeeper/v1/w-{lake.warehouse_id}{lake.gt(ns)}"
    assert_iceberg_error(requests.get(url), 401, "NotAuthorizedException")
    assert_iceberg_error(requests.get(url, headers={"Authorization": "Bearer nonsense"}),
                         401, "NotAuthorizedException")
    assert_iceberg_error(lake.lk("GET", "/nothing-here"), 404, "NotFoundException")
    assert_iceberg_error(lake.lk("PUT", lake.gt(ns, "x")), 405, "MethodNotAllowedException")
    assert_iceberg_error(lake.lk("GET", lake.gt(ns, "nope")), 404, "NoSuchGenericTableException",
                         f"{ns[0]}.nope")
    # Names JSON cannot carry are refused as such, still in the envelope.
    assert_iceberg_error(lake.lk("GET", lake.gt(ns) + "/%FF"), 400, "BadRequestException", "UTF-8")
    assert_iceberg_error(lake.lk("GET", "/namespaces/%FF/generic-tables"), 400, "BadRequestException", "UTF-8")
    lake.create(ns, "real", "csv")
    assert_iceberg_error(lake.lk("GET", f"{lake.gt(ns, 'real')}/credentials?referenced-by={ns[0]}%1F%FF"),
                         400, "BadRequestException", "referenced-by")


# ---------------------------------------------------------------------------- base-location

def test_explicit_base_location_inside_the_warehouse_is_kept(owner, lake, ns):
    location = f"s3://w-{owner['warehouse_id']}/custom/{uid('loc')}"
    body = lake.create(ns, "placed", "parquet", **{"base-location": location + "/"})
    assert body["table"]["base-location"] == location
    cred = vended_credential(lake.load(ns, "placed", vended=True), location)
    client = session_s3(lake.server, cred)
    client.put_object(Bucket=lake.bucket, Key=lake.key_of(location) + "/x.parquet", Body=b"PAR1")
    assert list_keys(lake.s3(), lake.bucket, lake.key_of(location) + "/") == [lake.key_of(location) + "/x.parquet"]


def test_absent_base_location_avoids_files_already_there(owner, lake, ns):
    # Stray files at the default location of a name the catalog does not know.
    lake.s3().put_object(Bucket=lake.bucket, Key=f"{ns[0]}/taken/data/stray.parquet", Body=b"PAR1")
    body = lake.create(ns, "taken", "delta")
    assert re.fullmatch(rf"s3://w-{owner['warehouse_id']}/{ns[0]}/taken-[0-9a-f]{{8}}",
                        body["table"]["base-location"]), body


def test_base_location_outside_the_warehouse_is_refused(server, owner, lake, ns):
    stranger = server.signup()
    for location in (f"s3://w-{stranger['warehouse_id']}/x", "s3://elsewhere/x",
                     f"s3://b-{owner['warehouse_id']}/x", f"s3://w-{owner['warehouse_id']}/",
                     "/tmp/x"):
        r = lake.lk("POST", lake.gt(ns), json={"name": "out", "format": "lance", "base-location": location})
        assert_iceberg_error(r, 400, "BadRequestException", "outside this warehouse")
    # Inside, but not a location the table bucket could hold (it refuses such keys).
    for rest in ("x/../y", "x//y", "./x", "x/./y"):
        r = lake.lk("POST", lake.gt(ns), json={"name": "odd", "format": "lance",
                                               "base-location": f"s3://w-{owner['warehouse_id']}/{rest}"})
        assert_iceberg_error(r, 400, "BadRequestException", "path segments")
    assert lake.lk("GET", lake.gt(ns)).json()["identifiers"] == []


def test_base_location_overlapping_another_tables_is_refused(owner, lake, ns):
    table = lake.create_table(ns, "ice")
    ice_location = table["metadata"]["location"]
    inner = lake.create(ns, "inner", "lance", **{"base-location": f"s3://w-{owner['warehouse_id']}/shared/{ns[0]}/a"})
    for location, other in [(ice_location, "ice"), (ice_location + "/sub", "ice"),
                            (f"s3://w-{owner['warehouse_id']}/shared/{ns[0]}", "inner"),
                            (inner["table"]["base-location"] + "/deeper", "inner")]:
        r = lake.lk("POST", lake.gt(ns), json={"name": "overlap", "format": "delta", "base-location": location})
        assert_iceberg_error(r, 409, "ConflictException", "overlaps the location of")
        assert f"{ns[0]}.{other}" in r.json()["error"]["message"]
    # A sibling sharing only a name prefix ("a" vs "ab") does not overlap.
    sibling = lake.create(ns, "sibling", "delta",
                          **{"base-location": f"s3://w-{owner['warehouse_id']}/shared/{ns[0]}/ab"})
    assert sibling["table"]["base-location"].endswith("/shared/" + ns[0] + "/ab")


def test_creates_at_overlapping_locations_at_once_admit_one(owner, lake, ns):
    """A generic table and an Iceberg table (or two generic tables) asked for at the same
    moment, one inside the other's location: exactly one is created."""
    root = f"s3://w-{owner['warehouse_id']}/race/{ns[0]}"
    for round_ in range(6):
        outer = f"{root}/r{round_}"
        generic = lambda: lake.lk("POST", lake.gt(ns), json={
            "name": f"g{round_}", "format": "delta", "base-location": outer})
        if round_ % 2 == 0:
            other = lambda: lake.iceberg("POST", f"/namespaces/{ns_path(ns)}/tables", json={
                "name": f"t{round_}", "schema": SCHEMA, "location": outer + "/t"})
        else:
            other = lambda: lake.lk("POST", lake.gt(ns), json={
                "name": f"h{round_}", "format": "lance", "base-location": outer + "/inner"})
        with ThreadPoolExecutor(2) as pool:
            answers = [f.result() for f in [pool.submit(generic), pool.submit(other)]]
        codes = sorted(r.status_code for r in answers)
        assert codes == [200, 409], [r.text for r in answers]


# ---------------------------------------------------------------------------- drop, rename, protection

def test_drop_returns_204_and_the_background_task_purges_the_files(lake, ns):
    body = lake.create(ns, "gone", "csv", vended=True)
    location = body["table"]["base-location"]
    key = lake.key_of(location)
    client = session_s3(lake.server, vended_credential(body, location))
    for name in ("a.csv", "b.csv.gz", "sub/c.tsv"):
        client.put_object(Bucket=lake.bucket, Key=f"{key}/{name}", Body=b"id\n1\n")
    # A neighbour whose key shares the prefix text ("gone" / "gone2") must survive.
    neighbour = lake.create(ns, "gone2", "csv", vended=True)
    nkey = lake.key_of(neighbour["table"]["base-location"])
    session_s3(lake.server, vended_credential(neighbour, neighbour["table"]["base-location"])).put_object(
        Bucket=lake.bucket, Key=nkey + "/keep.csv", Body=b"x")

    r = lake.lk("DELETE", lake.gt(ns, "gone"))
    assert r.status_code == 204 and r.content == b""
    assert_iceberg_error(lake.lk("GET", lake.gt(ns, "gone")), 404, "NoSuchGenericTableException")
    assert_iceberg_error(lake.lk("DELETE", lake.gt(ns, "gone")), 404, "NoSuchGenericTableException")
    wait_for(lambda: list_keys(lake.s3(), lake.bucket, key + "/") == [], "the purge of " + key)
    assert list_keys(lake.s3(), lake.bucket, nkey + "/") == [nkey + "/keep.csv"]


def test_rename_across_namespaces(lake, ns):
    body = lake.create(ns, "src", "parquet", doc="kept")
    dst = [uid("ns"), "inner"]
    lake.create_namespace(dst[:1])
    lake.create_namespace(dst)
    r = lake.rename(ns, "src", dst, "dst")
    assert r.status_code == 204 and r.content == b""
    moved = lake.load(dst, "dst")
    assert moved["table"] == {**body["table"], "name": "dst"}
    assert lake.lk("GET", lake.gt(ns)).json()["identifiers"] == []
    listed = lake.lk("GET", lake.gt(dst)).json()["identifiers"]
    assert [(i["namespace"], i["name"]) for i in listed] == [(dst, "dst")]

    assert_iceberg_error(lake.rename(ns, "src", dst, "again"), 404, "NoSuchGenericTableException")
    assert_iceberg_error(lake.rename(dst, "dst", ["nowhere" + uid()], "x"), 404, "NoSuchNamespaceException")
    assert_iceberg_error(lake.lk("POST", "/generic-tables/rename", json={"source": {"name": "x"}}),
                         400, "BadRequestException", "source")


def test_protected_table_cannot_be_dropped_until_unprotected(lake, ns):
    lake.create(ns, "keep", "lance")
    r = lake.protect(ns, "keep", True)
    assert r.status_code == 200, r.text
    assert r.json()["table"]["protected"] is True
    assert lake.load(ns, "keep")["table"]["protected"] is True
    assert_iceberg_error(lake.lk("DELETE", lake.gt(ns, "keep")), 409, "ProtectedException", "protected")
    assert lake.load(ns, "keep")["table"]["name"] == "keep"
    assert_iceberg_error(lake.lk("POST", lake.gt(ns, "keep") + "/protection", json={"protected": "yes"}),
                         400, "BadRequestException")

    r = lake.protect(ns, "keep", False)
    assert r.status_code == 200 and r.json()["table"]["protected"] is False
    assert lake.lk("DELETE", lake.gt(ns, "keep")).status_code == 204
    assert_iceberg_error(lake.protect(ns, "keep", True), 404, "NoSuchGenericTableException")


# ---------------------------------------------------------------------------- credentials & audit

def audit_events(server, owner, action):
    r = requests.get(f"{server.api}/v1/audit",
                     params={"org_id": owner["organization"]["org_id"], "action": action},
                     headers={"Authorization": "Bearer " + owner["api_key"]})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def test_credentials_with_referenced_by_are_vended_and_audited(server, owner, lake, reader, ns):
    body = lake.create(ns, "facts", "delta")
    location = body["table"]["base-location"]
    inner = [ns[0], "deep"]
    lake.create_namespace(inner)
    lake.create_view(ns, "outer_v")
    lake.create_view(inner, "inner_v")

    chain = view_ref(ns, "outer_v") + "," + view_ref(inner, "inner_v")
    # The query is written by hand: the commas separate views and must stay raw.
    r = lake.lk("GET", f"{lake.gt(ns, 'facts')}/credentials?referenced-by={chain}")
    assert r.status_code == 200, r.text
    assert set(r.json()) == {"storage-credentials"}
    cred = vended_credential(r.json(), location)
    session_s3(server, cred).put_object(Bucket=lake.bucket, Key=lake.key_of(location) + "/_delta_log/x.json",
                                        Body=b"{}")

    events = [e for e in audit_events(server, owner, "credentials.vend")
              if e["request_id"] == r.headers["x-request-id"]]
    assert len(events) == 1, events
    e = events[0]
    assert e["principal_id"] == f"t-{owner['warehouse_id']}"
    assert e["org_id"] == owner["organization"]["org_id"]
    assert (e["target_type"], e["target_id"]) == ("generic_table", f"{ns[0]}.facts")
    assert e["detail"] == {"warehouse_id": owner["warehouse_id"], "read_only": False, "location": location,
                           "referenced_by": [f"{ns[0]}.outer_v", f"{ns[0]}.deep.inner_v"]}

    # Without referenced-by the chain is empty; the read-only identity is recorded as such.
    r = reader.lk("GET", f"{lake.gt(ns, 'facts')}/credentials")
    assert r.status_code == 200, r.text
    e = [e for e in audit_events(server, owner, "credentials.vend")
         if e["request_id"] == r.headers["x-request-id"]][0]
    assert e["principal_id"] == f"t-{owner['warehouse_id']}-ro"
    assert e["detail"]["read_only"] is True and e["detail"]["referenced_by"] == []

    # Every view of the chain must exist (a table is not a view).
    lake.create_table(ns, "plain")
    for bad in (view_ref(ns, "missing_v"), view_ref(ns, "outer_v") + "," + view_ref(ns, "plain")):
        assert_iceberg_error(lake.lk("GET", f"{lake.gt(ns, 'facts')}/credentials?referenced-by={bad}"),
                             404, "NoSuchViewException", "referenced-by")
    assert_iceberg_error(lake.lk("GET", f"{lake.gt(ns, 'facts')}/credentials?referenced-by=novieworns"),
                         400, "BadRequestException")
    assert_iceberg_error(lake.lk("GET", f"{lake.gt(ns, 'nope')}/credentials"), 404,
                         "NoSuchGenericTableException")


# ---------------------------------------------------------------------------- sessions

def test_session_for_one_generic_table_is_refused_on_anothers_files(server, lake, ns):
    a = lake.create(ns, "t", "parquet", vended=True)
    b = lake.create(ns, "t2", "parquet", vended=True)  # "t2" starts with "t": still not t's
    ka, kb = lake.key_of(a["table"]["base-location"]), lake.key_of(b["table"]["base-location"])
    sa = session_s3(server, vended_credential(a, a["table"]["base-location"]))
    sb = session_s3(server, vended_credential(b, b["table"]["base-location"]))
    sa.put_object(Bucket=lake.bucket, Key=ka + "/mine.parquet", Body=b"PAR1")
    sb.put_object(Bucket=lake.bucket, Key=kb + "/theirs.parquet", Body=b"PAR1")

    assert sa.get_object(Bucket=lake.bucket, Key=ka + "/mine.parquet")["Body"].read() == b"PAR1"
    assert s3_error(lambda: sa.put_object(Bucket=lake.bucket, Key=kb + "/evil.parquet", Body=b"x")) == "AccessDenied"
    assert s3_error(lambda: sa.get_object(Bucket=lake.bucket, Key=kb + "/theirs.parquet")) == "AccessDenied"
    assert s3_error(lambda: sa.delete_object(Bucket=lake.bucket, Key=kb + "/theirs.parquet")) == "AccessDenied"
    assert s3_error(lambda: sa.list_objects_v2(Bucket=lake.bucket, Prefix=kb + "/")) == "AccessDenied"
    assert s3_error(lambda: sa.put_object(Bucket="b-" + lake.warehouse_id, Key="x", Body=b"x")) == "AccessDenied"
    assert list_keys(lake.s3(), lake.bucket, kb + "/") == [kb + "/theirs.parquet"]


@pytest.mark.parametrize("fmt,accepted,refused", [
    ("lance", ["data/0a.lance", "_versions/1.manifest", "_transactions/0-x.txn", "_indices/i/index.idx"],
     ["data/0a.parquet", "notes.txt"]),
    ("delta", ["_delta_log/00000000000000000000.json", "part-0.snappy.parquet", "y=1/part-1.parquet"],
     ["data.csv", "notes.txt"]),
    ("csv", ["a.csv", "b.csv.gz", "c.tsv"], ["d.parquet", "e.json"]),
    ("parquet", ["a.parquet", "year=2024/b.parquet"], ["c.csv", "_delta_log/0.json"]),
])
def test_table_bucket_accepts_only_the_declared_formats_files(server, lake, ns, fmt, accepted, refused):
    body = lake.create(ns, "f_" + fmt, fmt, vended=True)
    key = lake.key_of(body["table"]["base-location"])
    s = session_s3(server, vended_credential(body, body["table"]["base-location"]))
    for name in accepted:
        s.put_object(Bucket=lake.bucket, Key=f"{key}/{name}", Body=b"x")
    for name in refused:
        assert s3_error(lambda: s.put_object(Bucket=lake.bucket, Key=f"{key}/{name}", Body=b"x")) == "InvalidArgument"
    # The warehouse's own key is held to the same rules inside the base location: the
    # declared format's files are accepted even where Iceberg's layout would refuse them.
    # The S3 listener caches the generic tables' locations for up to a second, hence the
    # poll on the first accepted write.
    static = lake.s3()
    head, _, tail = accepted[-1].rpartition("/")
    extra = f"{key}/{head + '/' if head else ''}static-{tail}"  # beside an accepted file

    def accepted_from_static():
        try:
            static.put_object(Bucket=lake.bucket, Key=extra, Body=b"x")
            return True
        except botocore.exceptions.ClientError as e:
            assert e.response["Error"]["Code"] == "InvalidArgument", e.response
            return False
    wait_for(accepted_from_static, "the table bucket to apply the generic table's format", timeout=5)
    with pytest.raises(botocore.exceptions.ClientError) as info:
        static.put_object(Bucket=lake.bucket, Key=f"{key}/{refused[0]}", Body=b"x")
    assert info.value.response["Error"]["Code"] == "InvalidArgument"
    assert f"belongs to a {fmt} generic table" in info.value.response["Error"]["Message"]
    assert sorted(list_keys(lake.s3(), lake.bucket, key + "/")) == sorted(
        [f"{key}/{n}" for n in accepted] + [extra])


def test_read_only_identity_reads_but_cannot_change(server, owner, lake, reader, reader_credential, ns):
    body = lake.create(ns, "ro", "parquet", vended=True)
    location = body["table"]["base-location"]
    key = lake.key_of(location)
    session_s3(server, vended_credential(body, location)).put_object(
        Bucket=lake.bucket, Key=key + "/a.parquet", Body=b"PAR1")

    assert [i["name"] for i in reader.lk("GET", reader.gt(ns)).json()["identifiers"]] == ["ro"]
    loaded = reader.load(ns, "ro", vended=True)
    assert loaded["table"] == body["table"]
    ro = session_s3(server, vended_credential(loaded, location))
    assert ro.get_object(Bucket=lake.bucket, Key=key + "/a.parquet")["Body"].read() == b"PAR1"
    listed = ro.list_objects_v2(Bucket=lake.bucket, Prefix=key + "/")["Contents"]
    assert [o["Key"] for o in listed] == [key + "/a.parquet"]
    assert s3_error(lambda: ro.put_object(Bucket=lake.bucket, Key=key + "/b.parquet", Body=b"x")) == "AccessDenied"
    assert s3_error(lambda: ro.delete_object(Bucket=lake.bucket, Key=key + "/a.parquet")) == "AccessDenied"

    other = [uid("ns")]
    lake.create_namespace(other)
    for r in (reader.lk("POST", reader.gt(ns), json={"name": "x", "format": "lance"}),
              reader.rename(ns, "ro", other, "moved"),
              reader.lk("DELETE", reader.gt(ns, "ro")),
              reader.protect(ns, "ro", True)):
        assert_iceberg_error(r, 403, "ForbiddenException", f"t-{owner['warehouse_id']}-ro")
    assert lake.load(ns, "ro")["table"] == body["table"]

    # pylakekeeper with the read-only credential gets the same answers.
    with pylakekeeper_client(server, reader_credential, owner["warehouse_id"]) as client:
        assert client.generic_tables.load(ns[0], "ro", vended=True).location == location
        with pytest.raises(LakekeeperHTTPError) as info:
            client.generic_tables.create(ns[0], "nope", format="lance")
        assert info.value.status_code == 403


# ---------------------------------------------------------------------------- one name space

def test_tables_views_and_generic_tables_share_one_name_space(lake, ns):
    lake.create_table(ns, "t")
    lake.create_view(ns, "v")
    lake.create(ns, "g", "lance")
    noun = {"t": "Table", "v": "View", "g": "Generic table"}

    for name in ("t", "v"):  # generic over table / view
        r = lake.lk("POST", lake.gt(ns), json={"name": name, "format": "delta"})
        assert_iceberg_error(r, 409, "AlreadyExistsException",
                             f"{noun[name]} with same name already exists: {ns[0]}.{name}")
    for name in ("t", "g"):  # view over table / generic
        r = lake.iceberg("POST", f"/namespaces/{ns_path(ns)}/views", json={
            "name": name, "schema": SCHEMA,
            "view-version": {"version-id": 1, "schema-id": 0, "timestamp-ms": 1, "summary": {},
                             "default-namespace": ns,
                             "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}]}})
        assert_iceberg_error(r, 409, "AlreadyExistsException",
                             f"{noun[name]} with same name already exists: {ns[0]}.{name}")
    for name in ("v", "g"):  # table over view / generic
        r = lake.iceberg("POST", f"/namespaces/{ns_path(ns)}/tables", json={"name": name, "schema": SCHEMA})
        assert_iceberg_error(r, 409, "AlreadyExistsException",
                             f"{noun[name]} with same name already exists: {ns[0]}.{name}")

    # Renames into an occupied name are refused the same way.
    assert_iceberg_error(lake.rename(ns, "g", ns, "v"), 409, "AlreadyExistsException",
                         f"Cannot rename {ns[0]}.g to {ns[0]}.v. View already exists")
    assert_iceberg_error(lake.rename(ns, "g", ns, "t"), 409, "AlreadyExistsException",
                         f"Cannot rename {ns[0]}.g to {ns[0]}.t. Table already exists")
    r = lake.iceberg("POST", "/views/rename", json={"source": {"namespace": ns, "name": "v"},
                                                   "destination": {"namespace": ns, "name": "g"}})
    assert_iceberg_error(r, 409, "AlreadyExistsException", f"Cannot rename {ns[0]}.v to {ns[0]}.g. Generic table already exists")

    # A generic table is neither an Iceberg table nor a view to the Iceberg API.
    assert_iceberg_error(lake.iceberg("GET", f"/namespaces/{ns_path(ns)}/tables/g"), 404, "NoSuchTableException")
    assert_iceberg_error(lake.iceberg("GET", f"/namespaces/{ns_path(ns)}/views/g"), 404, "NoSuchViewException")
    assert_iceberg_error(lake.lk("GET", lake.gt(ns, "t")), 404, "NoSuchGenericTableException")
    assert [i["name"] for i in lake.iceberg("GET", f"/namespaces/{ns_path(ns)}/tables").json()["identifiers"]] == ["t"]
    assert [i["name"] for i in lake.iceberg("GET", f"/namespaces/{ns_path(ns)}/views").json()["identifiers"]] == ["v"]
    assert [i["name"] for i in lake.lk("GET", lake.gt(ns)).json()["identifiers"]] == ["g"]


# ---------------------------------------------------------------------------- onto other kinds

def test_renaming_a_table_onto_a_generic_table_names_the_generic_table(lake, ns):
    lake.create_table(ns, "t")
    lake.create(ns, "g", "delta")
    r = lake.iceberg("POST", "/tables/rename", json={"source": {"namespace": ns, "name": "t"},
                                                    "destination": {"namespace": ns, "name": "g"}})
    assert_iceberg_error(r, 409, "AlreadyExistsException", "Generic table already exists")
    assert lake.load(ns, "g")["table"]["format"] == "delta"
    assert lake.iceberg("GET", f"/namespaces/{ns_path(ns)}/tables/t").status_code == 200

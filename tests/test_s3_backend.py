"""The server in front of an S3-compatible store (--object-store s3) it does not own: a
real SeaweedFS started for this module, so the tests may stop, freeze and inspect it.

- the objects a DuckDB table wrote sit at <root>/<bucket>/<key> in the backend and read
  back byte for byte with boto3 straight from SeaweedFS, Parquet included;
- a frozen or stopped backend is a 503 SlowDown with Retry-After, never a hang, never a
  partial object, and the server serves again once the backend is back;
- a kill -9 during uploads loses no acknowledged write and leaves no partial object in
  the backend itself;
- the server refuses to start on a backend it cannot reach, list or write, and says why
  without printing the secret;
- buckets and their attributes live in the metastore: the backend holds objects only."""

import hashlib
import io
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
import pyarrow.parquet as pq
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

import seaweed
from conftest import BOOTSTRAP_SECRET, OPERATORS, Server, advance_clock, catalog_token
from engines import duckdb_from_recipe
from helpers import writers_until_killed


@pytest.fixture(scope="module")
def weed():
    backend = seaweed.SeaweedFS()
    yield backend
    backend.stop()


def ours(server, read_timeout=60):
    return boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                        aws_access_key_id="operator1",
                        aws_secret_access_key=OPERATORS["operator1"],
                        # urllib3 times the sending of a body by the connect timeout
                        config=Config(s3={"addressing_style": "path"}, connect_timeout=60,
                                      read_timeout=read_timeout, retries={"max_attempts": 1}))


def direct_listing(weed, prefix):
    """Every object of the backend under `prefix`, read straight from SeaweedFS."""
    s3 = weed.client()
    found = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=seaweed.BUCKET,
                                                              Prefix=prefix):
        for o in page.get("Contents", []):
            found[o["Key"]] = o["Size"]
    return found


def direct_get(weed, key):
    return weed.client().get_object(Bucket=seaweed.BUCKET, Key=key)["Body"].read()


def test_a_duckdb_table_is_readable_straight_from_the_backend(weed):
    server = Server(object_store="s3", backend=weed)
    try:
        account = server.signup()
        recipe = server.connection(account["api_key"], "duckdb")
        duck = duckdb_from_recipe(recipe)
        duck.execute("CREATE SCHEMA lake.direct")
        duck.execute("CREATE TABLE lake.direct.t AS SELECT range AS id, 'v' || range AS label "
                     "FROM range(50000)")
        duck.execute("INSERT INTO lake.direct.t SELECT range + 50000, 'w' FROM range(1000)")
        assert duck.execute("SELECT count(*) FROM lake.direct.t").fetchall() == [(51000,)]
        duck.close()

        # The table as the catalog describes it, with the credentials it vends.
        credential = account["connection"]["catalog_credential"]
        token = catalog_token(server, credential["client_id"], credential["client_secret"])
        prefix = "w-" + account["warehouse_id"]
        loaded = requests.get(f"{server.catalog}/v1/{prefix}/namespaces/direct/tables/t",
                              headers={"Authorization": "Bearer " + token,
                                       "X-Iceberg-Access-Delegation": "vended-credentials"})
        assert loaded.status_code == 200, loaded.text
        body = loaded.json()
        location = body["metadata"]["location"]
        assert location.startswith("s3://")
        bucket, _, table_path = location[len("s3://"):].partition("/")
        creds = body["config"]
        vended = boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                              aws_access_key_id=creds["s3.access-key-id"],
                              aws_secret_access_key=creds["s3.secret-access-key"],
                              aws_session_token=creds["s3.session-token"],
                              config=Config(s3={"addressing_style": "path"}))

        # One to one: <root>/<bucket>/<key> in the backend, the same bytes as through us.
        mapped = f"{server.store_root}/{bucket}/{table_path}/"
        in_backend = direct_listing(weed, mapped)
        parquet = [k for k in in_backend if k.endswith(".parquet")]
        metadata = [k for k in in_backend if k.endswith(".metadata.json")]
        avro = [k for k in in_backend if k.endswith(".avro")]
        assert parquet and metadata and avro, sorted(in_backend)
        for key in in_backend:
            ours_key = key[len(f"{server.store_root}/{bucket}/"):]
            through = vended.get_object(Bucket=bucket, Key=ours_key)["Body"].read()
            assert direct_get(weed, key) == through, key
        current = body["metadata-location"][len(f"s3://{bucket}/"):]
        assert f"{server.store_root}/{bucket}/{current}" in in_backend

        # The data itself needs nothing of ours: the live data files, read with pyarrow
        # from the backend's bytes, hold the table's rows.
        rows = 0
        for key in parquet:
            rows += pq.read_table(io.BytesIO(direct_get(weed, key))).num_rows
        assert rows == 51000
    finally:
        server.cleanup()


def test_a_frozen_backend_is_slowdown_with_retry_after_and_never_a_partial_object(weed):
    server = Server(object_store="s3", backend=weed, args=["--object-store-stall-seconds", "2"])
    try:
        s3 = ours(server)
        s3.create_bucket(Bucket="frozen")
        s3.put_object(Bucket="frozen", Key="before", Body=b"b" * 1000)
        big = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(600_000))  # 19 MB
        weed.pause()
        try:
            started = time.time()
            for call, has_body in ((lambda: s3.get_object(Bucket="frozen", Key="before"), True),
                                   (lambda: s3.put_object(Bucket="frozen", Key="during",
                                                          Body=big), True),
                                   (lambda: s3.head_object(Bucket="frozen", Key="before"),
                                    False)):
                with pytest.raises(ClientError) as err:
                    call()
                meta = err.value.response["ResponseMetadata"]
                assert meta["HTTPStatusCode"] == 503
                assert meta["HTTPHeaders"].get("retry-after") == "1"
                if has_body:  # HEAD answers carry no body, so no code
                    assert err.value.response["Error"]["Code"] == "SlowDown"
            # Bounded by the stall limit and the read retries, not by the client's patience.
            assert time.time() - started < 45
            # The server itself still answers while its backend is frozen.
            assert requests.get(server.api + "/healthz", timeout=5).status_code == 200
        finally:
            weed.resume()

        # After the freeze: the failed write is absent (never partial), the rest serves.
        with pytest.raises(ClientError) as err:
            s3.head_object(Bucket="frozen", Key="during")
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
        root = f"{server.store_root}/frozen/"
        assert f"{root}during" not in direct_listing(weed, root)
        assert s3.get_object(Bucket="frozen", Key="before")["Body"].read() == b"b" * 1000
        s3.put_object(Bucket="frozen", Key="during", Body=big)
        assert direct_get(weed, f"{root}during") == big
    finally:
        weed.resume()
        server.cleanup()


def test_a_freeze_in_the_middle_of_an_upload_leaves_nothing_behind(weed):
    """The backend freezes while our server is sending it a large body: the client gets
    503, and the backend never shows the object, then or after it thaws."""
    server = Server(object_store="s3", backend=weed, args=["--object-store-stall-seconds", "2"])
    try:
        s3 = ours(server, read_timeout=120)
        s3.create_bucket(Bucket="midway")
        big = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(4_000_000))  # 128 MB
        outcome = {}

        def upload():
            try:
                s3.put_object(Bucket="midway", Key="big", Body=big)
                outcome["status"] = 200
            except ClientError as e:
                outcome["status"] = e.response["ResponseMetadata"]["HTTPStatusCode"]

        t = threading.Thread(target=upload)
        t.start()
        time.sleep(0.8)  # the body is on its way: through us or on to the backend
        weed.pause()
        try:
            t.join(timeout=90)
            assert not t.is_alive()
        finally:
            weed.resume()
        root = f"{server.store_root}/midway/"
        if outcome["status"] == 200:
            # Acknowledged before the freeze: then it is there, whole.
            assert direct_get(weed, f"{root}big") == big
        else:
            assert outcome["status"] == 503
            time.sleep(1)  # let a thawed backend finish anything it had in flight
            listing = direct_listing(weed, root)
            assert f"{root}big" not in listing or direct_get(weed, f"{root}big") == big
            # A 503 leaves the outcome open: a backend thawed later than the second above
            # may still finish the put. Never partial: absent, or whole.
            try:
                s3.head_object(Bucket="midway", Key="big")
            except ClientError:
                pass
            else:
                assert s3.get_object(Bucket="midway", Key="big")["Body"].read() == big
    finally:
        weed.resume()
        server.cleanup()


def body_for(i):
    return (f"object-{i}-".encode() * (3000 + i * 41))[: 60_000 + i * 997]


def test_kill_9_during_uploads_leaves_no_partial_object_in_the_backend(weed):
    server = Server(object_store="s3", backend=weed)
    try:
        s3 = ours(server, read_timeout=30)
        s3.create_bucket(Bucket="crash")
        acknowledged = writers_until_killed(server, s3, "crash", body_for, want=120, timeout=30)
        assert len(acknowledged) >= 40

        # In the backend itself, before any restart: every object is whole.
        root = f"{server.store_root}/crash/"
        listing = direct_listing(weed, root)
        for key, size in listing.items():
            i = int(key[len(root) + 1:])
            assert size == len(body_for(i)), key
        for key, i in acknowledged.items():
            assert listing.get(root + key) == len(body_for(i)), key
            assert direct_get(weed, root + key) == body_for(i)

        server.restart()
        s3 = ours(server)
        for key, i in acknowledged.items():
            assert s3.get_object(Bucket="crash", Key=key)["Body"].read() == body_for(i)
    finally:
        server.cleanup()


def test_a_stopped_backend_is_refused_not_hung_and_the_server_recovers():
    """A backend that refuses connections (stopped) answers 503 at once; started again on
    the same port and data, the same server serves the same objects."""
    backend = seaweed.SeaweedFS()
    server = Server(object_store="s3", backend=backend)
    try:
        s3 = ours(server)
        s3.create_bucket(Bucket="gone")
        s3.put_object(Bucket="gone", Key="k", Body=b"kept")
        backend.pause()
        backend.proc.send_signal(signal.SIGKILL)
        backend.resume()
        backend.proc.wait()
        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(lambda _: _status(lambda: s3.get_object(Bucket="gone",
                                                                            Key="k")), range(4)))
        assert statuses == [503] * 4
        assert _status(lambda: s3.put_object(Bucket="gone", Key="new", Body=b"x")) == 503
        assert requests.get(server.api + "/healthz", timeout=5).status_code == 200
    finally:
        server.cleanup()
        backend.stop()


def _status(call):
    try:
        call()
        return 200
    except ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.mark.parametrize("fault", ["wrong-secret", "no-such-bucket", "nobody-listening"])
def test_the_server_refuses_to_start_on_a_backend_it_cannot_use(weed, fault):
    args, env = weed.server_args("srv-" + uuid.uuid4().hex[:8])
    secret = env["TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY"]
    if fault == "wrong-secret":
        secret = "not-the-secret-" + uuid.uuid4().hex
        env["TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY"] = secret
    elif fault == "no-such-bucket":
        args[args.index("--object-store-bucket") + 1] = "no-such-bucket-" + uuid.uuid4().hex[:6]
    else:
        with __import__("socket").socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        args[args.index("--object-store-endpoint") + 1] = f"http://127.0.0.1:{port}"
    with pytest.raises(RuntimeError) as err:
        Server(object_store="local", extra_env=env, args=args)
    message = str(err.value)
    assert "--object-store s3 (" in message, message  # which setting, which endpoint
    assert {"wrong-secret": "SignatureDoesNotMatch", "no-such-bucket": "NoSuchBucket",
            "nobody-listening": "did not answer"}[fault] in message, message
    assert secret not in message


def test_a_streamed_body_that_fails_verification_never_reaches_the_store(weed):
    """Bodies of 1 MiB and more stream on to the store as they arrive, their last byte
    held back until the checks pass: a wrong Content-MD5, a wrong trailing checksum, or a
    client gone mid-body leave the store without the object (and the old version
    intact)."""
    import base64
    import socket
    server = Server(object_store="s3", backend=weed)
    try:
        s3 = ours(server)
        s3.create_bucket(Bucket="verify")
        s3.put_object(Bucket="verify", Key="kept", Body=b"old")
        body = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(200_000))  # 6.4 MB
        wrong_md5 = base64.b64encode(hashlib.md5(b"other").digest()).decode()
        for key in ("kept", "fresh"):
            with pytest.raises(ClientError) as err:
                s3.put_object(Bucket="verify", Key=key, Body=body, ContentMD5=wrong_md5)
            assert err.value.response["Error"]["Code"] == "BadDigest"
            with pytest.raises(ClientError) as err:
                s3.put_object(Bucket="verify", Key=key, Body=body, ChecksumAlgorithm="CRC32",
                              ChecksumCRC32="AAAAAA==")
            assert err.value.response["Error"]["Code"] in ("BadDigest", "InvalidRequest")

        # A client that sends all but the end of a declared body, then goes away.
        host, port = server.s3[len("http://"):].split(":")
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        req = AWSRequest(method="PUT", url=server.s3 + "/verify/fresh", data=body,
                         headers={"x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
        SigV4Auth(Credentials("operator1", OPERATORS["operator1"]), "s3",
                  "us-east-1").add_auth(req)
        head = (f"PUT /verify/fresh HTTP/1.1\r\nHost: {host}:{port}\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in req.prepare().headers.items())
                + f"Content-Length: {len(body)}\r\n\r\n").encode()
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(head + body[:-10])
            time.sleep(0.5)
        time.sleep(1.5)

        root = f"{server.store_root}/verify/"
        listing = direct_listing(weed, root)
        assert f"{root}fresh" not in listing, listing
        assert direct_get(weed, f"{root}kept") == b"old"
        # And a good one streams through whole.
        s3.put_object(Bucket="verify", Key="fresh", Body=body, ChecksumAlgorithm="CRC32")
        assert direct_get(weed, f"{root}fresh") == body
    finally:
        server.cleanup()


def test_buckets_and_their_attributes_live_in_the_metastore_not_the_backend(weed):
    """A bucket, its tags, CORS and ACL are S3 state the server keeps in its metastore:
    the backend holds only objects, so bucket calls answer with the backend frozen, and
    every replica in front of the same backend will see the same buckets."""
    server = Server(object_store="s3", backend=weed, args=["--object-store-stall-seconds", "2"])
    try:
        s3 = ours(server)
        s3.create_bucket(Bucket="attrs")
        s3.put_bucket_tagging(Bucket="attrs",
                              Tagging={"TagSet": [{"Key": "team", "Value": "data"}]})
        s3.put_bucket_cors(Bucket="attrs", CORSConfiguration={"CORSRules": [
            {"AllowedMethods": ["GET"], "AllowedOrigins": ["https://app.example"]}]})
        s3.put_bucket_acl(Bucket="attrs", ACL="public-read")
        # Nothing of the bucket reaches the backend until an object does.
        assert direct_listing(weed, f"{server.store_root}/") == {}

        weed.pause()
        try:
            s3.head_bucket(Bucket="attrs")
            assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["attrs"]
            assert s3.get_bucket_tagging(Bucket="attrs")["TagSet"] == [
                {"Key": "team", "Value": "data"}]
            assert s3.get_bucket_cors(Bucket="attrs")["CORSRules"][0]["AllowedOrigins"] == [
                "https://app.example"]
        finally:
            weed.resume()

        s3.put_object(Bucket="attrs", Key="k", Body=b"v")
        assert list(direct_listing(weed, f"{server.store_root}/")) == [
            f"{server.store_root}/attrs/k"]
        server.restart()
        s3 = ours(server)
        assert s3.get_bucket_tagging(Bucket="attrs")["TagSet"] == [
            {"Key": "team", "Value": "data"}]
        grants = s3.get_bucket_acl(Bucket="attrs")["Grants"]
        assert any(g["Grantee"].get("URI", "").endswith("AllUsers") for g in grants)
        # Deleting needs an empty bucket, as the backend says; then the name is free.
        with pytest.raises(ClientError) as err:
            s3.delete_bucket(Bucket="attrs")
        assert err.value.response["Error"]["Code"] == "BucketNotEmpty"
        s3.delete_object(Bucket="attrs", Key="k")
        s3.delete_bucket(Bucket="attrs")
        with pytest.raises(ClientError) as err:
            s3.head_bucket(Bucket="attrs")
        assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
        s3.create_bucket(Bucket="attrs")
        with pytest.raises(ClientError) as err:
            s3.get_bucket_tagging(Bucket="attrs")
        assert err.value.response["Error"]["Code"] == "NoSuchTagSet"
    finally:
        weed.resume()
        server.cleanup()


def test_metering_reads_counters_kept_as_objects_change_and_relists_daily(weed):
    """Metering no longer lists the backend every hour (a request per 1,000 keys): the
    server counts each bucket's bytes and objects as they are written and deleted, and
    lists only once a day to correct the counters. An object written to the backend
    behind our back shows only after that listing."""
    server = Server(object_store="s3", backend=weed,
                    extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                               "TABLEMERE_TEST_CLOCK": "1"})
    try:
        account = server.signup()
        key, wid = account["api_key"], account["warehouse_id"]
        cred = server.connection(key)["catalog_credential"]
        s3 = boto3.client("s3", endpoint_url=server.s3, aws_access_key_id=cred["client_id"],
                          aws_secret_access_key=cred["client_secret"], region_name="us-east-1")
        bucket = f"b-{wid}"

        def meter():
            r = requests.post(server.api + "/internal/usage",
                              headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                              json={"warehouse_id": wid})
            assert r.status_code == 200, r.text
            return r.json()["blob_bytes"], r.json()["blob_objects"]

        s3.put_object(Bucket=bucket, Key="a.bin", Body=b"a" * 1000)
        assert meter() == (1000, 1)  # the first metering lists, once
        s3.put_object(Bucket=bucket, Key="b.bin", Body=b"b" * 300)
        s3.put_object(Bucket=bucket, Key="a.bin", Body=b"a" * 100)  # replaces 1000 bytes
        s3.delete_object(Bucket=bucket, Key="b.bin")
        s3.delete_object(Bucket=bucket, Key="never-there.bin")
        weed.client().put_object(Bucket=seaweed.BUCKET, Key=f"{server.store_root}/{bucket}/x.bin",
                                 Body=b"x" * 50)
        assert meter() == (100, 1)  # counted, not listed: the object behind our back is unseen
        advance_clock(server, 25 * 3600)
        assert meter() == (150, 2)  # a day on, the listing corrects the counters
    finally:
        server.cleanup()

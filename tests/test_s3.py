"""Black-box tests of Tablemere's S3 listener: every operation, checksums, aws-chunked
bodies, Expect: 100-continue, presigned URLs, the three identity kinds (operator users,
warehouse identities, vended table sessions) and write atomicity.

Clients are the real ones (boto3, the AWS CLI); where a client cannot produce the wire
form under test (aws-chunked variants, CRC32C/CRC64NVME without awscrt, truncated
bodies) the request is built here and signed with botocore's SigV4 signer."""

import base64
import datetime
import hashlib
import hmac
import http.client
import json
import os
import socket
import subprocess
import time
import uuid
import xml.etree.ElementTree as ET
import zlib
from concurrent.futures import ThreadPoolExecutor
from unittest import mock
from urllib.parse import quote, urlsplit

import boto3
import botocore.auth
import pytest
import requests
from botocore import UNSIGNED
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from conftest import OPERATORS, Server, catalog_token

REGION = "us-east-1"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
MIB = 1024 * 1024
S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
OP1 = ("operator1", OPERATORS["operator1"])  # credentials for raw signed requests


# =====================================================================================
# Small helpers
# =====================================================================================

def long_key(n):
    """A key of exactly `n` bytes in segments of at most 100 (a file-path store holds it)."""
    parts, left = [], n
    while left > 101:
        parts.append("k" * 100)
        left -= 101
    return "/".join(parts + ["k" * left])


def uniq(prefix="k"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def client(server, key, secret, token=None, **config):
    # No retries: a retried request would hide a failed or stalled first attempt.
    cfg = Config(s3={"addressing_style": "path"},
                 retries={"total_max_attempts": 1, "mode": "standard"}, **config)
    return boto3.client("s3", endpoint_url=server.s3, aws_access_key_id=key,
                        aws_secret_access_key=secret, aws_session_token=token,
                        region_name=REGION, config=cfg)


def v4_client(server, key, secret, token=None, **config):
    return client(server, key, secret, token, signature_version="s3v4", **config)


def s3_error(fn, *args, **kwargs):
    """Runs a boto3 call that must fail; returns (code, http status, message)."""
    with pytest.raises(ClientError) as info:
        fn(*args, **kwargs)
    r = info.value.response
    return r["Error"]["Code"], r["ResponseMetadata"]["HTTPStatusCode"], r["Error"].get("Message", "")


def assert_s3_error(code, status, fn, *args, **kwargs):
    got = s3_error(fn, *args, **kwargs)
    assert got[:2] == (code, status), got
    return got[2]


def assert_missing(s3, bucket, key):
    assert s3_error(s3.head_object, Bucket=bucket, Key=key)[:2] == ("404", 404)


def xml_error_code(body: bytes) -> str:
    return ET.fromstring(body).findtext("Code")


def poll_until(predicate, timeout=10.0, what="condition"):
    """Polls `predicate` until it returns a truthy value or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


# =====================================================================================
# Checksums not in the standard library (botocore needs awscrt for these)
# =====================================================================================

def _reflected_table(poly):
    table = []
    for i in range(256):
        r = i
        for _ in range(8):
            r = (r >> 1) ^ (poly if r & 1 else 0)
        table.append(r)
    return table


_CRC32C_TABLE = _reflected_table(0x82F63B78)
_CRC64NVME_TABLE = _reflected_table(0x9A6C9329AC4BC9B5)


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _CRC32C_TABLE[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


def crc64nvme(data: bytes) -> int:
    mask = 0xFFFFFFFFFFFFFFFF
    crc = mask
    for byte in data:
        crc = (crc >> 8) ^ _CRC64NVME_TABLE[(crc ^ byte) & 0xFF]
    return crc ^ mask


# Standard check values, so a mistake here cannot masquerade as a server bug.
assert crc32c(b"123456789") == 0xE3069283
assert crc64nvme(b"123456789") == 0xAE8B14860A799888

CHECKSUMS = {
    "CRC32": lambda d: b64(zlib.crc32(d).to_bytes(4, "big")),
    "CRC32C": lambda d: b64(crc32c(d).to_bytes(4, "big")),
    "CRC64NVME": lambda d: b64(crc64nvme(d).to_bytes(8, "big")),
    "SHA1": lambda d: b64(hashlib.sha1(d).digest()),
    "SHA256": lambda d: b64(hashlib.sha256(d).digest()),
}


# =====================================================================================
# Raw signed requests (botocore's SigV4 signer, our own wire)
# =====================================================================================

class _FixedPayloadSigner(botocore.auth.S3SigV4Auth):
    """botocore's S3 signer with the x-amz-content-sha256 value chosen by the test
    (a hex digest, UNSIGNED-PAYLOAD or one of the STREAMING-* forms)."""

    def __init__(self, credentials, payload_hash):
        super().__init__(credentials, "s3", REGION)
        self._payload_hash = payload_hash

    def payload(self, request):
        return self._payload_hash


class Signed:
    """Headers of one signed request plus what chunk signing needs."""

    def __init__(self, headers, secret):
        self.headers = headers
        self.amz_date = headers["X-Amz-Date"]
        self.seed = headers["Authorization"].rsplit("Signature=", 1)[1]
        self.scope = f"{self.amz_date[:8]}/{REGION}/s3/aws4_request"
        key = ("AWS4" + secret).encode()
        for part in (self.amz_date[:8], REGION, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        self.signing_key = key


def object_url(server, bucket, key="", query=""):
    url = f"{server.s3}/{bucket}"
    if key:
        url += "/" + quote(key, safe="/~")
    return url + ("?" + query if query else "")


def sign(method, url, creds, headers=None, payload_hash=EMPTY_SHA256):
    """creds = (access_key, secret[, session_token]). Host is signed from the URL."""
    key, secret, token = (tuple(creds) + (None,))[:3]
    request = AWSRequest(method=method, url=url, headers=dict(headers or {}))
    _FixedPayloadSigner(Credentials(key, secret, token), payload_hash).add_auth(request)
    return Signed(dict(request.headers.items()), secret)


def http_send(method, url, headers, body=b"", outer_chunks=None):
    """Sends one request with http.client. With `outer_chunks`, the body goes out with
    HTTP Transfer-Encoding: chunked, split at exactly those pieces."""
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    target = u.path + ("?" + u.query if u.query else "")
    try:
        if outer_chunks is not None:
            conn.request(method, target, body=iter(outer_chunks),
                         headers={**headers, "Transfer-Encoding": "chunked"}, encode_chunked=True)
        else:
            conn.request(method, target, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def signed_send(method, url, creds, body=b"", headers=None, payload_hash=None):
    payload_hash = payload_hash or hashlib.sha256(body).hexdigest()
    s = sign(method, url, creds, headers, payload_hash)
    return http_send(method, url, s.headers, body)


def split_every(data: bytes, n: int):
    return [data[i:i + n] for i in range(0, len(data), n)] or [b""]


# ---- aws-chunked -----------------------------------------------------------------

STREAMING_SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
STREAMING_SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"


def _hmac_hex(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def aws_chunked_body(data, mode, signed=None, chunk_size=8192, trailer=None, tamper=None):
    """Frames `data` as aws-chunked per AWS's streaming SigV4 spec.
    mode: one of the STREAMING_* values; signed: the Signed seed (signed modes);
    trailer: (header name, value) for the -TRAILER modes; tamper: "chunk" flips a byte
    of the first chunk after signing it, "trailer-signature" sends a wrong trailer
    signature."""
    chunk_signed = mode.startswith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
    out = bytearray()
    previous = signed.seed if chunk_signed else None
    for i, piece in enumerate(split_every(data, chunk_size) + [b""] if data else [b""]):
        if chunk_signed:
            sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", signed.amz_date, signed.scope, previous,
                             EMPTY_SHA256, hashlib.sha256(piece).hexdigest()])
            previous = _hmac_hex(signed.signing_key, sts)
            out += f"{len(piece):x};chunk-signature={previous}\r\n".encode()
        else:
            out += f"{len(piece):x}\r\n".encode()
        if tamper == "chunk" and i == 0 and piece:
            piece = bytes([piece[0] ^ 0x01]) + piece[1:]
        if piece:
            out += piece + b"\r\n"
    if trailer is None:
        out += b"\r\n"
        return bytes(out)
    name, value = trailer
    out += f"{name}:{value}\r\n".encode()
    if chunk_signed:
        sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", signed.amz_date, signed.scope, previous,
                         hashlib.sha256(f"{name}:{value}\n".encode()).hexdigest()])
        signature = _hmac_hex(signed.signing_key, sts)
        if tamper == "trailer-signature":
            signature = _hmac_hex(signed.signing_key, sts + "x")
        out += f"x-amz-trailer-signature:{signature}\r\n".encode()
    out += b"\r\n"
    return bytes(out)


def aws_chunked_put(url, creds, data, mode, checksum="CRC32", outer_chunks=None, tamper=None,
                    trailer_value=None, extra_headers=None):
    """PUTs `data` with an aws-chunked body; returns (status, headers, body)."""
    has_trailer = mode.endswith("-TRAILER")
    headers = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(data)),
               **(extra_headers or {})}
    trailer = None
    if has_trailer:
        header = "x-amz-checksum-" + checksum.lower()
        headers["x-amz-trailer"] = header
        headers["x-amz-sdk-checksum-algorithm"] = checksum
        trailer = (header, trailer_value or CHECKSUMS[checksum](data))
    s = sign("PUT", url, creds, headers, mode)
    body = aws_chunked_body(data, mode, s, trailer=trailer, tamper=tamper)
    if outer_chunks:
        # Split the aws-chunked stream at awkward offsets inside HTTP chunks.
        return http_send("PUT", url, s.headers, outer_chunks=split_every(body, outer_chunks))
    return http_send("PUT", url, s.headers, body)


# ---- a raw socket, for what http.client cannot do --------------------------------

class RawConn:
    def __init__(self, url, timeout=10):
        u = urlsplit(url)
        self.host, self.port = u.hostname, u.port
        self.sock = socket.create_connection((self.host, self.port), timeout=timeout)
        self.buf = b""

    def send_head(self, method, target, headers):
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())

    def read_head(self):
        """Reads one response head; returns (status, headers)."""
        while b"\r\n\r\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed before a response head: %r" % self.buf)
            self.buf += data
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        return int(lines[0].split()[1]), headers

    def read_body(self, headers):
        n = int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            data = self.sock.recv(65536)
            if not data:
                break
            self.buf += data
        body, self.buf = self.buf[:n], self.buf[n:]
        return body

    def close(self):
        self.sock.close()


# =====================================================================================
# Fixtures
# =====================================================================================

@pytest.fixture(scope="module")
def op1(server):
    return v4_client(server, *OP1)


@pytest.fixture(scope="module")
def op2(server):
    return v4_client(server, "operator2", OPERATORS["operator2"])


@pytest.fixture(scope="module")
def bucket(op1):
    name = uniq("tm")
    op1.create_bucket(Bucket=name)
    return name


def put(s3, bucket, key, body=b"x", **kw):
    return s3.put_object(Bucket=bucket, Key=key, Body=body, **kw)


def put_empty(server, creds, bucket, key, **kw):
    """PUTs a 0-byte object through a client of its own. The server answers an empty
    PUT that carries Expect: 100-continue without a 100 and keeps the connection; botocore
    then misreads the next Expect request on that pooled connection (see
    TestExpectContinue.test_empty_put_does_not_stall_the_next_put), so shared clients
    must not see empty PUTs."""
    return put(v4_client(server, *creds), bucket, key, b"", **kw)


def get_body(s3, bucket, key, **kw):
    return s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()


class Catalog:
    """The Iceberg REST catalog, just enough to create tables and get vended sessions."""

    def __init__(self, server, warehouse_id, token):
        self.server = server
        self.bucket = "w-" + warehouse_id
        self.base = f"{server.catalog}/v1/w-{warehouse_id}"
        self.headers = {"Authorization": "Bearer " + token,
                        "X-Iceberg-Access-Delegation": "vended-credentials"}

    def ensure_namespace(self, ns):
        r = requests.post(self.base + "/namespaces", json={"namespace": [ns]}, headers=self.headers)
        assert r.status_code in (200, 409), r.text

    def create_table(self, ns, name):
        self.ensure_namespace(ns)
        r = requests.post(f"{self.base}/namespaces/{ns}/tables", headers=self.headers, json={
            "name": name,
            "schema": {"type": "struct", "schema-id": 0,
                       "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}})
        assert r.status_code == 200, r.text
        # The session's scope is the table location; the tests rely on the default one.
        assert r.json()["metadata"]["location"] == f"s3://{self.bucket}/{ns}/{name}"
        assert r.json()["config"]["s3.endpoint"] == self.server.s3
        return session_of(r.json())

    def load_table(self, ns, name):
        r = requests.get(f"{self.base}/namespaces/{ns}/tables/{name}", headers=self.headers)
        assert r.status_code == 200, r.text
        return session_of(r.json())


def session_of(load_result):
    c = load_result["config"]
    return (c["s3.access-key-id"], c["s3.secret-access-key"], c["s3.session-token"])


class Lake:
    """One account's warehouse: ids, bucket names, its two S3 identities and sessions."""

    def __init__(self, server, signup):
        self.server = server
        self.signup = signup
        conn = signup["connection"]
        self.id = signup["warehouse_id"]
        self.table_bucket = "w-" + self.id
        self.blob_bucket = "b-" + self.id
        cred = conn["catalog_credential"]
        self.rw = (cred["client_id"], cred["client_secret"])
        self.s3 = v4_client(server, *self.rw)
        self.catalog = Catalog(server, self.id, catalog_token(server, *self.rw))
        self._ro = None

    @property
    def ro(self):
        """The read-only identity, reached through an agent granted `read`."""
        if self._ro is None:
            org = self.signup["organization"]["org_id"]
            r = requests.post(f"{self.server.api}/v1/orgs/{org}/agents",
                              headers={"Authorization": "Bearer " + self.signup["api_key"]},
                              json={"name": uniq("reader"),
                                    "grants": [{"warehouse_id": self.id, "level": "read"}]})
            assert r.status_code == 201, r.text
            conn = self.server.connection(r.json()["api_key"], warehouse_id=self.id)
            cred = conn["catalog_credential"]
            self._ro = (cred["client_id"], cred["client_secret"])
        return self._ro


@pytest.fixture(scope="module")
def lake(server, account):
    return Lake(server, account)


@pytest.fixture(scope="module")
def other_lake(server):
    return Lake(server, server.signup())


@pytest.fixture(scope="module")
def tables(lake):
    """Two tables in one namespace (`t` and `t2`: t2's prefix extends t's name) and
    their vended sessions."""
    ns = uniq("ns").replace("-", "_")
    return {"ns": ns, "t": lake.catalog.create_table(ns, "t"),
            "t2": lake.catalog.create_table(ns, "t2")}


# =====================================================================================
# Buckets
# =====================================================================================

class TestBuckets:
    def test_create_list_head_location_delete(self, op1):
        name = uniq("bkt")
        r = op1.create_bucket(Bucket=name)
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert r["Location"] == "/" + name
        assert name in [b["Name"] for b in op1.list_buckets()["Buckets"]]
        head = op1.head_bucket(Bucket=name)
        assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == REGION
        assert op1.get_bucket_location(Bucket=name)["LocationConstraint"] is None
        assert op1.delete_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 204
        assert name not in [b["Name"] for b in op1.list_buckets()["Buckets"]]
        assert s3_error(op1.head_bucket, Bucket=name)[:2] == ("404", 404)

    def test_missing_bucket(self, op1):
        assert_s3_error("NoSuchBucket", 404, op1.list_objects_v2, Bucket=uniq("nope"))
        assert_s3_error("NoSuchBucket", 404, op1.delete_bucket, Bucket=uniq("nope"))

    def test_create_twice(self, op1, op2, bucket):
        # us-east-1: the owner creating it again succeeds and resets its ACL (other regions
        # answer 409 BucketAlreadyOwnedByYou).
        op1.put_bucket_acl(Bucket=bucket, ACL="public-read")
        op1.create_bucket(Bucket=bucket)
        assert len(op1.get_bucket_acl(Bucket=bucket)["Grants"]) == 1
        assert_s3_error("BucketAlreadyExists", 409, op2.create_bucket, Bucket=bucket)

    def test_other_operator_cannot_see_or_touch(self, op1, op2, bucket):
        put(op1, bucket, "owned.txt", b"mine")
        assert bucket not in [b["Name"] for b in op2.list_buckets()["Buckets"]]
        assert s3_error(op2.head_bucket, Bucket=bucket)[:2] == ("403", 403)
        assert_s3_error("AccessDenied", 403, op2.list_objects_v2, Bucket=bucket)
        assert_s3_error("AccessDenied", 403, op2.get_object, Bucket=bucket, Key="owned.txt")
        assert_s3_error("AccessDenied", 403, op2.put_object, Bucket=bucket, Key="x", Body=b"x")
        assert_s3_error("AccessDenied", 403, op2.delete_object, Bucket=bucket, Key="owned.txt")
        assert_s3_error("AccessDenied", 403, op2.delete_bucket, Bucket=bucket)
        assert get_body(op1, bucket, "owned.txt") == b"mine"

    def test_deleted_name_is_free_for_another_operator(self, op1, op2):
        name = uniq("reuse")
        op1.create_bucket(Bucket=name)
        op1.delete_bucket(Bucket=name)
        op2.create_bucket(Bucket=name)
        put(op2, name, "k", b"op2's now")
        assert_s3_error("AccessDenied", 403, op1.get_object, Bucket=name, Key="k")
        assert get_body(op2, name, "k") == b"op2's now"

    def test_bucket_not_empty(self, op1):
        name = uniq("full")
        op1.create_bucket(Bucket=name)
        put(op1, name, "a")
        assert_s3_error("BucketNotEmpty", 409, op1.delete_bucket, Bucket=name)
        op1.delete_object(Bucket=name, Key="a")
        op1.delete_bucket(Bucket=name)

    @pytest.mark.parametrize("name", ["w-reserved1", "b-reserved1", "Upper-Case", "ab", "bad_name"])
    def test_invalid_or_reserved_names(self, op1, name):
        assert_s3_error("InvalidBucketName", 400, op1.create_bucket, Bucket=name)

    def test_operator_cannot_see_warehouse_buckets(self, op1, lake):
        names = [b["Name"] for b in op1.list_buckets()["Buckets"]]
        assert lake.table_bucket not in names and lake.blob_bucket not in names
        assert_s3_error("AccessDenied", 403, op1.list_objects_v2, Bucket=lake.blob_bucket)


# =====================================================================================
# Objects: put, get, head, delete, metadata, ranges, conditions, copy
# =====================================================================================

class TestObjects:
    def test_put_get_head_delete(self, op1, bucket):
        body = os.urandom(3000)
        r = put(op1, bucket, "obj/one.bin", body, ContentType="application/x-test",
                Metadata={"color": "blue", "Mixed-Case": "Value With Spaces"},
                CacheControl="max-age=60", ContentDisposition="attachment")
        assert r["ETag"] == f'"{md5_hex(body)}"'
        got = op1.get_object(Bucket=bucket, Key="obj/one.bin")
        assert got["Body"].read() == body
        assert got["ETag"] == f'"{md5_hex(body)}"'
        assert got["ContentType"] == "application/x-test"
        assert got["ContentLength"] == 3000
        assert got["Metadata"] == {"color": "blue", "mixed-case": "Value With Spaces"}
        assert got["CacheControl"] == "max-age=60"
        assert got["ContentDisposition"] == "attachment"
        head = op1.head_object(Bucket=bucket, Key="obj/one.bin")
        assert head["ContentLength"] == 3000
        assert head["ETag"] == r["ETag"]
        assert head["Metadata"]["color"] == "blue"
        assert head["AcceptRanges"] == "bytes"
        assert abs(head["LastModified"].timestamp() - time.time()) < 60
        assert op1.delete_object(Bucket=bucket, Key="obj/one.bin")["ResponseMetadata"][
            "HTTPStatusCode"] == 204
        assert_missing(op1, bucket, "obj/one.bin")
        assert_s3_error("NoSuchKey", 404, op1.get_object, Bucket=bucket, Key="obj/one.bin")
        # Deleting a missing key succeeds, as in S3.
        op1.delete_object(Bucket=bucket, Key="obj/one.bin")

    def test_default_content_type_and_empty_object(self, op1, server, bucket):
        put_empty(server, OP1, bucket, "empty")
        got = op1.get_object(Bucket=bucket, Key="empty")
        assert got["Body"].read() == b""
        assert got["ContentLength"] == 0
        assert got["ETag"] == f'"{md5_hex(b"")}"'
        assert got["ContentType"] == "binary/octet-stream"

    def test_overwrite_replaces_body_and_metadata(self, op1, bucket):
        put(op1, bucket, "over", b"first", Metadata={"v": "1"})
        put(op1, bucket, "over", b"second!", Metadata={"w": "2"})
        got = op1.get_object(Bucket=bucket, Key="over")
        assert got["Body"].read() == b"second!"
        assert got["Metadata"] == {"w": "2"}

    def test_odd_keys_round_trip(self, op1, bucket, server):
        keys = ["dir/a b+c~!*()'=&ü.txt", "x%41y", "sp ace/", "d/./e/../f", "a//b", "日本語/キー"]
        if not server.keeps_odd_keys:
            # A store that keeps keys as file paths refuses what it would fold, typed and
            # storing nothing; the rest round-trips.
            for k in ("sp ace/", "d/./e/../f", "a//b"):
                assert_s3_error("InvalidArgument", 400, op1.put_object, Bucket=bucket,
                                Key="odd/" + k, Body=k.encode())
                assert_missing(op1, bucket, "odd/" + k)
            keys = [k for k in keys if k not in ("sp ace/", "d/./e/../f", "a//b")]
        for k in keys:
            put(op1, bucket, "odd/" + k, k.encode())
        for k in keys:
            assert get_body(op1, bucket, "odd/" + k) == k.encode()
        listed = [o["Key"] for o in op1.list_objects_v2(Bucket=bucket, Prefix="odd/")["Contents"]]
        assert sorted(listed) == sorted("odd/" + k for k in keys)

    def test_response_header_overrides(self, op1, bucket):
        put(op1, bucket, "ovr", b"data", ContentType="text/plain")
        got = op1.get_object(Bucket=bucket, Key="ovr", ResponseContentType="application/json",
                             ResponseContentDisposition="inline")
        assert got["ContentType"] == "application/json"
        assert got["ContentDisposition"] == "inline"

    def test_put_into_missing_bucket(self, op1):
        assert_s3_error("NoSuchBucket", 404, op1.put_object, Bucket=uniq("gone"), Key="k", Body=b"x")


RANGE_BODY = b"0123456789"


@pytest.fixture(scope="module")
def range_key(op1, bucket):
    put(op1, bucket, "range.txt", RANGE_BODY)
    return "range.txt"


class TestRanges:
    @pytest.mark.parametrize("spec,expected,content_range", [
        ("bytes=2-5", b"2345", "bytes 2-5/10"),
        ("bytes=7-", b"789", "bytes 7-9/10"),
        ("bytes=-3", b"789", "bytes 7-9/10"),
        ("bytes=0-0", b"0", "bytes 0-0/10"),
        ("bytes=8-100", b"89", "bytes 8-9/10"),
        ("bytes=-100", RANGE_BODY, "bytes 0-9/10"),
    ])
    def test_range(self, op1, bucket, range_key, spec, expected, content_range):
        r = op1.get_object(Bucket=bucket, Key=range_key, Range=spec)
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert r["Body"].read() == expected
        assert r["ContentRange"] == content_range
        assert r["ContentLength"] == len(expected)

    def test_head_with_range(self, op1, bucket, range_key):
        r = op1.head_object(Bucket=bucket, Key=range_key, Range="bytes=1-4")
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert r["ContentLength"] == 4
        assert r["ContentRange"] == "bytes 1-4/10"

    @pytest.mark.parametrize("spec", ["bytes=5-2", "lines=1-2", "bytes=1-2,4-5"])
    def test_unparseable_range_is_ignored(self, op1, bucket, range_key, spec):
        r = op1.get_object(Bucket=bucket, Key=range_key, Range=spec)
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert r["Body"].read() == RANGE_BODY

    @pytest.mark.parametrize("spec", ["bytes=10-", "bytes=100-200", "bytes=-0"])
    def test_unsatisfiable(self, op1, bucket, range_key, spec):
        assert_s3_error("InvalidRange", 416, op1.get_object, Bucket=bucket, Key=range_key, Range=spec)

    def test_range_on_empty_object(self, op1, server, bucket):
        put_empty(server, OP1, bucket, "range-empty")
        assert_s3_error("InvalidRange", 416, op1.get_object, Bucket=bucket, Key="range-empty",
                        Range="bytes=0-0")


@pytest.fixture(scope="module")
def obj(op1, bucket):
    r = put(op1, bucket, "cond.txt", b"conditional")
    head = op1.head_object(Bucket=bucket, Key="cond.txt")
    return {"etag": r["ETag"], "modified": head["LastModified"]}


class TestConditionalGet:
    def test_if_match(self, op1, bucket, obj):
        assert get_body(op1, bucket, "cond.txt", IfMatch=obj["etag"]) == b"conditional"
        assert_s3_error("PreconditionFailed", 412, op1.get_object, Bucket=bucket, Key="cond.txt",
                        IfMatch='"0123456789abcdef0123456789abcdef"')

    def test_if_none_match(self, op1, bucket, obj):
        assert s3_error(op1.get_object, Bucket=bucket, Key="cond.txt",
                        IfNoneMatch=obj["etag"])[:2] == ("304", 304)
        assert s3_error(op1.head_object, Bucket=bucket, Key="cond.txt",
                        IfNoneMatch=obj["etag"])[:2] == ("304", 304)
        assert get_body(op1, bucket, "cond.txt", IfNoneMatch='"other"') == b"conditional"

    def test_if_modified_since(self, op1, bucket, obj):
        later = obj["modified"] + datetime.timedelta(hours=1)
        earlier = obj["modified"] - datetime.timedelta(hours=1)
        assert s3_error(op1.get_object, Bucket=bucket, Key="cond.txt",
                        IfModifiedSince=later)[:2] == ("304", 304)
        assert get_body(op1, bucket, "cond.txt", IfModifiedSince=earlier) == b"conditional"

    def test_if_unmodified_since(self, op1, bucket, obj):
        earlier = obj["modified"] - datetime.timedelta(hours=1)
        later = obj["modified"] + datetime.timedelta(hours=1)
        assert_s3_error("PreconditionFailed", 412, op1.get_object, Bucket=bucket, Key="cond.txt",
                        IfUnmodifiedSince=earlier)
        assert get_body(op1, bucket, "cond.txt", IfUnmodifiedSince=later) == b"conditional"

    def test_precedence_between_etag_and_date_conditions(self, op1, bucket, obj):
        earlier = obj["modified"] - datetime.timedelta(hours=1)
        later = obj["modified"] + datetime.timedelta(hours=1)
        # If-Match holds → If-Unmodified-Since is not consulted (RFC 7232 §6).
        assert get_body(op1, bucket, "cond.txt", IfMatch=obj["etag"],
                        IfUnmodifiedSince=earlier) == b"conditional"
        # If-None-Match holds → If-Modified-Since is not consulted.
        assert get_body(op1, bucket, "cond.txt", IfNoneMatch='"other"',
                        IfModifiedSince=later) == b"conditional"

    def test_conditional_put(self, op1, bucket):
        key = uniq("cput")
        put(op1, bucket, key, b"v1", IfNoneMatch="*")
        assert_s3_error("PreconditionFailed", 412, op1.put_object, Bucket=bucket, Key=key,
                        Body=b"v2", IfNoneMatch="*")
        assert get_body(op1, bucket, key) == b"v1"


class TestCopy:
    def test_copy_keeps_metadata(self, op1, bucket):
        put(op1, bucket, "src.txt", b"copy me", ContentType="text/x-src", Metadata={"a": "1"})
        r = op1.copy_object(Bucket=bucket, Key="dst.txt", CopySource={"Bucket": bucket, "Key": "src.txt"})
        assert r["CopyObjectResult"]["ETag"] == f'"{md5_hex(b"copy me")}"'
        got = op1.get_object(Bucket=bucket, Key="dst.txt")
        assert got["Body"].read() == b"copy me"
        assert got["ContentType"] == "text/x-src"
        assert got["Metadata"] == {"a": "1"}

    def test_copy_replace_metadata(self, op1, bucket):
        put(op1, bucket, "src2.txt", b"replace me", ContentType="text/x-old", Metadata={"old": "1"})
        op1.copy_object(Bucket=bucket, Key="dst2.txt", CopySource=f"{bucket}/src2.txt",
                        MetadataDirective="REPLACE", ContentType="text/x-new", Metadata={"new": "2"})
        got = op1.get_object(Bucket=bucket, Key="dst2.txt")
        assert got["Body"].read() == b"replace me"
        assert got["ContentType"] == "text/x-new"
        assert got["Metadata"] == {"new": "2"}
        # The source is untouched.
        assert op1.head_object(Bucket=bucket, Key="src2.txt")["Metadata"] == {"old": "1"}

    def test_copy_onto_itself(self, op1, bucket):
        put(op1, bucket, "self.txt", b"me", Metadata={"a": "1"})
        assert_s3_error("InvalidRequest", 400, op1.copy_object, Bucket=bucket, Key="self.txt",
                        CopySource=f"{bucket}/self.txt")
        op1.copy_object(Bucket=bucket, Key="self.txt", CopySource=f"{bucket}/self.txt",
                        MetadataDirective="REPLACE", Metadata={"b": "2"})
        got = op1.get_object(Bucket=bucket, Key="self.txt")
        assert got["Metadata"] == {"b": "2"} and got["Body"].read() == b"me"

    def test_copy_key_with_special_characters(self, op1, bucket):
        src = "copy src/a+b&c ü.txt"
        put(op1, bucket, src, b"special")
        op1.copy_object(Bucket=bucket, Key="copy dst/ü+.txt", CopySource={"Bucket": bucket, "Key": src})
        assert get_body(op1, bucket, "copy dst/ü+.txt") == b"special"

    def test_copy_missing_source_and_conditions(self, op1, bucket):
        assert_s3_error("NoSuchKey", 404, op1.copy_object, Bucket=bucket, Key="d",
                        CopySource=f"{bucket}/{uniq('missing')}")
        put(op1, bucket, "csrc", b"x")
        assert_s3_error("PreconditionFailed", 412, op1.copy_object, Bucket=bucket, Key="cdst",
                        CopySource=f"{bucket}/csrc", CopySourceIfMatch='"nope"')
        assert_missing(op1, bucket, "cdst")

    def test_copy_from_bucket_of_other_operator(self, op1, op2, bucket):
        put(op1, bucket, "private", b"secret")
        other = uniq("op2b")
        op2.create_bucket(Bucket=other)
        assert_s3_error("AccessDenied", 403, op2.copy_object, Bucket=other, Key="stolen",
                        CopySource=f"{bucket}/private")


class TestDeleteObjects:
    def test_delete_objects_with_xml_special_keys(self, op1, bucket):
        keys = ["del/a&b", "del/<c>", "del/plain", "del/quote\"'", "del/ü"]
        for k in keys:
            put(op1, bucket, k)
        r = op1.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys]})
        assert sorted(d["Key"] for d in r["Deleted"]) == sorted(keys)
        assert "Errors" not in r
        assert op1.list_objects_v2(Bucket=bucket, Prefix="del/")["KeyCount"] == 0

    def test_quiet_mode(self, op1, bucket):
        keys = [f"quiet/{i}" for i in range(3)]
        for k in keys:
            put(op1, bucket, k)
        r = op1.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys] +
                                                      [{"Key": "quiet/never-existed"}],
                                                      "Quiet": True})
        assert "Deleted" not in r and "Errors" not in r
        assert op1.list_objects_v2(Bucket=bucket, Prefix="quiet/")["KeyCount"] == 0

    def test_bad_content_md5(self, op1, server, bucket):
        put(op1, bucket, "del-md5", b"kept")
        xml = b"<Delete><Object><Key>del-md5</Key></Object></Delete>"
        status, _, body = signed_send("POST", object_url(server, bucket, query="delete="), OP1, xml,
                                      headers={"Content-MD5": b64(hashlib.md5(b"other").digest())})
        assert status == 400 and xml_error_code(body) == "BadDigest"
        assert get_body(op1, bucket, "del-md5") == b"kept"

    def test_malformed_body(self, server, bucket):
        url = object_url(server, bucket, query="delete=")
        status, _, body = signed_send("POST", url, OP1, b"<Delete><Object><Key>a</Key>")
        assert status == 400 and xml_error_code(body) == "MalformedXML"


# =====================================================================================
# Listing
# =====================================================================================

@pytest.fixture(scope="module")
def keys(op1, bucket):
    """25 one-byte objects under a fresh prefix."""
    prefix = uniq("list") + "/"
    keys = [f"{prefix}k{i:02d}" for i in range(25)]
    for k in keys:
        put(op1, bucket, k)
    return prefix, keys


SPECIAL_KEYS = ["a+b", "sp ace", "ü/é", "pct%2F", "amp&lt", "tab\tx", "x=y?z#"]


@pytest.fixture(scope="module")
def special(op1, bucket):
    """Keys that only survive encoding-type=url if the server encodes them right."""
    p = uniq("enc") + "/"
    for k in SPECIAL_KEYS:
        put(op1, bucket, p + k)
    return p


class TestListing:
    def test_v2_paging_with_continuation(self, op1, bucket, keys):
        prefix, expected = keys
        seen, token, pages = [], None, 0
        while True:
            kw = {"ContinuationToken": token} if token else {}
            r = op1.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=7, **kw)
            pages += 1
            assert r["KeyCount"] == len(r["Contents"]) <= 7
            assert r["MaxKeys"] == 7
            seen += [o["Key"] for o in r["Contents"]]
            if not r["IsTruncated"]:
                assert "NextContinuationToken" not in r
                break
            token = r["NextContinuationToken"]
        assert seen == expected
        assert pages == 4

    def test_v2_contents_fields(self, op1, bucket, keys):
        prefix, expected = keys
        r = op1.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1, FetchOwner=True)
        o = r["Contents"][0]
        assert o["Key"] == expected[0]
        assert o["Size"] == 1
        assert o["ETag"] == f'"{md5_hex(b"x")}"'
        assert o["StorageClass"] == "STANDARD"
        assert "Owner" in o

    def test_owner_only_on_request(self, op1, bucket, keys):
        r = op1.list_objects_v2(Bucket=bucket, Prefix=keys[0], MaxKeys=1)
        assert "Owner" not in r["Contents"][0]
        assert "Owner" in op1.list_objects(Bucket=bucket, Prefix=keys[0], MaxKeys=1)["Contents"][0]

    def test_more_than_1000_keys(self, op1, bucket):
        p = uniq("many") + "/"
        names = [f"{p}{i:05d}" for i in range(1005)]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda k: op1.put_object(Bucket=bucket, Key=k, Body=b"m"), names))
        r = op1.list_objects_v2(Bucket=bucket, Prefix=p)
        assert r["KeyCount"] == 1000 and r["IsTruncated"]
        assert [o["Key"] for o in r["Contents"]] == names[:1000]
        r = op1.list_objects_v2(Bucket=bucket, Prefix=p, ContinuationToken=r["NextContinuationToken"])
        assert [o["Key"] for o in r["Contents"]] == names[1000:] and not r["IsTruncated"]
        r = op1.list_objects_v2(Bucket=bucket, Prefix=p, MaxKeys=5000)
        assert r["MaxKeys"] == 1000 and r["KeyCount"] == 1000
        r = op1.list_objects(Bucket=bucket, Prefix=p, Marker=names[998])
        assert [o["Key"] for o in r["Contents"]] == names[999:]

    def test_v2_start_after(self, op1, bucket, keys):
        prefix, expected = keys
        r = op1.list_objects_v2(Bucket=bucket, Prefix=prefix, StartAfter=prefix + "k10")
        assert [o["Key"] for o in r["Contents"]] == expected[11:]
        assert r["StartAfter"] == prefix + "k10"

    def test_v1_paging_with_marker(self, op1, bucket, keys):
        prefix, expected = keys
        seen, marker = [], ""
        while True:
            r = op1.list_objects(Bucket=bucket, Prefix=prefix, MaxKeys=10, Marker=marker)
            assert r["Marker"] == marker
            seen += [o["Key"] for o in r["Contents"]]
            if not r["IsTruncated"]:
                break
            marker = r.get("NextMarker") or r["Contents"][-1]["Key"]
        assert seen == expected

    def test_delimiter_and_common_prefix_paging(self, op1, bucket):
        p = uniq("delim") + "/"
        for k in ["d/1", "d/2", "d/sub/3", "e/1", "top", "zz"]:
            put(op1, bucket, p + k)
        r = op1.list_objects_v2(Bucket=bucket, Prefix=p, Delimiter="/")
        assert [c["Prefix"] for c in r["CommonPrefixes"]] == [p + "d/", p + "e/"]
        assert [o["Key"] for o in r["Contents"]] == [p + "top", p + "zz"]
        assert r["KeyCount"] == 4
        # One entry per page: a common prefix as continuation skips everything under it.
        entries, token = [], None
        for _ in range(10):
            kw = {"ContinuationToken": token} if token else {}
            r = op1.list_objects_v2(Bucket=bucket, Prefix=p, Delimiter="/", MaxKeys=1, **kw)
            entries += [c["Prefix"] for c in r.get("CommonPrefixes", [])]
            entries += [o["Key"] for o in r.get("Contents", [])]
            if not r["IsTruncated"]:
                break
            token = r["NextContinuationToken"]
        assert entries == [p + "d/", p + "e/", p + "top", p + "zz"]
        # v1 with a delimiter pages the same way through NextMarker.
        entries, marker = [], ""
        for _ in range(10):
            r = op1.list_objects(Bucket=bucket, Prefix=p, Delimiter="/", MaxKeys=1, Marker=marker)
            entries += [c["Prefix"] for c in r.get("CommonPrefixes", [])]
            entries += [o["Key"] for o in r.get("Contents", [])]
            if not r["IsTruncated"]:
                break
            marker = r["NextMarker"]
        assert entries == [p + "d/", p + "e/", p + "top", p + "zz"]

    def test_encoding_type_url_v2_decodes_exactly(self, op1, bucket, special):
        # botocore sends encoding-type=url and unquote_plus()es the answer.
        r = op1.list_objects_v2(Bucket=bucket, Prefix=special)
        assert r["EncodingType"] == "url"
        assert sorted(o["Key"] for o in r["Contents"]) == sorted(special + k for k in SPECIAL_KEYS)
        r = op1.list_objects_v2(Bucket=bucket, Prefix=special, Delimiter="/")
        assert [c["Prefix"] for c in r["CommonPrefixes"]] == [special + "ü/"]

    @pytest.mark.parametrize("sub", ["a+b", "sp ace", "ü/", "pct%2F", "x=y?z#"])
    def test_prefix_with_special_characters(self, op1, bucket, special, sub):
        # The prefix travels in the signed query string; the answer must hold exactly the key.
        r = op1.list_objects_v2(Bucket=bucket, Prefix=special + sub)
        assert [o["Key"] for o in r["Contents"]] == [k for k in
                                                     (special + x for x in sorted(SPECIAL_KEYS))
                                                     if k.startswith(special + sub)]
        assert r["Prefix"] == special + sub

    def test_encoding_type_url_v1_and_versions(self, op1, bucket, special):
        r = op1.list_objects(Bucket=bucket, Prefix=special)
        assert sorted(o["Key"] for o in r["Contents"]) == sorted(special + k for k in SPECIAL_KEYS)
        r = op1.list_object_versions(Bucket=bucket, Prefix=special)
        assert sorted(v["Key"] for v in r["Versions"]) == sorted(special + k for k in SPECIAL_KEYS)

    def test_encoding_type_url_wire_form(self, server, bucket, special):
        url = object_url(server, bucket, query="list-type=2&encoding-type=url&prefix=" +
                         quote(special + "a", safe=""))
        status, _, body = signed_send("GET", url, OP1)
        assert status == 200
        root = ET.fromstring(body)
        assert root.findtext(S3_NS + "EncodingType") == "url"
        assert root.findtext(f"{S3_NS}Contents/{S3_NS}Key") == quote(special, safe="/") + "a%2Bb"
        # Without encoding-type the key comes back literally.
        url = object_url(server, bucket, query="list-type=2&prefix=" + quote(special + "a", safe=""))
        body = signed_send("GET", url, OP1)[2]
        assert ET.fromstring(body).findtext(f"{S3_NS}Contents/{S3_NS}Key") == special + "a+b"

    def test_list_object_versions(self, op1, bucket, keys):
        prefix, expected = keys
        r = op1.list_object_versions(Bucket=bucket, Prefix=prefix, MaxKeys=5)
        assert [v["Key"] for v in r["Versions"]] == expected[:5]
        assert {v["VersionId"] for v in r["Versions"]} == {"null"}
        assert all(v["IsLatest"] for v in r["Versions"])
        assert r["IsTruncated"] and r["NextKeyMarker"] == expected[4]
        r = op1.list_object_versions(Bucket=bucket, Prefix=prefix, KeyMarker=expected[4])
        assert [v["Key"] for v in r["Versions"]] == expected[5:]

    def test_versioning_status_is_unset(self, op1, bucket):
        r = op1.get_bucket_versioning(Bucket=bucket)
        assert "Status" not in r

    def test_bad_list_arguments(self, op1, bucket):
        assert_s3_error("InvalidArgument", 400, op1.list_objects_v2, Bucket=bucket,
                        ContinuationToken="***not-base64***")


# =====================================================================================
# Multipart uploads
# =====================================================================================

class TestMultipart:
    def test_full_cycle(self, op1, bucket):
        key = uniq("mp")
        part1, part2 = os.urandom(5 * MIB), os.urandom(1234)
        up = op1.create_multipart_upload(Bucket=bucket, Key=key, ContentType="application/x-mp",
                                         Metadata={"m": "1"})
        uid = up["UploadId"]
        assert up["Key"] == key and up["Bucket"] == bucket
        uploads = op1.list_multipart_uploads(Bucket=bucket, Prefix=key)["Uploads"]
        assert [(u["Key"], u["UploadId"]) for u in uploads] == [(key, uid)]
        e1 = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=part1)["ETag"]
        e2 = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=2, Body=part2)["ETag"]
        assert e1 == f'"{md5_hex(part1)}"'
        parts = op1.list_parts(Bucket=bucket, Key=key, UploadId=uid)["Parts"]
        assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in parts] == [
            (1, e1, 5 * MIB), (2, e2, 1234)]
        # Not visible before Complete.
        assert_missing(op1, bucket, key)
        r = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
        expected_etag = md5_hex(hashlib.md5(part1).digest() + hashlib.md5(part2).digest()) + "-2"
        assert r["ETag"] == f'"{expected_etag}"'
        got = op1.get_object(Bucket=bucket, Key=key)
        assert got["Body"].read() == part1 + part2
        assert got["ETag"] == f'"{expected_etag}"'
        assert got["ContentType"] == "application/x-mp"
        assert got["Metadata"] == {"m": "1"}
        assert op1.list_multipart_uploads(Bucket=bucket, Prefix=key).get("Uploads", []) == []
        assert_s3_error("NoSuchUpload", 404, op1.list_parts, Bucket=bucket, Key=key, UploadId=uid)

    def test_part_number_reads_one_part(self, op1, bucket):
        # What multipart downloaders (the Java SDK's among them) ask for: part N of a
        # completed upload, as a 206 with the part's range and the parts count.
        key = uniq("mp-parts")
        parts = [os.urandom(5 * MIB), os.urandom(5 * MIB + 17), os.urandom(999)]
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        etags = [op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=i + 1,
                                 Body=body)["ETag"] for i, body in enumerate(parts)]
        op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": i + 1, "ETag": e} for i, e in enumerate(etags)]})
        offset = 0
        for n, body in enumerate(parts, start=1):
            got = op1.get_object(Bucket=bucket, Key=key, PartNumber=n)
            assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
            assert got["PartsCount"] == 3
            assert got["ContentLength"] == len(body)
            total = sum(map(len, parts))
            assert got["ContentRange"] == f"bytes {offset}-{offset + len(body) - 1}/{total}"
            assert got["Body"].read() == body
            head = op1.head_object(Bucket=bucket, Key=key, PartNumber=n)
            assert head["ContentLength"] == len(body) and head["PartsCount"] == 3
            offset += len(body)
        assert_s3_error("InvalidPartNumber", 416, op1.get_object, Bucket=bucket, Key=key,
                        PartNumber=4)
        # A plain GET is the whole object, without a parts count.
        whole = op1.get_object(Bucket=bucket, Key=key)
        assert whole["Body"].read() == b"".join(parts) and "PartsCount" not in whole

    def test_part_number_on_a_single_part_object(self, op1, bucket):
        key = uniq("one-piece")
        op1.put_object(Bucket=bucket, Key=key, Body=b"0123456789", ChecksumAlgorithm="CRC32")
        got = op1.get_object(Bucket=bucket, Key=key, PartNumber=1, ChecksumMode="ENABLED")
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert got["ContentRange"] == "bytes 0-9/10"
        assert got["Body"].read() == b"0123456789"
        # A part is a range: no whole-object checksum, even when asked for checksums.
        assert "ChecksumCRC32" not in got
        assert "ChecksumCRC32" in op1.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert_s3_error("InvalidPartNumber", 416, op1.get_object, Bucket=bucket, Key=key,
                        PartNumber=2)
        assert_s3_error("InvalidArgument", 400, op1.get_object, Bucket=bucket, Key=key,
                        PartNumber=0)
        assert_s3_error("InvalidRequest", 400, op1.get_object, Bucket=bucket, Key=key,
                        PartNumber=1, Range="bytes=0-1")

    def test_a_copy_of_a_multipart_object_is_one_part(self, op1, bucket):
        key, copy = uniq("mp-src"), uniq("mp-copy")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        bodies = [os.urandom(5 * MIB), b"tail"]
        etags = [op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=i + 1,
                                 Body=b)["ETag"] for i, b in enumerate(bodies)]
        op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": i + 1, "ETag": e} for i, e in enumerate(etags)]})
        op1.copy_object(Bucket=bucket, Key=copy, CopySource={"Bucket": bucket, "Key": key})
        got = op1.get_object(Bucket=bucket, Key=copy, PartNumber=1)
        assert got["Body"].read() == b"".join(bodies) and "PartsCount" not in got
        assert_s3_error("InvalidPartNumber", 416, op1.get_object, Bucket=bucket, Key=copy,
                        PartNumber=2)

    def test_keys_longer_than_1024_bytes_are_refused(self, op1, bucket, server):
        limit = server.max_key_bytes(bucket)  # 1024, less an S3 backend's key prefix
        key = "k" * (limit + 1)
        assert_s3_error("KeyTooLongError", 400, op1.put_object, Bucket=bucket, Key=key, Body=b"x")
        assert_s3_error("KeyTooLongError", 400, op1.create_multipart_upload, Bucket=bucket,
                        Key="é" * (limit // 2 + 1))  # limit + 1 or 2 bytes in UTF-8
        op1.put_object(Bucket=bucket, Key=long_key(limit), Body=b"x")  # the limit itself is fine
        assert op1.get_object(Bucket=bucket, Key=long_key(limit))["Body"].read() == b"x"

    def test_one_part_and_replaced_part(self, op1, bucket):
        key = uniq("mp1")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"old")
        etag = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"tiny")["ETag"]
        r = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": etag}]})
        assert r["ETag"] == f'"{md5_hex(hashlib.md5(b"tiny").digest())}-1"'
        assert get_body(op1, bucket, key) == b"tiny"

    def test_abort(self, op1, bucket):
        key = uniq("mpa")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"x")
        assert op1.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=uid)[
            "ResponseMetadata"]["HTTPStatusCode"] == 204
        assert_s3_error("NoSuchUpload", 404, op1.list_parts, Bucket=bucket, Key=key, UploadId=uid)
        assert_s3_error("NoSuchUpload", 404, op1.upload_part, Bucket=bucket, Key=key, UploadId=uid,
                        PartNumber=2, Body=b"y")
        assert_missing(op1, bucket, key)

    def test_entity_too_small(self, op1, bucket):
        key = uniq("mps")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        e1 = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"a" * 100)["ETag"]
        e2 = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=2, Body=b"b")["ETag"]
        assert_s3_error("EntityTooSmall", 400, op1.complete_multipart_upload, Bucket=bucket, Key=key,
                        UploadId=uid, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1},
                                                                 {"PartNumber": 2, "ETag": e2}]})
        assert_missing(op1, bucket, key)

    def test_invalid_part_order_and_invalid_part(self, op1, bucket):
        key = uniq("mpo")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        e1 = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"1" * (5 * MIB))["ETag"]
        e2 = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=2, Body=b"2")["ETag"]
        assert_s3_error("InvalidPartOrder", 400, op1.complete_multipart_upload, Bucket=bucket,
                        Key=key, UploadId=uid, MultipartUpload={
                            "Parts": [{"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]})
        assert_s3_error("InvalidPart", 400, op1.complete_multipart_upload, Bucket=bucket, Key=key,
                        UploadId=uid, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e2}]})
        assert_s3_error("InvalidPart", 400, op1.complete_multipart_upload, Bucket=bucket, Key=key,
                        UploadId=uid, MultipartUpload={"Parts": [{"PartNumber": 3, "ETag": e2}]})
        # The upload survives failed completions.
        r = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
        assert r["ETag"].endswith('-2"')
        assert op1.head_object(Bucket=bucket, Key=key)["ContentLength"] == 5 * MIB + 1

    def test_list_parts_paging_and_several_uploads(self, op1, bucket):
        key = uniq("mpl")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        uid2 = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        assert uid != uid2
        for n in (1, 2, 3):
            op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=n, Body=str(n).encode())
        r = op1.list_parts(Bucket=bucket, Key=key, UploadId=uid, MaxParts=2)
        assert [p["PartNumber"] for p in r["Parts"]] == [1, 2]
        assert r["IsTruncated"] and r["NextPartNumberMarker"] == 2
        r = op1.list_parts(Bucket=bucket, Key=key, UploadId=uid, PartNumberMarker=2)
        assert [p["PartNumber"] for p in r["Parts"]] == [3] and not r["IsTruncated"]
        uploads = op1.list_multipart_uploads(Bucket=bucket, Prefix=key)["Uploads"]
        assert sorted(u["UploadId"] for u in uploads) == sorted([uid, uid2])
        # Parts belong to their upload.
        assert op1.list_parts(Bucket=bucket, Key=key, UploadId=uid2).get("Parts", []) == []
        op1.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=uid)
        op1.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=uid2)
        assert op1.list_multipart_uploads(Bucket=bucket, Prefix=key).get("Uploads", []) == []

    def test_listing_uploads_does_not_hide_later_writes(self, op1, bucket):
        # An upload whose key sorts after the listed prefix, then reads of new writes.
        base = uniq("snap")
        later = op1.create_multipart_upload(Bucket=bucket, Key=base + "-z")["UploadId"]
        try:
            op1.create_multipart_upload(Bucket=bucket, Key=base + "-a")
            uploads = op1.list_multipart_uploads(Bucket=bucket, Prefix=base + "-a")["Uploads"]
            assert [u["Key"] for u in uploads] == [base + "-a"]
            put(op1, bucket, base + "-new", b"fresh")
            assert get_body(op1, bucket, base + "-new") == b"fresh"
            op1.delete_object(Bucket=bucket, Key=base + "-new")
            assert_missing(op1, bucket, base + "-new")
        finally:
            op1.abort_multipart_upload(Bucket=bucket, Key=base + "-z", UploadId=later)

    def test_upload_part_copy(self, op1, bucket):
        src = uniq("upc-src")
        data = os.urandom(6 * MIB)
        put(op1, bucket, src, data)
        key = uniq("upc")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        r1 = op1.upload_part_copy(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1,
                                  CopySource={"Bucket": bucket, "Key": src},
                                  CopySourceRange=f"bytes=0-{5 * MIB - 1}")
        assert r1["CopyPartResult"]["ETag"] == f'"{md5_hex(data[:5 * MIB])}"'
        r2 = op1.upload_part_copy(Bucket=bucket, Key=key, UploadId=uid, PartNumber=2,
                                  CopySource=f"{bucket}/{src}", CopySourceRange=f"bytes={5 * MIB}-{6 * MIB - 1}")
        parts = op1.list_parts(Bucket=bucket, Key=key, UploadId=uid)["Parts"]
        assert [p["Size"] for p in parts] == [5 * MIB, MIB]
        op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": r1["CopyPartResult"]["ETag"]},
            {"PartNumber": 2, "ETag": r2["CopyPartResult"]["ETag"]}]})
        assert get_body(op1, bucket, key) == data

    def test_upload_part_copy_errors(self, op1, op2, bucket):
        src = uniq("upc-src")
        put(op1, bucket, src, b"0123456789")
        key = uniq("upce")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        kw = dict(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, CopySource=f"{bucket}/{src}")
        assert_s3_error("InvalidArgument", 400, op1.upload_part_copy, CopySourceRange="bytes=5-", **kw)
        assert_s3_error("InvalidArgument", 400, op1.upload_part_copy, CopySourceRange="bytes=5-2", **kw)
        assert_s3_error("InvalidRange", 416, op1.upload_part_copy, CopySourceRange="bytes=5-10", **kw)
        assert_s3_error("PreconditionFailed", 412, op1.upload_part_copy, CopySourceIfMatch='"no"', **kw)
        assert_s3_error("NoSuchKey", 404, op1.upload_part_copy,
                        **{**kw, "CopySource": f"{bucket}/{uniq('missing')}"})
        other = uniq("op2upc")
        op2.create_bucket(Bucket=other)
        uid2 = op2.create_multipart_upload(Bucket=other, Key="k")["UploadId"]
        assert_s3_error("AccessDenied", 403, op2.upload_part_copy, Bucket=other, Key="k", UploadId=uid2,
                        PartNumber=1, CopySource=f"{bucket}/{src}")
        assert op1.list_parts(Bucket=bucket, Key=key, UploadId=uid).get("Parts", []) == []
        r = op1.upload_part_copy(CopySourceRange="bytes=2-4", **kw)
        assert r["CopyPartResult"]["ETag"] == f'"{md5_hex(b"234")}"'

    def test_managed_copy_of_large_object(self, op1, bucket):
        # boto3's copy() switches to UploadPartCopy above its 8 MiB threshold.
        src = uniq("big-src")
        data = os.urandom(9 * MIB)
        put(op1, bucket, src, data)
        op1.copy({"Bucket": bucket, "Key": src}, bucket, src + "-copy")
        head = op1.head_object(Bucket=bucket, Key=src + "-copy")
        assert head["ETag"].endswith('-2"')  # it really went through UploadPartCopy
        assert get_body(op1, bucket, src + "-copy") == data

    def test_bad_part_number_and_upload_id(self, op1, bucket):
        key = uniq("mpn")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        assert_s3_error("InvalidArgument", 400, op1.upload_part, Bucket=bucket, Key=key,
                        UploadId=uid, PartNumber=10001, Body=b"x")
        assert_s3_error("NoSuchUpload", 404, op1.upload_part, Bucket=bucket, Key=key,
                        UploadId="bogus", PartNumber=1, Body=b"x")
        # An upload id is bound to its key.
        assert_s3_error("NoSuchUpload", 404, op1.upload_part, Bucket=bucket, Key=key + "-other",
                        UploadId=uid, PartNumber=1, Body=b"x")


# =====================================================================================
# Flexible checksums
# =====================================================================================

class TestChecksums:
    DATA = b"A" * 1024
    # s3-tests' vectors for "A"*1024.
    KNOWN = {"SHA256": "arcu6553sHVAiX4MjW0j7I7vD4w6R+Gz9Ok0Q9lTa+0=", "CRC64NVME": "Qeh8oXvGiSo="}

    @pytest.mark.parametrize("alg", ["CRC32", "SHA1", "SHA256"])
    def test_boto3_put_with_checksum(self, op1, bucket, alg):
        key = uniq("ck-" + alg)
        expected = CHECKSUMS[alg](self.DATA)
        if alg in self.KNOWN:
            assert expected == self.KNOWN[alg]
        r = op1.put_object(Bucket=bucket, Key=key, Body=self.DATA, ChecksumAlgorithm=alg)
        assert r["Checksum" + alg] == expected
        assert r["ResponseMetadata"]["HTTPHeaders"]["x-amz-checksum-type"] == "FULL_OBJECT"
        got = op1.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert got["Body"].read() == self.DATA
        assert got["Checksum" + alg] == expected
        head = op1.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert head["Checksum" + alg] == expected
        # Not asked for, not sent.
        plain = op1.head_object(Bucket=bucket, Key=key)
        assert not any(h.startswith("x-amz-checksum-") for h in plain["ResponseMetadata"]["HTTPHeaders"])

    @pytest.mark.parametrize("alg", list(CHECKSUMS))
    def test_raw_put_with_checksum_header(self, server, bucket, alg):
        key = uniq("raw-" + alg)
        value = CHECKSUMS[alg](self.DATA)
        if alg in self.KNOWN:
            assert value == self.KNOWN[alg]
        url = object_url(server, bucket, key)
        status, headers, body = signed_send("PUT", url, OP1, self.DATA, headers={
            "x-amz-checksum-" + alg.lower(): value, "x-amz-sdk-checksum-algorithm": alg})
        assert status == 200, body
        assert headers["x-amz-checksum-" + alg.lower()] == value
        status, headers, body = signed_send("GET", url, OP1, headers={"x-amz-checksum-mode": "ENABLED"})
        assert status == 200 and body == self.DATA
        assert headers["x-amz-checksum-" + alg.lower()] == value
        assert headers["x-amz-checksum-type"] == "FULL_OBJECT"

    @pytest.mark.parametrize("alg", list(CHECKSUMS))
    def test_wrong_checksum_is_bad_digest_and_nothing_stored(self, op1, server, bucket, alg):
        key = uniq("bad-" + alg)
        wrong = CHECKSUMS[alg](self.DATA + b"!")
        url = object_url(server, bucket, key)
        status, _, body = signed_send("PUT", url, OP1, self.DATA,
                                      headers={"x-amz-checksum-" + alg.lower(): wrong})
        assert status == 400 and xml_error_code(body) == "BadDigest"
        assert_missing(op1, bucket, key)

    def test_two_checksum_headers(self, op1, server, bucket):
        key = uniq("two")
        status, _, body = signed_send("PUT", object_url(server, bucket, key), OP1, self.DATA, headers={
            "x-amz-checksum-crc32": CHECKSUMS["CRC32"](self.DATA),
            "x-amz-checksum-sha256": CHECKSUMS["SHA256"](self.DATA)})
        assert status == 400 and xml_error_code(body) == "InvalidRequest"
        assert_missing(op1, bucket, key)

    @pytest.mark.parametrize("header,value", [("x-amz-checksum-xxhash64", "AAAAAAAAAAA="),
                                              ("x-amz-sdk-checksum-algorithm", "MD5")])
    def test_unsupported_checksum_algorithm(self, op1, server, bucket, header, value):
        # Acknowledging a checksum the store cannot verify would be a silent integrity gap.
        key = uniq("unsupported")
        status, _, body = signed_send("PUT", object_url(server, bucket, key), OP1, self.DATA,
                                      headers={header: value})
        assert status == 400 and xml_error_code(body) == "InvalidRequest"
        assert_missing(op1, bucket, key)

    def test_copy_keeps_checksum(self, op1, bucket):
        key = uniq("ckcopy")
        op1.put_object(Bucket=bucket, Key=key, Body=self.DATA, ChecksumAlgorithm="SHA1")
        op1.copy_object(Bucket=bucket, Key=key + "-copy", CopySource=f"{bucket}/{key}")
        got = op1.head_object(Bucket=bucket, Key=key + "-copy", ChecksumMode="ENABLED")
        assert got["ChecksumSHA1"] == CHECKSUMS["SHA1"](self.DATA)

    def test_server_computes_checksum_from_sdk_algorithm_header(self, server, bucket):
        # x-amz-sdk-checksum-algorithm without a value: the store computes and keeps it.
        key = uniq("sdkalg")
        url = object_url(server, bucket, key)
        status, headers, _ = signed_send("PUT", url, OP1, self.DATA,
                                         headers={"x-amz-sdk-checksum-algorithm": "CRC64NVME"})
        assert status == 200
        assert headers["x-amz-checksum-crc64nvme"] == self.KNOWN["CRC64NVME"]

    def test_bad_content_md5(self, op1, server, bucket):
        key = uniq("md5")
        url = object_url(server, bucket, key)
        status, _, body = signed_send("PUT", url, OP1, b"hello",
                                      headers={"Content-MD5": b64(hashlib.md5(b"other").digest())})
        assert status == 400 and xml_error_code(body) == "BadDigest"
        assert_missing(op1, bucket, key)
        status, _, _ = signed_send("PUT", url, OP1, b"hello",
                                   headers={"Content-MD5": b64(hashlib.md5(b"hello").digest())})
        assert status == 200

    def test_wrong_payload_sha256(self, op1, server, bucket):
        key = uniq("sha")
        url = object_url(server, bucket, key)
        status, _, body = signed_send("PUT", url, OP1, b"hello",
                                      payload_hash=hashlib.sha256(b"bye").hexdigest())
        assert status == 400 and xml_error_code(body) == "XAmzContentSHA256Mismatch"
        assert_missing(op1, bucket, key)

    def test_ranged_get_has_no_full_object_checksum(self, op1, bucket):
        key = uniq("ckr")
        op1.put_object(Bucket=bucket, Key=key, Body=self.DATA, ChecksumAlgorithm="SHA256")
        r = op1.get_object(Bucket=bucket, Key=key, Range="bytes=0-9", ChecksumMode="ENABLED")
        assert r["Body"].read() == b"A" * 10
        assert r["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert not any(h.startswith("x-amz-checksum-") for h in r["ResponseMetadata"]["HTTPHeaders"])

    def test_multipart_composite_sha256(self, op1, bucket):
        key = uniq("mpck")
        parts = [b"A" * (5 * MIB), b"B" * 777]
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
        done = []
        for n, data in enumerate(parts, 1):
            r = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=n, Body=data,
                                ChecksumAlgorithm="SHA256")
            assert r["ChecksumSHA256"] == CHECKSUMS["SHA256"](data)
            done.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]})
        listed = op1.list_parts(Bucket=bucket, Key=key, UploadId=uid)["Parts"]
        assert [p["ChecksumSHA256"] for p in listed] == [d["ChecksumSHA256"] for d in done]
        r = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid,
                                          MultipartUpload={"Parts": done})
        composite = b64(hashlib.sha256(b"".join(hashlib.sha256(p).digest() for p in parts)).digest())
        assert r["ChecksumSHA256"] == composite + "-2"
        got = op1.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert got["ChecksumSHA256"] == composite + "-2"
        assert got["ResponseMetadata"]["HTTPHeaders"]["x-amz-checksum-type"] == "COMPOSITE"
        assert got["Body"].read() == b"".join(parts)

    def test_multipart_full_object_crc32(self, op1, bucket):
        key = uniq("mpfo")
        parts = [os.urandom(5 * MIB), os.urandom(4321)]
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="CRC32",
                                          ChecksumType="FULL_OBJECT")["UploadId"]
        done = []
        for n, data in enumerate(parts, 1):
            r = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=n, Body=data,
                                ChecksumAlgorithm="CRC32")
            done.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
        r = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid,
                                          MultipartUpload={"Parts": done})
        assert r["ChecksumCRC32"] == CHECKSUMS["CRC32"](b"".join(parts))
        assert r["ChecksumType"] == "FULL_OBJECT"

    def test_multipart_full_object_crc64nvme(self, op1, server, bucket):
        # CRC64NVME is FULL_OBJECT only: the combined CRC of the whole object.
        key = uniq("mp64")
        parts = [b"N" * (5 * MIB), b"tail of the object"]
        up = op1.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="CRC64NVME")
        uid = up["UploadId"]
        assert up["ChecksumType"] == "FULL_OBJECT"
        etags = []
        for n, data in enumerate(parts, 1):
            url = object_url(server, bucket, key, f"partNumber={n}&uploadId={uid}")
            # Part 1 carries its checksum; part 2 leaves it to the server.
            headers = {"x-amz-checksum-crc64nvme": CHECKSUMS["CRC64NVME"](data)} if n == 1 else {}
            status, h, body = signed_send("PUT", url, OP1, data, headers=headers)
            assert status == 200, body
            assert h["x-amz-checksum-crc64nvme"] == CHECKSUMS["CRC64NVME"](data)
            etags.append(h["etag"])
        r = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, 1)]})
        assert r["ChecksumCRC64NVME"] == CHECKSUMS["CRC64NVME"](b"".join(parts))
        assert r["ChecksumType"] == "FULL_OBJECT"

    def test_multipart_one_part_composite(self, op1, bucket):
        key = uniq("mp1ck")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="CRC32")["UploadId"]
        r = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"only",
                            ChecksumAlgorithm="CRC32")
        done = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]}]})
        raw = zlib.crc32(b"only").to_bytes(4, "big")
        assert done["ChecksumCRC32"] == b64(zlib.crc32(raw).to_bytes(4, "big")) + "-1"

    def test_upload_part_copy_with_checksum(self, op1, bucket):
        src = uniq("pcck-src")
        put(op1, bucket, src, self.DATA)
        key = uniq("pcck")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
        r = op1.upload_part_copy(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1,
                                 CopySource=f"{bucket}/{src}")
        assert r["CopyPartResult"]["ChecksumSHA256"] == CHECKSUMS["SHA256"](self.DATA)
        done = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": r["CopyPartResult"]["ETag"],
                       "ChecksumSHA256": r["CopyPartResult"]["ChecksumSHA256"]}]})
        assert done["ChecksumSHA256"] == b64(hashlib.sha256(hashlib.sha256(self.DATA).digest()).digest()) + "-1"

    def test_multipart_part_checksum_mismatch_in_complete(self, op1, bucket):
        key = uniq("mpbad")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
        r = op1.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"p",
                            ChecksumAlgorithm="SHA256")
        assert_s3_error("InvalidPart", 400, op1.complete_multipart_upload, Bucket=bucket, Key=key,
                        UploadId=uid, MultipartUpload={"Parts": [{
                            "PartNumber": 1, "ETag": r["ETag"],
                            "ChecksumSHA256": CHECKSUMS["SHA256"](b"q")}]})

    def test_unsupported_checksum_combinations(self, op1, bucket):
        assert_s3_error("InvalidRequest", 400, op1.create_multipart_upload, Bucket=bucket,
                        Key="x", ChecksumAlgorithm="SHA256", ChecksumType="FULL_OBJECT")


# =====================================================================================
# aws-chunked bodies and Expect: 100-continue
# =====================================================================================

class TestAwsChunked:
    DATA = bytes(range(256)) * 90  # 23040 bytes: two full 8 KiB chunks and a short one

    @pytest.mark.parametrize("outer", [None, 1000], ids=["content-length", "transfer-encoding"])
    @pytest.mark.parametrize("mode", [STREAMING_SIGNED, STREAMING_SIGNED_TRAILER,
                                      STREAMING_UNSIGNED_TRAILER])
    def test_forms(self, op1, server, bucket, mode, outer):
        key = uniq("chunked")
        status, headers, body = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA, mode,
                                                outer_chunks=outer,
                                                extra_headers={"Content-Type": "text/x-chunked"})
        assert status == 200, body
        assert headers["etag"] == f'"{md5_hex(self.DATA)}"'
        if mode.endswith("-TRAILER"):
            assert headers["x-amz-checksum-crc32"] == CHECKSUMS["CRC32"](self.DATA)
        got = op1.get_object(Bucket=bucket, Key=key)
        assert got["Body"].read() == self.DATA
        assert got["ContentType"] == "text/x-chunked"
        # aws-chunked is framing, not the object's encoding.
        assert "ContentEncoding" not in got

    @pytest.mark.parametrize("mode", [STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER])
    @pytest.mark.parametrize("alg", ["CRC32C", "CRC64NVME", "SHA256"])
    def test_trailer_algorithms(self, op1, server, bucket, mode, alg):
        key = uniq("trailer")
        status, headers, _ = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA, mode,
                                             checksum=alg)
        assert status == 200
        assert headers["x-amz-checksum-" + alg.lower()] == CHECKSUMS[alg](self.DATA)
        got = op1.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        assert got["ResponseMetadata"]["HTTPHeaders"]["x-amz-checksum-" + alg.lower()] == \
            CHECKSUMS[alg](self.DATA)

    def test_empty_body(self, op1, server, bucket):
        key = uniq("chunked-empty")
        status, _, _ = aws_chunked_put(object_url(server, bucket, key), OP1, b"",
                                       STREAMING_UNSIGNED_TRAILER, outer_chunks=7)
        assert status == 200
        assert op1.head_object(Bucket=bucket, Key=key)["ContentLength"] == 0

    @pytest.mark.parametrize("mode", [STREAMING_SIGNED, STREAMING_SIGNED_TRAILER])
    def test_tampered_chunk_is_refused(self, op1, server, bucket, mode):
        key = uniq("tamper")
        status, _, body = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA, mode,
                                          tamper="chunk")
        assert status == 403 and xml_error_code(body) == "SignatureDoesNotMatch"
        assert_missing(op1, bucket, key)

    def test_tampered_trailer_signature(self, op1, server, bucket):
        key = uniq("badtrailersig")
        status, _, body = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA,
                                          STREAMING_SIGNED_TRAILER, tamper="trailer-signature")
        assert status == 403 and xml_error_code(body) == "SignatureDoesNotMatch"
        assert_missing(op1, bucket, key)

    def test_missing_trailer(self, op1, server, bucket):
        key = uniq("notrailer")
        url = object_url(server, bucket, key)
        headers = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(self.DATA)),
                   "x-amz-trailer": "x-amz-checksum-crc32"}
        s = sign("PUT", url, OP1, headers, STREAMING_UNSIGNED_TRAILER)
        body = aws_chunked_body(self.DATA, STREAMING_UNSIGNED_TRAILER, s)  # no trailer lines
        status, _, resp = http_send("PUT", url, s.headers, body)
        assert status == 400 and xml_error_code(resp) == "IncompleteBody"
        assert_missing(op1, bucket, key)

    def test_checksum_in_header_and_trailer(self, op1, server, bucket):
        key = uniq("twice")
        status, _, body = aws_chunked_put(
            object_url(server, bucket, key), OP1, self.DATA, STREAMING_UNSIGNED_TRAILER,
            extra_headers={"x-amz-checksum-crc32": CHECKSUMS["CRC32"](self.DATA)})
        assert status == 400 and xml_error_code(body) == "InvalidRequest"
        assert_missing(op1, bucket, key)

    def test_content_encoding_besides_aws_chunked_is_kept(self, op1, server, bucket):
        key = uniq("gzip")
        status, _, _ = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA,
                                       STREAMING_SIGNED,
                                       extra_headers={"Content-Encoding": "gzip, aws-chunked"})
        assert status == 200
        assert op1.head_object(Bucket=bucket, Key=key)["ContentEncoding"] == "gzip"

    def test_sigv4a_streaming_is_not_implemented(self, op1, server, bucket):
        key = uniq("ecdsa")
        url = object_url(server, bucket, key)
        s = sign("PUT", url, OP1, {"Content-Encoding": "aws-chunked",
                                   "x-amz-decoded-content-length": "1"},
                 "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD")
        status, _, body = http_send("PUT", url, s.headers, b"1\r\nx\r\n0\r\n\r\n")
        assert status == 501 and xml_error_code(body) == "NotImplemented"
        assert_missing(op1, bucket, key)

    def test_tampered_trailer_checksum(self, op1, server, bucket):
        # Signed trailer carrying a checksum that is signed but wrong for the data.
        key = uniq("badtrailer")
        status, _, body = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA,
                                          STREAMING_SIGNED_TRAILER,
                                          trailer_value=CHECKSUMS["CRC32"](b"other"))
        assert status == 400 and xml_error_code(body) == "BadDigest"
        assert_missing(op1, bucket, key)

    def test_unsigned_trailer_detects_corruption(self, op1, server, bucket):
        key = uniq("corrupt")
        status, _, body = aws_chunked_put(object_url(server, bucket, key), OP1, self.DATA,
                                          STREAMING_UNSIGNED_TRAILER, tamper="chunk")
        assert status == 400 and xml_error_code(body) == "BadDigest"
        assert_missing(op1, bucket, key)

    def test_decoded_length_mismatch(self, op1, server, bucket):
        key = uniq("declen")
        url = object_url(server, bucket, key)
        headers = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": "5"}
        s = sign("PUT", url, OP1, headers, STREAMING_SIGNED)
        status, _, body = http_send("PUT", url, s.headers, aws_chunked_body(b"toolong", STREAMING_SIGNED, s))
        assert status == 400 and xml_error_code(body) == "IncompleteBody"
        assert_missing(op1, bucket, key)

    def test_multipart_part_as_aws_chunked(self, op1, server, bucket):
        key = uniq("chunkedpart")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        url = object_url(server, bucket, key, f"partNumber=1&uploadId={uid}")
        status, headers, _ = aws_chunked_put(url, OP1, self.DATA, STREAMING_UNSIGNED_TRAILER,
                                             outer_chunks=4096)
        assert status == 200
        op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": headers["etag"]}]})
        assert get_body(op1, bucket, key) == self.DATA

    def test_plain_body_with_transfer_encoding_chunked(self, op1, server, bucket):
        # A signed (hex sha256) body sent with HTTP chunked framing and no Content-Length.
        key = uniq("te")
        url = object_url(server, bucket, key)
        data = os.urandom(5000)
        s = sign("PUT", url, OP1, {}, hashlib.sha256(data).hexdigest())
        status, _, body = http_send("PUT", url, s.headers, outer_chunks=split_every(data, 999))
        assert status == 200, body
        assert get_body(op1, bucket, key) == data

    def test_transfer_encoding_chunked_with_wrong_sha256(self, op1, server, bucket):
        key = uniq("te-bad")
        url = object_url(server, bucket, key)
        s = sign("PUT", url, OP1, {}, hashlib.sha256(b"something else").hexdigest())
        status, _, body = http_send("PUT", url, s.headers, outer_chunks=[b"abc", b"def"])
        assert status == 400 and xml_error_code(body) == "XAmzContentSHA256Mismatch"
        assert_missing(op1, bucket, key)


class TestExpectContinue:
    def test_boto3_put_sends_expect(self, op1, bucket):
        seen = []

        def record(request, **_):
            seen.append(request.headers.get("Expect"))
        op1.meta.events.register("before-send.s3.PutObject", record)
        try:
            op1.put_object(Bucket=bucket, Key="expect-boto3", Body=b"hello continue")
        finally:
            op1.meta.events.unregister("before-send.s3.PutObject", record)
        assert seen in ([b"100-continue"], ["100-continue"])
        assert get_body(op1, bucket, "expect-boto3") == b"hello continue"

    def test_empty_put_does_not_stall_the_next_put(self, server, bucket):
        # boto3 sends Expect: 100-continue on every PutObject, empty ones included, over
        # pooled keep-alive connections (directory markers, then data files).
        s3 = v4_client(server, *OP1, max_pool_connections=1, read_timeout=5)
        put(s3, bucket, "expect-empty/", b"")
        started = time.monotonic()
        put(s3, bucket, "expect-after-empty", b"d" * 300000)
        assert time.monotonic() - started < 2
        assert get_body(s3, bucket, "expect-after-empty") == b"d" * 300000

    def test_empty_body_with_expect_gets_an_answer(self, server, bucket):
        url = object_url(server, bucket, "expect-empty-raw")
        s = sign("PUT", url, OP1, {}, EMPTY_SHA256)
        conn = RawConn(url)
        try:
            conn.send_head("PUT", urlsplit(url).path,
                           {**s.headers, "Content-Length": 0, "Expect": "100-continue"})
            status, headers = conn.read_head()
            if status == 100:
                status, headers = conn.read_head()
            assert status == 200
            assert headers["etag"] == f'"{md5_hex(b"")}"'
        finally:
            conn.close()

    def test_raw_waits_for_100_before_body(self, op1, server, bucket):
        key = uniq("expect")
        url = object_url(server, bucket, key)
        body = os.urandom(4096)
        s = sign("PUT", url, OP1, {}, hashlib.sha256(body).hexdigest())
        conn = RawConn(url)
        try:
            conn.send_head("PUT", urlsplit(url).path,
                           {**s.headers, "Content-Length": len(body), "Expect": "100-continue"})
            status, _ = conn.read_head()
            assert status == 100
            conn.sock.sendall(body)
            status, headers = conn.read_head()
            assert status == 200
            assert headers["etag"] == f'"{md5_hex(body)}"'
        finally:
            conn.close()
        assert get_body(op1, bucket, key) == body

    def test_refused_before_body_without_100(self, op1, server, bucket):
        key = uniq("expect-denied")
        url = object_url(server, bucket, key)
        s = sign("PUT", url, ("operator1", "wrong-secret"), {}, "UNSIGNED-PAYLOAD")
        conn = RawConn(url)
        try:
            conn.send_head("PUT", urlsplit(url).path,
                           {**s.headers, "Content-Length": 10 * MIB, "Expect": "100-continue"})
            status, headers = conn.read_head()
            assert status == 403
            assert xml_error_code(conn.read_body(headers)) == "SignatureDoesNotMatch"
        finally:
            conn.close()
        assert_missing(op1, bucket, key)


# =====================================================================================
# Presigned URLs and authentication failures
# =====================================================================================

@pytest.fixture(scope="module")
def v2(server):
    """boto3's default configuration: SigV2 query auth for generate_presigned_url."""
    return client(server, *OP1)


class TestPresigned:
    def test_v4_get_and_put(self, op1, bucket):
        url = op1.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "pre-v4"})
        assert "X-Amz-Signature=" in url
        assert requests.put(url, data=b"presigned v4").status_code == 200
        url = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre-v4"})
        r = requests.get(url)
        assert r.status_code == 200 and r.content == b"presigned v4"

    def test_v2_get_and_put(self, v2, bucket):
        url = v2.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "pre-v2"})
        assert "AWSAccessKeyId=" in url and "Signature=" in url and "X-Amz-" not in url
        assert requests.put(url, data=b"presigned v2").status_code == 200
        url = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre-v2"})
        r = requests.get(url)
        assert r.status_code == 200 and r.content == b"presigned v2"

    def test_v2_header_auth(self, server, bucket):
        s3 = client(server, *OP1, signature_version="s3")
        s3.put_object(Bucket=bucket, Key="hdr-v2", Body=b"sigv2 header")
        assert get_body(s3, bucket, "hdr-v2") == b"sigv2 header"

    def test_v4_expired(self, op1, bucket):
        put(op1, bucket, "pre-exp", b"x")
        past = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - datetime.timedelta(hours=1)
        with mock.patch("botocore.auth.get_current_datetime", return_value=past):
            url = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre-exp"},
                                             ExpiresIn=60)
        r = requests.get(url)
        assert r.status_code == 403 and xml_error_code(r.content) == "AccessDenied"
        assert b"expired" in r.content

    def test_v2_expired(self, v2, bucket):
        put(v2, bucket, "pre-exp-v2", b"x")
        url = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre-exp-v2"},
                                        ExpiresIn=-60)
        assert int(url.split("Expires=")[1].split("&")[0]) < time.time()
        r = requests.get(url)
        assert r.status_code == 403 and xml_error_code(r.content) == "AccessDenied"
        assert b"expired" in r.content

    @pytest.mark.parametrize("which", ["v4", "v2"])
    def test_tampered_signature(self, op1, v2, bucket, which):
        put(op1, bucket, "pre-tamper", b"x")
        s3, param = (op1, "X-Amz-Signature=") if which == "v4" else (v2, "Signature=")
        url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre-tamper"})
        head, sig = url.split(param, 1)
        sig, _, rest = sig.partition("&")
        # A digit that is a different character in hex and base64 alike, whatever the case.
        bad = ("0" if sig[0] != "0" else "1") + sig[1:]
        r = requests.get(head + param + bad + ("&" + rest if rest else ""))
        assert r.status_code == 403 and xml_error_code(r.content) == "SignatureDoesNotMatch"

    def test_presigned_for_other_key_does_not_transfer(self, op1, bucket):
        put(op1, bucket, "pre-a", b"a")
        put(op1, bucket, "pre-b", b"b")
        url = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre-a"})
        r = requests.get(url.replace("/pre-a?", "/pre-b?"))
        assert r.status_code == 403 and xml_error_code(r.content) == "SignatureDoesNotMatch"


class TestAuthFailures:
    def test_wrong_secret(self, server, bucket):
        s3 = v4_client(server, "operator1", "not-the-secret")
        assert_s3_error("SignatureDoesNotMatch", 403, s3.list_objects_v2, Bucket=bucket)
        assert_s3_error("SignatureDoesNotMatch", 403, s3.put_object, Bucket=bucket, Key="x", Body=b"x")

    def test_unknown_key(self, server, bucket):
        for key in ["nobody", "t-00000000-0000-0000-0000-000000000000"]:
            s3 = v4_client(server, key, "whatever")
            assert_s3_error("InvalidAccessKeyId", 403, s3.list_buckets)

    def test_anonymous(self, server, op1, bucket):
        put(op1, bucket, "anon", b"x")
        s3 = client(server, "x", "y", signature_version=UNSIGNED)
        assert_s3_error("AccessDenied", 403, s3.get_object, Bucket=bucket, Key="anon")
        r = requests.put(object_url(server, bucket, "anon-put"), data=b"x")
        assert r.status_code == 403 and xml_error_code(r.content) == "AccessDenied"
        assert_missing(op1, bucket, "anon-put")

    def test_skewed_clock(self, server, bucket):
        past = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - datetime.timedelta(hours=1)
        url = object_url(server, bucket, query="list-type=2")
        with mock.patch("botocore.auth.get_current_datetime", return_value=past):
            s = sign("GET", url, OP1)
        status, _, body = http_send("GET", url, s.headers)
        assert status == 403 and xml_error_code(body) == "RequestTimeTooSkewed"

    def test_token_with_static_key(self, server, bucket):
        s3 = v4_client(server, *OP1, token="tm1.not-a-real-token")
        assert_s3_error("InvalidToken", 400, s3.list_objects_v2, Bucket=bucket)


# =====================================================================================
# Warehouse identities
# =====================================================================================

class TestWarehouseIdentity:
    def test_identity_names(self, lake):
        assert lake.rw[0] == "t-" + lake.id
        assert lake.ro[0] == "t-" + lake.id + "-ro"

    def test_lists_only_its_buckets(self, lake):
        names = {b["Name"] for b in lake.s3.list_buckets()["Buckets"]}
        assert names == {lake.table_bucket, lake.blob_bucket}

    def test_blob_bucket_any_key(self, lake):
        s3, b = lake.s3, lake.blob_bucket
        put(s3, b, "docs/readme.txt", b"hello blob")
        put(s3, b, "images/cat.png", b"\x89PNG")
        assert get_body(s3, b, "docs/readme.txt") == b"hello blob"
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=b)["Contents"]]
        assert {"docs/readme.txt", "images/cat.png"} <= set(keys)
        s3.delete_object(Bucket=b, Key="images/cat.png")
        assert_missing(s3, b, "images/cat.png")

    @pytest.mark.parametrize("key", [
        "ns/t/data/x.parquet", "ns/t/data/part=1/y.parquet", "ns/t/data/dv.puffin",
        "ns/t/metadata/00000-x.metadata.json", "ns/t/metadata/snap-1.avro",
        "ns/t/data/", "ns/t/", "ns/", "a/b/c/t/metadata/v1.metadata.json"])
    def test_table_bucket_iceberg_paths(self, server, lake, key):
        if key.endswith("/"):
            put_empty(server, lake.rw, lake.table_bucket, key)
        else:
            put(lake.s3, lake.table_bucket, key, b"iceberg")
        assert lake.s3.head_object(Bucket=lake.table_bucket, Key=key)["ContentLength"] in (0, 7)

    @pytest.mark.parametrize("key", ["notes.txt", "ns/t/readme.md", "ns/t/data/x.csv",
                                     "ns/t/metadata/sub/v1.metadata.json", "t/data/x.parquet",
                                     "ns//t/data/x.parquet", "ns/t/../u/data/x.parquet"])
    def test_table_bucket_refuses_other_keys(self, lake, key):
        msg = assert_s3_error("InvalidArgument", 400, lake.s3.put_object,
                              Bucket=lake.table_bucket, Key=key, Body=b"x")
        assert lake.blob_bucket in msg
        assert_missing(lake.s3, lake.table_bucket, key)

    def test_table_bucket_refuses_non_iceberg_copy_and_multipart(self, lake):
        put(lake.s3, lake.blob_bucket, "src.bin", b"x")
        msg = assert_s3_error("InvalidArgument", 400, lake.s3.copy_object, Bucket=lake.table_bucket,
                              Key="loose.bin", CopySource=f"{lake.blob_bucket}/src.bin")
        assert lake.blob_bucket in msg
        assert_s3_error("InvalidArgument", 400, lake.s3.create_multipart_upload,
                        Bucket=lake.table_bucket, Key="loose.bin")
        # An Iceberg path may be multipart-uploaded.
        key = "ns/t/data/mp.parquet"
        uid = lake.s3.create_multipart_upload(Bucket=lake.table_bucket, Key=key)["UploadId"]
        etag = lake.s3.upload_part(Bucket=lake.table_bucket, Key=key, UploadId=uid, PartNumber=1,
                                   Body=b"PAR1")["ETag"]
        lake.s3.complete_multipart_upload(Bucket=lake.table_bucket, Key=key, UploadId=uid,
                                          MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
        assert get_body(lake.s3, lake.table_bucket, key) == b"PAR1"

    def test_cannot_create_or_delete_buckets(self, lake):
        assert_s3_error("AccessDenied", 403, lake.s3.create_bucket, Bucket=uniq("wh"))
        assert_s3_error("AccessDenied", 403, lake.s3.delete_bucket, Bucket=lake.blob_bucket)
        lake.s3.head_bucket(Bucket=lake.blob_bucket)

    def test_cannot_touch_other_accounts_or_operator_buckets(self, lake, other_lake, bucket):
        put(other_lake.s3, other_lake.blob_bucket, "theirs.txt", b"theirs")
        for b in (other_lake.blob_bucket, other_lake.table_bucket, bucket):
            assert_s3_error("AccessDenied", 403, lake.s3.list_objects_v2, Bucket=b)
        assert_s3_error("AccessDenied", 403, lake.s3.get_object, Bucket=other_lake.blob_bucket,
                        Key="theirs.txt")
        assert_s3_error("AccessDenied", 403, lake.s3.put_object, Bucket=other_lake.blob_bucket,
                        Key="mine.txt", Body=b"x")
        assert_s3_error("AccessDenied", 403, lake.s3.delete_object, Bucket=other_lake.blob_bucket,
                        Key="theirs.txt")
        assert_s3_error("AccessDenied", 403, lake.s3.copy_object, Bucket=lake.blob_bucket,
                        Key="stolen", CopySource=f"{other_lake.blob_bucket}/theirs.txt")
        r = lake.s3.delete_objects(Bucket=other_lake.blob_bucket, Delete={"Objects": [{"Key": "theirs.txt"}]})
        assert [e["Code"] for e in r.get("Errors", [])] == ["AccessDenied"]
        assert get_body(other_lake.s3, other_lake.blob_bucket, "theirs.txt") == b"theirs"

    def test_wrong_secret_for_warehouse_identity(self, server, lake):
        s3 = v4_client(server, lake.rw[0], lake.rw[1] + "x")
        assert_s3_error("SignatureDoesNotMatch", 403, s3.list_objects_v2, Bucket=lake.blob_bucket)

    def test_read_only_identity(self, server, lake):
        put(lake.s3, lake.blob_bucket, "ro/visible.txt", b"read me")
        put(lake.s3, lake.table_bucket, "ns/t/data/ro.parquet", b"PAR1")
        ro = v4_client(server, *lake.ro)
        assert get_body(ro, lake.blob_bucket, "ro/visible.txt") == b"read me"
        assert get_body(ro, lake.table_bucket, "ns/t/data/ro.parquet") == b"PAR1"
        assert "ro/visible.txt" in [o["Key"] for o in ro.list_objects_v2(
            Bucket=lake.blob_bucket, Prefix="ro/")["Contents"]]
        for b, k in ((lake.blob_bucket, "ro/new.txt"), (lake.table_bucket, "ns/t/data/new.parquet")):
            assert_s3_error("AccessDenied", 403, ro.put_object, Bucket=b, Key=k, Body=b"x")
            assert_s3_error("AccessDenied", 403, ro.create_multipart_upload, Bucket=b, Key=k)
            assert_missing(lake.s3, b, k)
        assert_s3_error("AccessDenied", 403, ro.delete_object, Bucket=lake.blob_bucket, Key="ro/visible.txt")
        assert_s3_error("AccessDenied", 403, ro.copy_object, Bucket=lake.blob_bucket, Key="ro/copy.txt",
                        CopySource=f"{lake.blob_bucket}/ro/visible.txt")
        r = ro.delete_objects(Bucket=lake.blob_bucket, Delete={"Objects": [{"Key": "ro/visible.txt"}]})
        assert [e["Code"] for e in r.get("Errors", [])] == ["AccessDenied"]
        # Nor may it finish or abort an upload started by the read-write identity.
        uid = lake.s3.create_multipart_upload(Bucket=lake.blob_bucket, Key="ro/mp")["UploadId"]
        assert_s3_error("AccessDenied", 403, ro.upload_part, Bucket=lake.blob_bucket, Key="ro/mp",
                        UploadId=uid, PartNumber=1, Body=b"x")
        assert_s3_error("AccessDenied", 403, ro.upload_part_copy, Bucket=lake.blob_bucket, Key="ro/mp",
                        UploadId=uid, PartNumber=1, CopySource=f"{lake.blob_bucket}/ro/visible.txt")
        assert lake.s3.list_parts(Bucket=lake.blob_bucket, Key="ro/mp", UploadId=uid).get("Parts", []) == []
        assert_s3_error("AccessDenied", 403, ro.abort_multipart_upload, Bucket=lake.blob_bucket,
                        Key="ro/mp", UploadId=uid)
        assert_s3_error("AccessDenied", 403, ro.complete_multipart_upload, Bucket=lake.blob_bucket,
                        Key="ro/mp", UploadId=uid, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": "x"}]})
        assert get_body(ro, lake.blob_bucket, "ro/visible.txt") == b"read me"


# =====================================================================================
# Vended table sessions
# =====================================================================================

class TestVendedSessions:
    def test_session_shape(self, tables):
        key, secret, token = tables["t"]
        assert key.startswith("TMS") and len(key) == 23
        assert token.startswith("tm1.") and secret

    def test_read_write_inside_table(self, server, lake, tables):
        ns = tables["ns"]
        s = v4_client(server, *tables["t"])
        b = lake.table_bucket
        put(s, b, f"{ns}/t/data/x.parquet", b"PAR1 data")
        put(s, b, f"{ns}/t/metadata/00001-x.metadata.json", b"{}")
        put_empty(server, tables["t"], b, f"{ns}/t/data/")
        assert get_body(s, b, f"{ns}/t/data/x.parquet") == b"PAR1 data"
        keys = [o["Key"] for o in s.list_objects_v2(Bucket=b, Prefix=f"{ns}/t/")["Contents"]]
        assert {f"{ns}/t/data/x.parquet", f"{ns}/t/metadata/00001-x.metadata.json"} <= set(keys)
        # The catalog's own first metadata file is there too.
        assert any(k.startswith(f"{ns}/t/metadata/00000-") for k in keys)
        s.head_bucket(Bucket=b)
        s.copy_object(Bucket=b, Key=f"{ns}/t/data/y.parquet", CopySource=f"{b}/{ns}/t/data/x.parquet")
        s.delete_object(Bucket=b, Key=f"{ns}/t/data/x.parquet")
        assert_missing(s, b, f"{ns}/t/data/x.parquet")
        uid = s.create_multipart_upload(Bucket=b, Key=f"{ns}/t/data/mp.parquet")["UploadId"]
        etag = s.upload_part(Bucket=b, Key=f"{ns}/t/data/mp.parquet", UploadId=uid, PartNumber=1,
                             Body=b"mp")["ETag"]
        s.complete_multipart_upload(Bucket=b, Key=f"{ns}/t/data/mp.parquet", UploadId=uid,
                                    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
        r = s.delete_objects(Bucket=b, Delete={"Objects": [{"Key": f"{ns}/t/data/y.parquet"},
                                                           {"Key": f"{ns}/t/data/mp.parquet"}]})
        assert len(r["Deleted"]) == 2

    def test_refused_outside_table(self, server, lake, tables):
        ns = tables["ns"]
        s = v4_client(server, *tables["t"])
        b = lake.table_bucket
        put(lake.s3, b, f"{ns}/t2/data/other.parquet", b"other table")
        assert_s3_error("AccessDenied", 403, s.get_object, Bucket=b, Key=f"{ns}/t2/data/other.parquet")
        assert_s3_error("AccessDenied", 403, s.put_object, Bucket=b, Key=f"{ns}/t2/data/z.parquet", Body=b"x")
        assert_s3_error("AccessDenied", 403, s.delete_object, Bucket=b, Key=f"{ns}/t2/data/other.parquet")
        assert_s3_error("AccessDenied", 403, s.list_objects_v2, Bucket=b, Prefix=f"{ns}/t2/")
        assert_s3_error("AccessDenied", 403, s.list_objects_v2, Bucket=b)
        assert_s3_error("AccessDenied", 403, s.copy_object, Bucket=b, Key=f"{ns}/t/data/c.parquet",
                        CopySource=f"{b}/{ns}/t2/data/other.parquet")
        assert_s3_error("AccessDenied", 403, s.put_object, Bucket=lake.blob_bucket, Key="x", Body=b"x")
        assert_s3_error("AccessDenied", 403, s.list_objects_v2, Bucket=lake.blob_bucket)
        assert_s3_error("AccessDenied", 403, s.list_buckets)
        assert_s3_error("AccessDenied", 403, s.create_bucket, Bucket=uniq("sess"))
        r = s.delete_objects(Bucket=b, Delete={"Objects": [{"Key": f"{ns}/t2/data/other.parquet"}]})
        assert [e["Code"] for e in r["Errors"]] == ["AccessDenied"]
        uid = s.create_multipart_upload(Bucket=b, Key=f"{ns}/t/data/pc.parquet")["UploadId"]
        assert_s3_error("AccessDenied", 403, s.upload_part_copy, Bucket=b, Key=f"{ns}/t/data/pc.parquet",
                        UploadId=uid, PartNumber=1, CopySource=f"{b}/{ns}/t2/data/other.parquet")
        s.abort_multipart_upload(Bucket=b, Key=f"{ns}/t/data/pc.parquet", UploadId=uid)
        assert get_body(lake.s3, b, f"{ns}/t2/data/other.parquet") == b"other table"

    def test_listing_table_prefix_without_slash_shows_only_this_table(self, server, lake, tables):
        # `ns/t` (no slash, as S3FileIO.listPrefix sends a table location) is allowed, but
        # it also matches `ns/t2/` (sorts after `ns/t/`) and `ns/t-x/` (sorts before):
        # neither may show up, not even as a paging marker.
        ns, b = tables["ns"], lake.table_bucket
        for k in (f"{ns}/t2/data/hidden.parquet", f"{ns}/t-x/data/before.parquet",
                  f"{ns}/t-x/data/before2.parquet"):
            put(lake.s3, b, k, b"x")
        put(lake.s3, b, f"{ns}/t/data/seen.parquet", b"x")
        s = v4_client(server, *tables["t"])
        mine = [o["Key"] for o in lake.s3.list_objects_v2(Bucket=b, Prefix=f"{ns}/t/")["Contents"]]
        r = s.list_objects_v2(Bucket=b, Prefix=f"{ns}/t")
        assert [o["Key"] for o in r["Contents"]] == mine
        # One key per page: every page and every marker stays inside the table.
        seen, token = [], None
        for _ in range(len(mine) + 2):
            kw = {"ContinuationToken": token} if token else {}
            r = s.list_objects_v2(Bucket=b, Prefix=f"{ns}/t", MaxKeys=1, **kw)
            seen += [o["Key"] for o in r.get("Contents", [])]
            if not r["IsTruncated"]:
                break
            token = r["NextContinuationToken"]
            assert base64.urlsafe_b64decode(token + "==").decode().startswith(f"{ns}/t/")
        assert seen == mine
        seen, marker = [], ""
        for _ in range(len(mine) + 2):
            r = s.list_objects(Bucket=b, Prefix=f"{ns}/t", MaxKeys=1, Marker=marker)
            seen += [o["Key"] for o in r.get("Contents", [])]
            if not r["IsTruncated"]:
                break
            marker = r["NextMarker"]
            assert marker.startswith(f"{ns}/t/")
        assert seen == mine
        r = s.list_objects_v2(Bucket=b, Prefix=f"{ns}/t", Delimiter="/")
        assert [c["Prefix"] for c in r.get("CommonPrefixes", [])] == [f"{ns}/t/"]
        assert "Contents" not in r and not r["IsTruncated"]
        r = s.list_objects(Bucket=b, Prefix=f"{ns}/t", Delimiter="/", Marker=f"{ns}/t/")
        assert "CommonPrefixes" not in r and "Contents" not in r
        r = s.list_object_versions(Bucket=b, Prefix=f"{ns}/t")
        assert [v["Key"] for v in r["Versions"]] == mine
        uid = lake.s3.create_multipart_upload(Bucket=b, Key=f"{ns}/t2/data/up.parquet")["UploadId"]
        try:
            r = s.list_multipart_uploads(Bucket=b, Prefix=f"{ns}/t")
            assert all(u["Key"].startswith(f"{ns}/t/") for u in r.get("Uploads", []))
        finally:
            lake.s3.abort_multipart_upload(Bucket=b, Key=f"{ns}/t2/data/up.parquet", UploadId=uid)

    def test_non_iceberg_key_inside_table_prefix(self, server, lake, tables):
        s = v4_client(server, *tables["t"])
        msg = assert_s3_error("InvalidArgument", 400, s.put_object, Bucket=lake.table_bucket,
                              Key=f"{tables['ns']}/t/notes.txt", Body=b"x")
        assert lake.blob_bucket in msg

    def test_tampered_token(self, server, lake, tables):
        key, secret, token = tables["t"]
        i = len(token) // 2
        bad = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1:]
        s = v4_client(server, key, secret, bad)
        assert_s3_error("InvalidToken", 400, s.get_object, Bucket=lake.table_bucket,
                        Key=f"{tables['ns']}/t/data/x.parquet")
        s = v4_client(server, key, secret, "tm1.garbage")
        assert_s3_error("InvalidToken", 400, s.list_objects_v2, Bucket=lake.table_bucket,
                        Prefix=f"{tables['ns']}/t/")

    def test_token_with_another_sessions_key(self, server, lake, tables):
        key_t, secret_t, _ = tables["t"]
        _, _, token_t2 = tables["t2"]
        s = v4_client(server, key_t, secret_t, token_t2)
        assert_s3_error("InvalidToken", 400, s.list_objects_v2, Bucket=lake.table_bucket,
                        Prefix=f"{tables['ns']}/t/")

    def test_session_key_without_token(self, server, lake, tables):
        key, secret, _ = tables["t"]
        s = v4_client(server, key, secret)
        assert_s3_error("InvalidToken", 400, s.list_objects_v2, Bucket=lake.table_bucket,
                        Prefix=f"{tables['ns']}/t/")

    def test_wrong_session_secret(self, server, lake, tables):
        key, secret, token = tables["t"]
        s = v4_client(server, key, secret[:-1] + ("A" if secret[-1] != "A" else "B"), token)
        assert_s3_error("SignatureDoesNotMatch", 403, s.list_objects_v2, Bucket=lake.table_bucket,
                        Prefix=f"{tables['ns']}/t/")

    def test_presigned_with_session(self, server, lake, tables):
        ns = tables["ns"]
        put(lake.s3, lake.table_bucket, f"{ns}/t/data/pre.parquet", b"presigned session")
        s = v4_client(server, *tables["t"])
        url = s.generate_presigned_url("get_object", Params={"Bucket": lake.table_bucket,
                                                             "Key": f"{ns}/t/data/pre.parquet"})
        assert "X-Amz-Security-Token=" in url
        r = requests.get(url)
        assert r.status_code == 200 and r.content == b"presigned session"

    def test_read_only_session(self, server, lake, tables):
        ns = tables["ns"]
        put(lake.s3, lake.table_bucket, f"{ns}/t/data/ro.parquet", b"readable")
        ro_catalog = Catalog(server, lake.id, catalog_token(server, *lake.ro))
        session = ro_catalog.load_table(ns, "t")
        s = v4_client(server, *session)
        assert get_body(s, lake.table_bucket, f"{ns}/t/data/ro.parquet") == b"readable"
        assert s.list_objects_v2(Bucket=lake.table_bucket, Prefix=f"{ns}/t/")["KeyCount"] >= 1
        assert_s3_error("AccessDenied", 403, s.put_object, Bucket=lake.table_bucket,
                        Key=f"{ns}/t/data/w.parquet", Body=b"x")
        assert_s3_error("AccessDenied", 403, s.delete_object, Bucket=lake.table_bucket,
                        Key=f"{ns}/t/data/ro.parquet")
        assert_s3_error("AccessDenied", 403, s.create_multipart_upload, Bucket=lake.table_bucket,
                        Key=f"{ns}/t/data/w.parquet")
        assert_missing(lake.s3, lake.table_bucket, f"{ns}/t/data/w.parquet")
        assert get_body(s, lake.table_bucket, f"{ns}/t/data/ro.parquet") == b"readable"

    def test_aws_chunked_with_session(self, server, lake, tables):
        ns = tables["ns"]
        key = f"{ns}/t/data/chunked.parquet"
        data = os.urandom(20000)
        status, _, body = aws_chunked_put(object_url(server, lake.table_bucket, key), tables["t"],
                                          data, STREAMING_SIGNED_TRAILER)
        assert status == 200, body
        assert get_body(lake.s3, lake.table_bucket, key) == data


class TestSessionExpiry:
    def test_session_expires(self):
        srv = Server(extra_env={"TABLEMERE_SESSION_SECONDS": "1"})
        try:
            lake = Lake(srv, srv.signup())
            session = lake.catalog.create_table("ns", "t")
            s = v4_client(srv, *session)
            key = "ns/t/data/live.parquet"
            put(s, lake.table_bucket, key, b"before expiry")

            def expired():
                try:
                    s.head_object(Bucket=lake.table_bucket, Key=key)
                    return None
                except ClientError as e:
                    return e
            poll_until(expired, timeout=15, what="the session to expire")
            code, status, _ = s3_error(s.get_object, Bucket=lake.table_bucket, Key=key)
            assert (code, status) == ("ExpiredToken", 400)
            assert_s3_error("ExpiredToken", 400, s.put_object, Bucket=lake.table_bucket,
                            Key="ns/t/data/late.parquet", Body=b"x")
            # A freshly vended session works again.
            fresh = v4_client(srv, *lake.catalog.load_table("ns", "t"))
            assert get_body(fresh, lake.table_bucket, key) == b"before expiry"
        finally:
            srv.cleanup()


# =====================================================================================
# Atomicity of writes
# =====================================================================================

class TestAtomicity:
    def _short_put(self, server, bucket, key, declared, sent):
        url = object_url(server, bucket, key)
        full = os.urandom(declared)
        s = sign("PUT", url, OP1, {}, hashlib.sha256(full).hexdigest())
        conn = RawConn(url)
        try:
            conn.send_head("PUT", urlsplit(url).path, {**s.headers, "Content-Length": declared})
            conn.sock.sendall(full[:sent])
            conn.sock.shutdown(socket.SHUT_WR)
            # Whatever the server answers (an error, or just closing), it has finished
            # with the request once the connection ends.
            chunks = []
            while True:
                data = conn.sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
            response = b"".join(chunks)
        finally:
            conn.close()
        assert not response.startswith(b"HTTP/1.1 200"), response[:200]
        return response

    def test_short_body_leaves_no_object(self, op1, server, bucket):
        key = uniq("short")
        self._short_put(server, bucket, key, declared=100000, sent=40000)
        assert_missing(op1, bucket, key)

    def test_short_body_keeps_previous_version(self, op1, server, bucket):
        key = uniq("short-over")
        put(op1, bucket, key, b"the original")
        self._short_put(server, bucket, key, declared=5000, sent=10)
        assert get_body(op1, bucket, key) == b"the original"

    def test_concurrent_overwrites_never_mix(self, op1, bucket):
        key = uniq("race")
        bodies = [bytes([i]) * (256 * 1024 + i) for i in range(8)]
        with ThreadPoolExecutor(8) as pool:
            etags = list(pool.map(lambda b: put(op1, bucket, key, b)["ETag"], bodies))
        got = op1.get_object(Bucket=bucket, Key=key)
        body = got["Body"].read()
        assert body in bodies
        assert got["ETag"] == f'"{md5_hex(body)}"' and got["ETag"] in etags

    def test_truncated_transfer_encoding_chunked_body(self, op1, server, bucket):
        # HTTP chunked framing that stops mid-chunk, without the closing 0-chunk.
        key = uniq("short-te")
        url = object_url(server, bucket, key)
        s = sign("PUT", url, OP1, {}, "UNSIGNED-PAYLOAD")
        conn = RawConn(url)
        try:
            conn.send_head("PUT", urlsplit(url).path, {**s.headers, "Transfer-Encoding": "chunked"})
            conn.sock.sendall(b"400\r\n" + b"z" * 100)
            conn.sock.shutdown(socket.SHUT_WR)
            while conn.sock.recv(65536):
                pass
        finally:
            conn.close()
        assert_missing(op1, bucket, key)

    def test_short_part_is_not_stored(self, op1, server, bucket):
        key = uniq("short-part")
        uid = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        url = object_url(server, bucket, key, f"partNumber=1&uploadId={uid}")
        full = os.urandom(3000)
        s = sign("PUT", url, OP1, {}, hashlib.sha256(full).hexdigest())
        conn = RawConn(url)
        try:
            u = urlsplit(url)
            conn.send_head("PUT", u.path + "?" + u.query, {**s.headers, "Content-Length": 3000})
            conn.sock.sendall(full[:1000])
            conn.sock.shutdown(socket.SHUT_WR)
            while conn.sock.recv(65536):
                pass
        finally:
            conn.close()
        assert op1.list_parts(Bucket=bucket, Key=key, UploadId=uid).get("Parts", []) == []


# =====================================================================================
# The AWS CLI
# =====================================================================================

@pytest.fixture(scope="module")
def aws(server, tmp_path_factory):
    """Runs the AWS CLI as operator1 against the server, isolated from any local config."""
    home = tmp_path_factory.mktemp("awscli")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_ACCESS_KEY_ID": "operator1", "AWS_SECRET_ACCESS_KEY": OPERATORS["operator1"],
                "AWS_DEFAULT_REGION": REGION, "AWS_CONFIG_FILE": str(home / "config"),
                "AWS_SHARED_CREDENTIALS_FILE": str(home / "credentials"),
                "AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "1", "HOME": str(home)})

    def run(*args, check=True, stdin=None):
        p = subprocess.run(["aws", "--endpoint-url", server.s3, *args], env=env, input=stdin,
                           capture_output=True, timeout=60)
        if check:
            assert p.returncode == 0, p.stderr.decode()
        return p
    return run


class TestAwsCli:
    def test_cli_round_trip(self, aws, op1, tmp_path):
        name = uniq("cli")
        aws("s3", "mb", f"s3://{name}")
        small = tmp_path / "small.txt"
        small.write_bytes(b"hello from the aws cli\n")
        big = tmp_path / "big.bin"
        big_data = os.urandom(9 * MIB)  # above the CLI's 8 MiB multipart threshold
        big.write_bytes(big_data)
        aws("s3", "cp", str(small), f"s3://{name}/dir/small.txt")
        aws("s3", "cp", str(big), f"s3://{name}/dir/big bin+1.bin")
        listing = aws("s3", "ls", f"s3://{name}/dir/").stdout.decode()
        assert "small.txt" in listing and "big bin+1.bin" in listing
        head = op1.head_object(Bucket=name, Key="dir/big bin+1.bin")
        assert head["ContentLength"] == 9 * MIB
        assert head["ETag"].endswith('-2"')  # it really went multipart
        assert get_body(op1, name, "dir/big bin+1.bin") == big_data
        assert aws("s3", "cp", f"s3://{name}/dir/small.txt", "-").stdout == small.read_bytes()
        # Server-side copy of a large object (UploadPartCopy underneath).
        aws("s3", "cp", f"s3://{name}/dir/big bin+1.bin", f"s3://{name}/dir/big-copy.bin")
        assert op1.head_object(Bucket=name, Key="dir/big-copy.bin")["ETag"].endswith('-2"')
        assert get_body(op1, name, "dir/big-copy.bin") == big_data
        # And a download through the CLI's ranged, parallel GETs.
        aws("s3", "cp", f"s3://{name}/dir/big-copy.bin", str(tmp_path / "down.bin"))
        assert (tmp_path / "down.bin").read_bytes() == big_data
        meta = json.loads(aws("s3api", "head-object", "--bucket", name, "--key", "dir/small.txt").stdout)
        assert meta["ContentLength"] == len(small.read_bytes())
        aws("s3api", "put-object", "--bucket", name, "--key", "meta.txt", "--body", str(small),
            "--metadata", "origin=cli", "--content-type", "text/plain")
        got = op1.head_object(Bucket=name, Key="meta.txt")
        assert got["Metadata"] == {"origin": "cli"} and got["ContentType"] == "text/plain"
        failed = aws("s3", "rb", f"s3://{name}", check=False)
        assert failed.returncode != 0 and b"BucketNotEmpty" in failed.stderr
        aws("s3", "rm", f"s3://{name}/", "--recursive")
        assert op1.list_objects_v2(Bucket=name)["KeyCount"] == 0
        aws("s3", "rb", f"s3://{name}")
        assert s3_error(op1.head_bucket, Bucket=name)[:2] == ("404", 404)

    def test_cli_errors(self, aws, bucket):
        p = aws("s3api", "get-object", "--bucket", bucket, "--key", uniq("none"), "/dev/null", check=False)
        assert p.returncode != 0 and b"NoSuchKey" in p.stderr


class TestConditionalWrites:
    """If-None-Match: * and If-Match are decided atomically at publish time: of many
    racing conditional writers exactly one wins (Delta's commit protocol relies on it)."""

    def test_racing_if_none_match_writers_have_exactly_one_winner(self, op1, bucket):
        import threading

        key = uniq("race")
        outcomes = []
        lock = threading.Lock()

        def writer(i):
            try:
                op1.put_object(Bucket=bucket, Key=key, Body=f"writer-{i}".encode() * 1000,
                               IfNoneMatch="*")
                result = ("ok", i)
            except botocore.exceptions.ClientError as e:
                result = (e.response["Error"]["Code"], i)
            with lock:
                outcomes.append(result)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for code, i in outcomes if code == "ok"]
        assert len(winners) == 1, outcomes
        assert sorted(code for code, _ in outcomes if code != "ok") == ["PreconditionFailed"] * 7
        body = op1.get_object(Bucket=bucket, Key=key)["Body"].read()
        assert body == f"writer-{winners[0]}".encode() * 1000

    def test_if_match_replaces_only_the_expected_version(self, op1, bucket):
        key = uniq("ifmatch")
        first = op1.put_object(Bucket=bucket, Key=key, Body=b"v1")["ETag"]
        second = op1.put_object(Bucket=bucket, Key=key, Body=b"v2", IfMatch=first)["ETag"]
        assert_s3_error("PreconditionFailed", 412, op1.put_object, Bucket=bucket, Key=key,
                        Body=b"v3", IfMatch=first)
        assert op1.get_object(Bucket=bucket, Key=key)["ETag"] == second


class TestKeyLimits:
    def test_keys_over_1024_bytes_are_refused(self, op1, bucket, server):
        limit = server.max_key_bytes(bucket)
        assert_s3_error("KeyTooLongError", 400, op1.put_object, Bucket=bucket,
                        Key="k" * (limit + 1), Body=b"x")
        op1.put_object(Bucket=bucket, Key=long_key(limit), Body=b"x")
        assert op1.head_object(Bucket=bucket, Key=long_key(limit))["ContentLength"] == 1


# =====================================================================================
# Behaviours a general S3 conformance run relies on
# =====================================================================================

class TestConformance:
    def test_delete_objects_takes_whitespace_keys_byte_exact(self, op1, bucket):
        keys = [" ", "_ ", " lead", "tail\t"]
        for k in keys:
            put(op1, bucket, k, b"w")
        r = op1.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys],
                                                      "Quiet": True})
        assert r.get("Errors", []) == []
        for k in keys:
            assert_missing(op1, bucket, k)

    def test_delete_objects_lists_an_empty_key_under_errors(self, server, bucket):
        xml = b"<Delete><Quiet>true</Quiet><Object><Key></Key></Object></Delete>"
        status, _, body = signed_send("POST", object_url(server, bucket, query="delete="), OP1, xml)
        assert status == 200
        errors = ET.fromstring(body).findall(f"{S3_NS}Error")
        assert len(errors) == 1 and errors[0].find(f"{S3_NS}Code").text == "InvalidArgument"

    @pytest.mark.parametrize("value", ["not base64!", b64(b"short")])
    def test_malformed_content_md5_is_invalid_digest(self, op1, server, bucket, value):
        key = uniq("md5form")
        status, _, body = signed_send("PUT", object_url(server, bucket, key), OP1, b"hello",
                                      headers={"Content-MD5": value})
        assert status == 400 and xml_error_code(body) == "InvalidDigest"
        assert_missing(op1, bucket, key)
        xml = b"<Delete><Object><Key>x</Key></Object></Delete>"
        status, _, body = signed_send("POST", object_url(server, bucket, query="delete="), OP1, xml,
                                      headers={"Content-MD5": value})
        assert status == 400 and xml_error_code(body) == "InvalidDigest"

    def test_list_v2_echoes_an_empty_continuation_token(self, op1, bucket):
        r = op1.list_objects_v2(Bucket=bucket, ContinuationToken="")
        assert r["ContinuationToken"] == ""

    def test_content_encoding_is_kept_as_sent(self, op1, bucket):
        key = uniq("enc")
        put(op1, bucket, key, b"z", ContentEncoding="deflate, gzip")
        assert op1.head_object(Bucket=bucket, Key=key)["ContentEncoding"] == "deflate, gzip"

    def test_presign_beyond_a_week_is_refused(self, op1, bucket):
        key = uniq("week")
        put(op1, bucket, key, b"p")
        ok = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key},
                                        ExpiresIn=604800)
        assert requests.get(ok).status_code == 200
        url = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key},
                                         ExpiresIn=609901)
        r = requests.get(url)
        assert r.status_code == 403 and xml_error_code(r.content) == "AccessDenied"

    def test_negative_content_length_is_answered_400(self, server, bucket):
        u = urlsplit(server.s3)
        with socket.create_connection((u.hostname, u.port), timeout=10) as s:
            s.sendall(f"PUT /{bucket}/neg HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".encode())
            answer = s.recv(4096)
        assert answer.startswith(b"HTTP/1.1 400")

    def test_options_without_origin_is_400(self, server, bucket):
        r = requests.options(object_url(server, bucket, "k"))
        assert r.status_code == 400 and xml_error_code(r.content) == "BadRequest"

    def test_retried_complete_multipart_answers_the_same_etag(self, op1, bucket):
        key = uniq("retry")
        up = op1.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        parts = []
        for n, data in ((1, b"a" * (5 * MIB)), (2, b"tail")):
            etag = op1.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=n, Body=data)["ETag"]
            parts.append({"PartNumber": n, "ETag": etag})
        first = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=up,
                                              MultipartUpload={"Parts": parts})
        again = op1.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=up,
                                              MultipartUpload={"Parts": parts})
        assert again["ETag"] == first["ETag"]
        # Other parts than the ones completed are still refused.
        code, status, _ = s3_error(op1.complete_multipart_upload, Bucket=bucket, Key=key,
                                   UploadId=up, MultipartUpload={"Parts": parts[:1]})
        assert (code, status) == ("NoSuchUpload", 404)

    def test_expected_bucket_owner_is_checked(self, op1, bucket):
        assert op1.list_objects_v2(Bucket=bucket, ExpectedBucketOwner=OP1[0])["KeyCount"] >= 0
        code, status, _ = s3_error(op1.list_objects_v2, Bucket=bucket,
                                   ExpectedBucketOwner="111122223333")
        assert (code, status) == ("AccessDenied", 403)
        key = uniq("owner")
        code, status, _ = s3_error(op1.put_object, Bucket=bucket, Key=key, Body=b"x",
                                   ExpectedBucketOwner="111122223333")
        assert (code, status) == ("AccessDenied", 403)
        assert_missing(op1, bucket, key)

    def test_listings_name_the_bucket_owner(self, op1, bucket):
        key = uniq("owned")
        put(op1, bucket, key, b"o")
        v1 = op1.list_objects(Bucket=bucket, Prefix=key)["Contents"][0]["Owner"]
        v2 = op1.list_objects_v2(Bucket=bucket, Prefix=key, FetchOwner=True)["Contents"][0]["Owner"]
        versions = op1.list_object_versions(Bucket=bucket, Prefix=key)["Versions"][0]["Owner"]
        assert v1["ID"] == v2["ID"] == versions["ID"] == OP1[0]

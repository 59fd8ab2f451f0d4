"""POST uploads as older tools and browsers send them: Signature Version 2 policies
(base64 HMAC-SHA1 of the policy), anonymous forms into a public-read-write bucket, tags
and checksums given as form fields (the SigV4 forms boto3 builds: test_s3_semantics.py)."""

import base64
import datetime
import hashlib
import hmac
import json

import requests

from test_s3 import OP1, assert_missing, assert_s3_error, object_url, uniq, xml_error_code
from test_s3 import op1, op2  # noqa: F401 (fixtures)

TAGGING = ("<Tagging><TagSet><Tag><Key>0</Key><Value>zero</Value></Tag>"
           "<Tag><Key>1</Key><Value>one</Value></Tag></TagSet></Tagging>")


def v2_form(bucket, secret, access_key, conditions, expires_in=600, **fields):
    """Form fields of a SigV2-signed POST whose policy holds `conditions`."""
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=expires_in)
    policy = base64.b64encode(json.dumps({
        "expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "conditions": [{"bucket": bucket}] + conditions}).encode())
    signature = base64.b64encode(hmac.new(secret.encode(), policy, hashlib.sha1).digest())
    return {"AWSAccessKeyId": access_key, "policy": policy.decode(),
            "signature": signature.decode(), **fields}


def post(server, bucket, fields, body=b"bar"):
    files = list(fields.items()) + [("file", ("f.txt", body, "text/plain"))]
    return requests.post(object_url(server, bucket), files=files, allow_redirects=False)


def refused(r, status, code):
    assert r.status_code == status, r.text
    assert xml_error_code(r.content) == code, r.text


CONDITIONS = [["starts-with", "$key", "foo"], {"acl": "private"},
              ["starts-with", "$Content-Type", "text/plain"], ["content-length-range", 0, 1024]]


def test_a_v2_signed_policy_uploads(op1, server):
    bucket = uniq("v2")
    op1.create_bucket(Bucket=bucket)
    fields = v2_form(bucket, OP1[1], OP1[0], CONDITIONS, key="foo.txt", acl="private",
                     **{"Content-Type": "text/plain"})
    r = post(server, bucket, fields)
    assert r.status_code == 204, r.text
    got = op1.get_object(Bucket=bucket, Key="foo.txt")
    assert got["Body"].read() == b"bar" and got["ContentType"] == "text/plain"
    # success_action_status and its conditions work as for SigV4 forms.
    fields = v2_form(bucket, OP1[1], OP1[0], CONDITIONS + [{"success_action_status": "201"}],
                     key="foo2.txt", acl="private", success_action_status="201",
                     **{"Content-Type": "text/plain"})
    r = post(server, bucket, fields)
    assert r.status_code == 201 and "<Key>foo2.txt</Key>" in r.text


def test_v2_forms_that_do_not_verify_change_nothing(op1, op2, server):
    bucket = uniq("v2")
    op1.create_bucket(Bucket=bucket)
    good = v2_form(bucket, OP1[1], OP1[0], CONDITIONS, key="foo.txt", acl="private",
                   **{"Content-Type": "text/plain"})
    refused(post(server, bucket, good | {"signature": base64.b64encode(b"x" * 20).decode()}),
            403, "SignatureDoesNotMatch")
    # Signed with someone else's secret under this access key.
    from test_s3 import OPERATORS
    refused(post(server, bucket, v2_form(bucket, OPERATORS["operator2"], OP1[0], CONDITIONS,
                                         key="foo.txt", acl="private",
                                         **{"Content-Type": "text/plain"})),
            403, "SignatureDoesNotMatch")
    refused(post(server, bucket, good | {"AWSAccessKeyId": "nobody"}), 403, "InvalidAccessKeyId")
    missing = dict(good)
    del missing["signature"]
    r = post(server, bucket, missing)
    refused(r, 400, "InvalidArgument")
    assert "Signature" in r.text
    # A field the policy does not name, an expired policy, a body over the range.
    refused(post(server, bucket, good | {"x-amz-meta-who": "mallory"}), 403, "AccessDenied")
    expired = v2_form(bucket, OP1[1], OP1[0], CONDITIONS, expires_in=-60, key="foo.txt",
                      acl="private", **{"Content-Type": "text/plain"})
    refused(post(server, bucket, expired), 403, "AccessDenied")
    refused(post(server, bucket, good, body=b"x" * 1025), 400, "EntityTooLarge")
    # A signer who may not write the bucket.
    theirs = v2_form(bucket, OPERATORS["operator2"], "operator2", CONDITIONS, key="foo.txt",
                     acl="private", **{"Content-Type": "text/plain"})
    refused(post(server, bucket, theirs), 403, "AccessDenied")
    # Signed both ways at once.
    both = good | {"x-amz-algorithm": "AWS4-HMAC-SHA256"}
    refused(post(server, bucket, both), 400, "InvalidArgument")
    assert_missing(op1, bucket, "foo.txt")


def test_an_anonymous_form_writes_only_where_all_users_may(op1, server):
    open_bucket = uniq("anon")
    op1.create_bucket(Bucket=open_bucket, ACL="public-read-write")
    fields = {"key": "foo.txt", "acl": "public-read", "Content-Type": "text/plain",
              "tagging": TAGGING}
    r = post(server, open_bucket, fields)
    assert r.status_code == 204, r.text
    assert op1.get_object(Bucket=open_bucket, Key="foo.txt")["Body"].read() == b"bar"
    assert {t["Key"]: t["Value"] for t in
            op1.get_object_tagging(Bucket=open_bucket, Key="foo.txt")["TagSet"]} == \
        {"0": "zero", "1": "one"}
    # The object is readable by anyone, as its ACL asked.
    assert requests.get(object_url(server, open_bucket, "foo.txt")).content == b"bar"

    closed = uniq("anon")
    op1.create_bucket(Bucket=closed)
    refused(post(server, closed, {"key": "foo.txt"}), 403, "AccessDenied")
    read_only = uniq("anon")
    op1.create_bucket(Bucket=read_only, ACL="public-read")
    refused(post(server, read_only, {"key": "foo.txt"}), 403, "AccessDenied")
    for b in (closed, read_only):
        assert_missing(op1, b, "foo.txt")


def test_form_tags_and_checksums_are_kept_or_refused(op1, server):
    bucket = uniq("v2")
    op1.create_bucket(Bucket=bucket)
    conditions = CONDITIONS + [["starts-with", "$tagging", ""],
                               ["starts-with", "$x-amz-checksum-sha256", ""]]
    body = b"x" * 1000
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
    fields = v2_form(bucket, OP1[1], OP1[0], conditions, key="foo.txt", acl="private",
                     tagging=TAGGING, **{"Content-Type": "text/plain",
                                         "x-amz-checksum-sha256": digest})
    r = post(server, bucket, fields, body=body)
    assert r.status_code == 204, r.text
    head = op1.head_object(Bucket=bucket, Key="foo.txt", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == digest
    assert len(op1.get_object_tagging(Bucket=bucket, Key="foo.txt")["TagSet"]) == 2

    # A checksum the file does not have, or that is not one at all: nothing is stored.
    wrong = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    for value, code in ((wrong, "BadDigest"), ("sailorjerry", "InvalidRequest")):
        fields = v2_form(bucket, OP1[1], OP1[0], conditions, key="foo-bad.txt", acl="private",
                         **{"Content-Type": "text/plain", "x-amz-checksum-sha256": value})
        refused(post(server, bucket, fields, body=body), 400, code)
    # Tags that are not a Tagging document.
    fields = v2_form(bucket, OP1[1], OP1[0], conditions, key="foo-bad.txt", acl="private",
                     tagging="<Tagging>", **{"Content-Type": "text/plain"})
    refused(post(server, bucket, fields), 400, "MalformedXML")
    assert_missing(op1, bucket, "foo-bad.txt")
    assert_s3_error("NoSuchKey", 404, op1.get_object, Bucket=bucket, Key="foo-bad.txt")

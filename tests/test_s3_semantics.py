"""Black-box tests of the S3 behaviours clients rely on beyond reads and writes:
GetObjectAttributes, paginated ListBuckets, conditional CompleteMultipartUpload,
object and bucket tagging with S3's limits, and canned ACLs with anonymous reads of
public-read buckets and objects. Clients are boto3 (signed and UNSIGNED) and raw HTTP."""

import base64
import time
import zlib

import boto3
import pytest
import requests
from botocore import UNSIGNED
from botocore.config import Config

from test_s3 import MIB, REGION, assert_missing, assert_s3_error, s3_error, uniq
from test_s3 import op1, op2  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def anon(server):
    cfg = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"},
                 retries={"total_max_attempts": 1, "mode": "standard"})
    return boto3.client("s3", endpoint_url=server.s3, region_name=REGION, config=cfg)


@pytest.fixture()
def bucket(op1):
    name = uniq("sem")
    op1.create_bucket(Bucket=name)
    return name


def crc32_b64(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def multipart(s3, bucket, key, parts, **create):
    up = s3.create_multipart_upload(Bucket=bucket, Key=key, **create)
    done = []
    for i, data in enumerate(parts, 1):
        kw = {"ChecksumAlgorithm": "CRC32"} if create.get("ChecksumAlgorithm") else {}
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=up["UploadId"], PartNumber=i,
                           Body=data, **kw)
        part = {"PartNumber": i, "ETag": r["ETag"]}
        if "ChecksumCRC32" in r:
            part["ChecksumCRC32"] = r["ChecksumCRC32"]
        done.append(part)
    return up["UploadId"], done


# ----------------------------------------------------------------- GetObjectAttributes

def test_object_attributes_of_a_multipart_upload_with_checksums(op1, bucket):
    parts = [b"a" * (5 * MIB), b"b" * (5 * MIB), b"tail"]
    upload_id, done = multipart(op1, bucket, "mp", parts, ChecksumAlgorithm="CRC32")
    completed = op1.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                              MultipartUpload={"Parts": done})
    attrs = op1.get_object_attributes(
        Bucket=bucket, Key="mp",
        ObjectAttributes=["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"])
    assert attrs["ETag"] == completed["ETag"].strip('"')
    assert attrs["ObjectSize"] == sum(len(p) for p in parts)
    assert attrs["StorageClass"] == "STANDARD"
    assert attrs["Checksum"]["ChecksumCRC32"] == completed["ChecksumCRC32"]
    assert attrs["Checksum"]["ChecksumType"] == "COMPOSITE"
    op = attrs["ObjectParts"]
    assert op["TotalPartsCount"] == 3 and op["IsTruncated"] is False
    assert [(p["PartNumber"], p["Size"], p["ChecksumCRC32"]) for p in op["Parts"]] == [
        (i, len(data), crc32_b64(data)) for i, data in enumerate(parts, 1)]

    # Paged: two parts, then the rest from the marker.
    page = op1.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"],
                                     MaxParts=2)["ObjectParts"]
    assert [p["PartNumber"] for p in page["Parts"]] == [1, 2] and page["IsTruncated"] is True
    rest = op1.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"],
                                     PartNumberMarker=page["NextPartNumberMarker"])["ObjectParts"]
    assert [p["PartNumber"] for p in rest["Parts"]] == [3]


def test_object_attributes_of_a_single_put_and_errors(op1, bucket):
    r = op1.put_object(Bucket=bucket, Key="one", Body=b"hello", ChecksumAlgorithm="CRC32")
    attrs = op1.get_object_attributes(Bucket=bucket, Key="one",
                                      ObjectAttributes=["ETag", "ObjectSize", "Checksum",
                                                        "ObjectParts"])
    assert attrs["ETag"] == r["ETag"].strip('"') and attrs["ObjectSize"] == 5
    assert attrs["Checksum"] == {"ChecksumCRC32": crc32_b64(b"hello"), "ChecksumType": "FULL_OBJECT"}
    assert "ObjectParts" not in attrs  # written in one piece
    assert_s3_error("NoSuchKey", 404, op1.get_object_attributes, Bucket=bucket, Key="absent",
                    ObjectAttributes=["ETag"])
    code, status, _ = s3_error(op1.get_object_attributes, Bucket=bucket, Key="one",
                               ObjectAttributes=["Bogus"])
    assert (code, status) == ("InvalidArgument", 400)


# ----------------------------------------------------------------- ListBuckets pages

def test_list_buckets_is_paginated_by_prefix_and_token(op1):
    prefix = uniq("pg")
    names = sorted(f"{prefix}-{i}" for i in range(5))
    for n in names:
        op1.create_bucket(Bucket=n)
    seen, token = [], None
    while True:
        kw = {"ContinuationToken": token} if token else {}
        page = op1.list_buckets(MaxBuckets=2, Prefix=prefix, **kw)
        assert page["Prefix"] == prefix
        assert len(page["Buckets"]) <= 2
        seen += [b["Name"] for b in page["Buckets"]]
        token = page.get("ContinuationToken")
        if not token:
            break
    assert seen == names
    assert [b["Name"] for b in op1.list_buckets(Prefix=prefix)["Buckets"]] == names
    code, status, _ = s3_error(op1.list_buckets, MaxBuckets=2, ContinuationToken="***")
    assert (code, status) == ("InvalidArgument", 400)


# ----------------------------------------------------------------- conditional complete

def test_complete_multipart_upload_honours_if_none_match_and_if_match(op1, bucket):
    first_id, first_parts = multipart(op1, bucket, "c", [b"one"])
    second_id, second_parts = multipart(op1, bucket, "c", [b"two"])
    created = op1.complete_multipart_upload(Bucket=bucket, Key="c", UploadId=first_id,
                                            MultipartUpload={"Parts": first_parts},
                                            IfNoneMatch="*")
    # The second writer loses: the key exists now. Its upload is left intact.
    assert_s3_error("PreconditionFailed", 412, op1.complete_multipart_upload, Bucket=bucket,
                    Key="c", UploadId=second_id, MultipartUpload={"Parts": second_parts},
                    IfNoneMatch="*")
    assert op1.get_object(Bucket=bucket, Key="c")["Body"].read() == b"one"
    assert_s3_error("PreconditionFailed", 412, op1.complete_multipart_upload, Bucket=bucket,
                    Key="c", UploadId=second_id, MultipartUpload={"Parts": second_parts},
                    IfMatch='"0123456789abcdef0123456789abcdef"')
    op1.complete_multipart_upload(Bucket=bucket, Key="c", UploadId=second_id,
                                  MultipartUpload={"Parts": second_parts},
                                  IfMatch=created["ETag"])
    assert op1.get_object(Bucket=bucket, Key="c")["Body"].read() == b"two"
    third_id, third_parts = multipart(op1, bucket, "absent", [b"x"])
    assert_s3_error("NoSuchKey", 404, op1.complete_multipart_upload, Bucket=bucket,
                    Key="absent", UploadId=third_id, MultipartUpload={"Parts": third_parts},
                    IfMatch=created["ETag"])


# ----------------------------------------------------------------- tagging

def tagset(d):
    return {"TagSet": [{"Key": k, "Value": v} for k, v in d.items()]}


def tags_of(s3, bucket, key):
    return {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]}


def test_object_tags_on_put_copy_multipart_and_tagging(op1, bucket):
    op1.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="team=data&tier=gold%20plus")
    assert tags_of(op1, bucket, "t") == {"team": "data", "tier": "gold plus"}
    assert op1.head_object(Bucket=bucket, Key="t")["ResponseMetadata"]["HTTPHeaders"][
        "x-amz-tagging-count"] == "2"
    assert op1.get_object(Bucket=bucket, Key="t")["TagCount"] == 2

    op1.copy_object(Bucket=bucket, Key="copied", CopySource={"Bucket": bucket, "Key": "t"})
    assert tags_of(op1, bucket, "copied") == {"team": "data", "tier": "gold plus"}
    op1.copy_object(Bucket=bucket, Key="retagged", CopySource={"Bucket": bucket, "Key": "t"},
                    TaggingDirective="REPLACE", Tagging="only=this")
    assert tags_of(op1, bucket, "retagged") == {"only": "this"}

    op1.put_object_tagging(Bucket=bucket, Key="t", Tagging=tagset({"a": "1"}))
    assert tags_of(op1, bucket, "t") == {"a": "1"}
    op1.delete_object_tagging(Bucket=bucket, Key="t")
    assert tags_of(op1, bucket, "t") == {}
    assert "x-amz-tagging-count" not in op1.head_object(Bucket=bucket, Key="t")[
        "ResponseMetadata"]["HTTPHeaders"]

    upload_id, parts = multipart(op1, bucket, "mpt", [b"p"], Tagging="from=upload")
    op1.complete_multipart_upload(Bucket=bucket, Key="mpt", UploadId=upload_id,
                                  MultipartUpload={"Parts": parts})
    assert tags_of(op1, bucket, "mpt") == {"from": "upload"}
    assert_s3_error("NoSuchKey", 404, op1.put_object_tagging, Bucket=bucket, Key="absent",
                    Tagging=tagset({"a": "1"}))


@pytest.mark.parametrize("tags,message", [
    ({f"k{i}": "v" for i in range(11)}, "cannot be greater than 10"),
    ({"k" * 129: "v"}, "too long, max 128"),
    ({"k": "v" * 257}, "too long, max 256"),
    ({"aws:reserved": "v"}, "aws:"),
])
def test_object_tag_limits(op1, bucket, tags, message):
    op1.put_object(Bucket=bucket, Key="lim", Body=b"x", Tagging="keep=me")
    code, status, msg = s3_error(op1.put_object_tagging, Bucket=bucket, Key="lim",
                                 Tagging=tagset(tags))
    assert (code, status) == ("InvalidTag", 400) and message in msg
    assert tags_of(op1, bucket, "lim") == {"keep": "me"}  # nothing changed
    # The same limits hold for tags given with the upload; nothing is written then.
    header = "&".join(f"{k}={v}" for k, v in tags.items())
    code, status, _ = s3_error(op1.put_object, Bucket=bucket, Key="lim-new", Body=b"x",
                               Tagging=header)
    assert (code, status) == ("InvalidTag", 400)
    assert_missing(op1, bucket, "lim-new")


def test_tag_limits_count_characters_and_allow_the_maximum(op1, bucket):
    tags = {f"k{i}": "é" * 256 for i in range(9)} | {"ü" * 128: ""}
    op1.put_object(Bucket=bucket, Key="max", Body=b"x")
    op1.put_object_tagging(Bucket=bucket, Key="max", Tagging=tagset(tags))
    assert tags_of(op1, bucket, "max") == tags


def test_duplicate_tag_keys_are_refused(op1, bucket):
    op1.put_object(Bucket=bucket, Key="dup", Body=b"x")
    code, status, _ = s3_error(op1.put_object_tagging, Bucket=bucket, Key="dup",
                               Tagging={"TagSet": [{"Key": "a", "Value": "1"},
                                                   {"Key": "a", "Value": "2"}]})
    assert (code, status) == ("InvalidTag", 400)


def test_bucket_tagging(op1, op2, bucket):
    assert_s3_error("NoSuchTagSet", 404, op1.get_bucket_tagging, Bucket=bucket)
    op1.put_bucket_tagging(Bucket=bucket, Tagging=tagset({"cost-centre": "42"}))
    assert op1.get_bucket_tagging(Bucket=bucket)["TagSet"] == [{"Key": "cost-centre", "Value": "42"}]
    assert_s3_error("AccessDenied", 403, op2.put_bucket_tagging, Bucket=bucket,
                    Tagging=tagset({"x": "y"}))
    code, _, _ = s3_error(op1.put_bucket_tagging, Bucket=bucket,
                          Tagging=tagset({f"k{i}": "v" for i in range(51)}))
    assert code == "InvalidTag"
    op1.put_bucket_tagging(Bucket=bucket, Tagging=tagset({f"k{i}": "v" for i in range(50)}))
    op1.delete_bucket_tagging(Bucket=bucket)
    assert_s3_error("NoSuchTagSet", 404, op1.get_bucket_tagging, Bucket=bucket)


# ----------------------------------------------------------------- ACLs

def grants(acl):
    out = set()
    for g in acl["Grants"]:
        who = g["Grantee"].get("ID") or g["Grantee"].get("URI")
        out.add((g["Grantee"]["Type"], who, g["Permission"]))
    return out


ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def test_acls_answer_the_owner_and_public_read(op1, bucket):
    acl = op1.get_bucket_acl(Bucket=bucket)
    assert acl["Owner"]["ID"] == "operator1"
    assert grants(acl) == {("CanonicalUser", "operator1", "FULL_CONTROL")}
    op1.put_object(Bucket=bucket, Key="o", Body=b"x")
    assert grants(op1.get_object_acl(Bucket=bucket, Key="o")) == {
        ("CanonicalUser", "operator1", "FULL_CONTROL")}
    op1.put_object_acl(Bucket=bucket, Key="o", ACL="public-read")
    assert grants(op1.get_object_acl(Bucket=bucket, Key="o")) == {
        ("CanonicalUser", "operator1", "FULL_CONTROL"), ("Group", ALL_USERS, "READ")}


def test_anonymous_reads_of_a_public_read_bucket_until_it_turns_private(op1, op2, anon):
    """Bucket READ lets AllUsers list; reading an object takes the object's own ACL. AllUsers
    includes signed users of other accounts (op2)."""
    name = uniq("pub")
    op1.create_bucket(Bucket=name, ACL="public-read")
    op1.put_object(Bucket=name, Key="data/a.parquet", Body=b"parquet bytes", ACL="public-read")
    op1.put_object(Bucket=name, Key="data/private.parquet", Body=b"mine")
    assert ("Group", ALL_USERS, "READ") in grants(op1.get_bucket_acl(Bucket=name))

    for reader in (anon, op2):
        assert reader.get_object(Bucket=name, Key="data/a.parquet")["Body"].read() == b"parquet bytes"
        assert reader.head_object(Bucket=name, Key="data/a.parquet")["ContentLength"] == 13
        assert [o["Key"] for o in reader.list_objects_v2(Bucket=name)["Contents"]] == [
            "data/a.parquet", "data/private.parquet"]
        # The bucket's READ is no object's: a private object stays the owner's.
        assert_s3_error("AccessDenied", 403, reader.get_object, Bucket=name,
                        Key="data/private.parquet")
        assert_s3_error("AccessDenied", 403, reader.put_object, Bucket=name, Key="x", Body=b"x")
        # A missing key of a listable bucket is a plain 404.
        assert_s3_error("NoSuchKey", 404, reader.get_object, Bucket=name, Key="nope")
    # Writes stay refused whatever the ACL.
    assert_s3_error("AccessDenied", 403, anon.put_object, Bucket=name, Key="x", Body=b"x")
    assert_s3_error("AccessDenied", 403, anon.delete_object, Bucket=name, Key="data/a.parquet")
    assert_s3_error("AccessDenied", 403, anon.put_bucket_acl, Bucket=name, ACL="private")
    assert_s3_error("AccessDenied", 403, anon.list_buckets)

    op1.put_bucket_acl(Bucket=name, ACL="private")
    assert_s3_error("AccessDenied", 403, anon.list_objects_v2, Bucket=name)
    assert_s3_error("AccessDenied", 403, op2.list_objects_v2, Bucket=name)
    # The public object stays public on its own ACL.
    assert anon.get_object(Bucket=name, Key="data/a.parquet")["Body"].read() == b"parquet bytes"
    op1.put_object_acl(Bucket=name, Key="data/a.parquet", ACL="private")
    assert_s3_error("AccessDenied", 403, anon.get_object, Bucket=name, Key="data/a.parquet")
    assert op1.get_object(Bucket=name, Key="data/a.parquet")["Body"].read() == b"parquet bytes"


def test_a_public_object_in_a_private_bucket(op1, anon, server, bucket):
    op1.put_object(Bucket=bucket, Key="shared", Body=b"s", ACL="public-read")
    op1.put_object(Bucket=bucket, Key="secret", Body=b"p")
    assert requests.get(f"{server.s3}/{bucket}/shared").content == b"s"
    assert_s3_error("AccessDenied", 403, anon.get_object, Bucket=bucket, Key="secret")
    assert_s3_error("AccessDenied", 403, anon.list_objects_v2, Bucket=bucket)
    # A copy's ACL is its own: private unless asked.
    op1.copy_object(Bucket=bucket, Key="shared-copy", CopySource={"Bucket": bucket, "Key": "shared"})
    assert_s3_error("AccessDenied", 403, anon.get_object, Bucket=bucket, Key="shared-copy")


def test_an_anonymous_request_for_a_missing_bucket_is_no_such_bucket(anon):
    assert_s3_error("NoSuchBucket", 404, anon.list_objects_v2, Bucket=uniq("gone"))
    assert_s3_error("NoSuchBucket", 404, anon.get_object, Bucket=uniq("gone"), Key="k")


def test_a_value_that_is_no_canned_acl_is_an_invalid_argument(op1, bucket):
    assert_s3_error("InvalidArgument", 400, op1.put_object, Bucket=bucket, Key="n", Body=b"x",
                    ACL="public-ready")
    assert_s3_error("InvalidArgument", 400, op1.create_bucket, Bucket=uniq("nb"),
                    ACL="public-ready")
    assert_missing(op1, bucket, "n")


def test_acls_not_offered_are_refused_not_ignored(op1, op2, bucket):
    for acl in ("aws-exec-read", "bucket-owner-read"):
        code, status, _ = s3_error(op1.put_object, Bucket=bucket, Key="n", Body=b"x", ACL=acl)
        assert (code, status) == ("NotImplemented", 501)
    assert_missing(op1, bucket, "n")
    code, status, _ = s3_error(op1.put_object, Bucket=bucket, Key="n", Body=b"x",
                               GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"')
    assert (code, status) == ("NotImplemented", 501)
    code, status, _ = s3_error(op1.create_bucket, Bucket=uniq("nb"), ACL="log-delivery-write")
    assert (code, status) == ("NotImplemented", 501)
    # Another operator cannot make this bucket public.
    assert_s3_error("AccessDenied", 403, op2.put_bucket_acl, Bucket=bucket, ACL="public-read")
    assert grants(op1.get_bucket_acl(Bucket=bucket)) == {
        ("CanonicalUser", "operator1", "FULL_CONTROL")}


# ----------------------------------------------------------------- POST uploads

def post_form(server, presigned, body=b"a,b\n1,2\n", filename="data.csv", extra=None):
    fields = dict(presigned["fields"]) | (extra or {})
    url = presigned["url"]
    return requests.post(url, data=fields, files={"file": (filename, body, "text/csv")},
                         allow_redirects=False)


def test_post_upload_from_generate_presigned_post(op1, bucket, server):
    presigned = op1.generate_presigned_post(
        bucket, "uploads/${filename}",
        Fields={"success_action_status": "201", "Content-Type": "text/csv"},
        Conditions=[["starts-with", "$key", "uploads/"], ["content-length-range", 1, 1024],
                    {"success_action_status": "201"}, {"Content-Type": "text/csv"}],
        ExpiresIn=300)
    r = post_form(server, presigned)
    assert r.status_code == 201, r.text
    assert "<Key>uploads/data.csv</Key>" in r.text
    got = op1.get_object(Bucket=bucket, Key="uploads/data.csv")
    assert got["Body"].read() == b"a,b\n1,2\n" and got["ContentType"] == "text/csv"
    assert r.headers["ETag"] == got["ETag"]

    plain = op1.generate_presigned_post(bucket, "plain.bin", ExpiresIn=300)
    r = post_form(server, plain, body=b"\x00\r\n--not-a-boundary\r\n" * 1000)
    assert r.status_code == 204, r.text
    assert op1.get_object(Bucket=bucket, Key="plain.bin")["Body"].read() == \
        b"\x00\r\n--not-a-boundary\r\n" * 1000

    redirecting = op1.generate_presigned_post(
        bucket, "r.txt", Fields={"success_action_redirect": "https://app.example/done"},
        Conditions=[{"success_action_redirect": "https://app.example/done"}], ExpiresIn=300)
    r = post_form(server, redirecting, body=b"r")
    assert r.status_code == 303
    assert r.headers["Location"].startswith(f"https://app.example/done?bucket={bucket}&key=r.txt&etag=")


def test_post_upload_refusals_change_nothing(op1, op2, bucket, server):
    def refused(presigned, status, code, **kw):
        r = post_form(server, presigned, **kw)
        assert r.status_code == status, r.text
        assert f"<Code>{code}</Code>" in r.text, r.text

    ranged = op1.generate_presigned_post(bucket, "sized", ExpiresIn=300,
                                         Conditions=[["content-length-range", 10, 20]])
    refused(ranged, 400, "EntityTooLarge", body=b"x" * 21)
    refused(ranged, 400, "EntityTooSmall", body=b"x" * 9)
    assert post_form(server, ranged, body=b"x" * 15).status_code == 204

    prefixed = op1.generate_presigned_post(bucket, "in/${filename}", ExpiresIn=300,
                                           Conditions=[["starts-with", "$key", "in/"]])
    refused(prefixed, 403, "AccessDenied", extra={"key": "out/evil.csv"})
    refused(prefixed, 403, "AccessDenied", extra={"x-amz-meta-owner": "mallory"})

    with_expiry = op1.generate_presigned_post(bucket, "late", ExpiresIn=1)
    time.sleep(2.1)  # the policy's expiration has whole seconds
    refused(with_expiry, 403, "AccessDenied")

    forged = op1.generate_presigned_post(bucket, "forged", ExpiresIn=300)
    forged["fields"]["x-amz-signature"] = "0" * 64
    refused(forged, 403, "SignatureDoesNotMatch")

    # A policy signed by a user who may not write this bucket.
    other = op2.generate_presigned_post(bucket, "theirs", ExpiresIn=300)
    refused(other, 403, "AccessDenied")

    for key in ("sized-big", "out/evil.csv", "in/data.csv", "late", "forged", "theirs"):
        assert_missing(op1, bucket, key)


def test_subresources_not_offered_are_501_naming_them(op1, bucket):
    code, status, msg = s3_error(op1.get_bucket_policy, Bucket=bucket)
    assert (code, status) == ("NotImplemented", 501) and "'policy'" in msg
    code, status, msg = s3_error(op1.get_bucket_lifecycle_configuration, Bucket=bucket)
    assert (code, status) == ("NotImplemented", 501) and "'lifecycle'" in msg
    op1.put_object(Bucket=bucket, Key="held", Body=b"x")
    code, status, msg = s3_error(op1.get_object_torrent, Bucket=bucket, Key="held")
    assert (code, status) == ("NotImplemented", 501) and "'torrent'" in msg
    # Object lock is offered, on buckets that have it: this one does not.
    code, status, msg = s3_error(op1.get_object_retention, Bucket=bucket, Key="held")
    assert (code, status) == ("InvalidRequest", 400) and "Object Lock" in msg


AUTHENTICATED_USERS = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"


def test_authenticated_read_opens_to_signed_users_only(op1, op2, anon):
    name = uniq("auth")
    op1.create_bucket(Bucket=name, ACL="authenticated-read")
    op1.put_object(Bucket=name, Key="o", Body=b"signed eyes only", ACL="authenticated-read")
    op1.put_object(Bucket=name, Key="private", Body=b"p")
    assert ("Group", AUTHENTICATED_USERS, "READ") in grants(op1.get_bucket_acl(Bucket=name))
    assert ("Group", AUTHENTICATED_USERS, "READ") in grants(
        op1.get_object_acl(Bucket=name, Key="o"))
    assert op2.get_object(Bucket=name, Key="o")["Body"].read() == b"signed eyes only"
    assert [o["Key"] for o in op2.list_objects_v2(Bucket=name)["Contents"]] == ["o", "private"]
    assert_s3_error("AccessDenied", 403, op2.get_object, Bucket=name, Key="private")
    assert_s3_error("AccessDenied", 403, op2.put_object, Bucket=name, Key="x", Body=b"x")
    assert_s3_error("AccessDenied", 403, anon.get_object, Bucket=name, Key="o")
    assert_s3_error("AccessDenied", 403, anon.list_objects_v2, Bucket=name)


def test_public_read_write_lets_anyone_write_and_delete_objects(op1, op2, anon):
    name = uniq("prw")
    op1.create_bucket(Bucket=name, ACL="public-read-write")
    assert {("Group", ALL_USERS, "READ"), ("Group", ALL_USERS, "WRITE")} <= grants(
        op1.get_bucket_acl(Bucket=name))
    anon.put_object(Bucket=name, Key="dropbox/anon.txt", Body=b"from anyone")
    op2.put_object(Bucket=name, Key="dropbox/op2.txt", Body=b"from op2")
    assert [o["Key"] for o in anon.list_objects_v2(Bucket=name)["Contents"]] == [
        "dropbox/anon.txt", "dropbox/op2.txt"]
    # Objects are the bucket owner's and private unless their own ACL says otherwise.
    assert op1.get_object(Bucket=name, Key="dropbox/anon.txt")["Body"].read() == b"from anyone"
    assert_s3_error("AccessDenied", 403, anon.get_object, Bucket=name, Key="dropbox/op2.txt")
    anon.delete_object(Bucket=name, Key="dropbox/op2.txt")
    assert_missing(op1, name, "dropbox/op2.txt")
    # The bucket's ACL and the bucket itself stay the owner's.
    assert_s3_error("AccessDenied", 403, anon.put_bucket_acl, Bucket=name, ACL="private")
    assert_s3_error("AccessDenied", 403, op2.delete_bucket, Bucket=name)
    op1.put_bucket_acl(Bucket=name, ACL="private")
    assert_s3_error("AccessDenied", 403, anon.put_object, Bucket=name, Key="late", Body=b"x")

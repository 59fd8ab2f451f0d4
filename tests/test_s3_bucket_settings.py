"""A bucket's PublicAccessBlock (stored, enforced on canned ACLs) and its location
constraint (stored at creation, echoed), through boto3 and raw requests."""

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config

from test_s3 import (OP1, REGION, assert_s3_error, object_url, s3_error, signed_send, uniq,
                     xml_error_code)
from test_s3 import op1, op2  # noqa: F401 (fixtures)

ALL_OFF = {"BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False,
           "RestrictPublicBuckets": False}


@pytest.fixture(scope="module")
def anon(server):
    cfg = Config(signature_version=UNSIGNED, s3={"addressing_style": "path"},
                 retries={"total_max_attempts": 1, "mode": "standard"})
    return boto3.client("s3", endpoint_url=server.s3, region_name=REGION, config=cfg)


def test_a_public_access_block_is_stored_replaced_and_removed(op1):
    bucket = uniq("pab")
    op1.create_bucket(Bucket=bucket)
    # None until one is put (a self-hosted bucket starts without, unlike AWS's default).
    assert_s3_error("NoSuchPublicAccessBlockConfiguration", 404,
                    op1.get_public_access_block, Bucket=bucket)
    conf = ALL_OFF | {"BlockPublicAcls": True, "BlockPublicPolicy": True}
    op1.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=conf)
    assert op1.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == conf
    # Another change of the bucket keeps it; a new one replaces it whole.
    op1.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "a", "Value": "b"}]})
    conf = ALL_OFF | {"IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    op1.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=conf)
    assert op1.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == conf
    r = op1.delete_public_access_block(Bucket=bucket)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert_s3_error("NoSuchPublicAccessBlockConfiguration", 404,
                    op1.get_public_access_block, Bucket=bucket)


def test_a_malformed_block_or_a_strangers_changes_nothing(op1, op2, server):
    bucket = uniq("pab")
    op1.create_bucket(Bucket=bucket)
    conf = ALL_OFF | {"BlockPublicAcls": True}
    op1.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=conf)
    # Someone else may neither read, change nor remove it.
    assert_s3_error("AccessDenied", 403, op2.get_public_access_block, Bucket=bucket)
    assert_s3_error("AccessDenied", 403, op2.put_public_access_block, Bucket=bucket,
                    PublicAccessBlockConfiguration=ALL_OFF)
    assert_s3_error("AccessDenied", 403, op2.delete_public_access_block, Bucket=bucket)
    # A switch that is neither true nor false is malformed.
    status, _, body = signed_send(
        "PUT", object_url(server, bucket, query="publicAccessBlock="), OP1,
        b"<PublicAccessBlockConfiguration><BlockPublicAcls>maybe"
        b"</BlockPublicAcls></PublicAccessBlockConfiguration>")
    assert status == 400 and xml_error_code(body) == "MalformedXML"
    assert op1.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == conf


def test_block_public_acls_refuses_every_public_canned_acl(op1):
    bucket = uniq("pab")
    op1.create_bucket(Bucket=bucket)
    op1.put_public_access_block(Bucket=bucket,
                                PublicAccessBlockConfiguration=ALL_OFF | {"BlockPublicAcls": True})
    for acl in ("public-read", "public-read-write", "authenticated-read"):
        assert_s3_error("AccessDenied", 403, op1.put_bucket_acl, Bucket=bucket, ACL=acl)
        assert_s3_error("AccessDenied", 403, op1.put_object, Bucket=bucket, Key=f"o-{acl}",
                        Body=b"x", ACL=acl)
        assert_s3_error("AccessDenied", 403, op1.create_multipart_upload, Bucket=bucket,
                        Key=f"m-{acl}", ACL=acl)
    # Nothing was written; private writes go on.
    assert op1.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    op1.put_object(Bucket=bucket, Key="mine", Body=b"x", ACL="private")
    assert_s3_error("AccessDenied", 403, op1.put_object_acl, Bucket=bucket, Key="mine",
                    ACL="public-read")
    grants = op1.get_object_acl(Bucket=bucket, Key="mine")["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"]
    # Removing the block lifts it.
    op1.delete_public_access_block(Bucket=bucket)
    op1.put_object_acl(Bucket=bucket, Key="mine", ACL="public-read")


def test_ignore_public_acls_makes_public_acls_count_as_private(op1, op2, anon):
    bucket = uniq("pab")
    op1.create_bucket(Bucket=bucket, ACL="public-read")
    op1.put_object(Bucket=bucket, Key="k", Body=b"open", ACL="public-read")
    assert op2.get_object(Bucket=bucket, Key="k")["Body"].read() == b"open"
    assert anon.list_objects_v2(Bucket=bucket)["KeyCount"] == 1

    op1.put_public_access_block(Bucket=bucket,
                                PublicAccessBlockConfiguration=ALL_OFF | {"IgnorePublicAcls": True})
    # The ACLs may still be set (only BlockPublicAcls refuses that) but grant nothing.
    op1.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    for s3 in (op2, anon):
        assert_s3_error("AccessDenied", 403, s3.get_object, Bucket=bucket, Key="k")
        assert_s3_error("AccessDenied", 403, s3.list_objects_v2, Bucket=bucket)
        assert_s3_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key="w", Body=b"x")
    assert op1.get_object(Bucket=bucket, Key="k")["Body"].read() == b"open"

    op1.delete_public_access_block(Bucket=bucket)
    assert op2.get_object(Bucket=bucket, Key="k")["Body"].read() == b"open"


def test_the_location_constraint_is_kept_and_echoed(op1, server):
    placed = uniq("loc")
    op1.create_bucket(Bucket=placed, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert op1.get_bucket_location(Bucket=placed)["LocationConstraint"] == "eu-west-1"
    r = op1.head_bucket(Bucket=placed)
    assert r["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "eu-west-1"
    listed = {b["Name"]: b for b in op1.list_buckets()["Buckets"]}
    assert listed[placed]["BucketRegion"] == "eu-west-1"

    # Without one, the server's region; us-east-1 answers as an empty constraint.
    plain = uniq("loc")
    op1.create_bucket(Bucket=plain)
    assert op1.get_bucket_location(Bucket=plain)["LocationConstraint"] in (None, REGION)
    assert op1.head_bucket(Bucket=plain)["ResponseMetadata"]["HTTPHeaders"][
        "x-amz-bucket-region"] == REGION

    # A constraint that is not a region name, or a body that is not XML, creates nothing.
    bad = uniq("loc")
    code, status, _ = s3_error(op1.create_bucket, Bucket=bad,
                               CreateBucketConfiguration={"LocationConstraint": "eu west/1"})
    assert (code, status) == ("InvalidLocationConstraint", 400)
    status, _, body = signed_send("PUT", object_url(server, bad), OP1, b"<CreateBucketConfiguration")
    assert status == 400 and xml_error_code(body) == "MalformedXML"
    assert bad not in {b["Name"] for b in op1.list_buckets()["Buckets"]}

"""Write headers asking for what the S3 listener does not offer are refused, never
accepted and dropped: object lock (a client told its data is write-protected must be
able to rely on it), server-side encryption, other storage classes, and any x-amz-*
setting the server does not know. Nothing is stored by a refused write."""

from datetime import datetime, timedelta, timezone

import boto3
import pytest
from botocore.config import Config

from test_s3 import REGION, assert_missing, assert_s3_error, uniq
from test_s3 import op1  # noqa: F401 (fixture)
from test_s3_semantics import post_form


@pytest.fixture()
def bucket(op1):
    name = uniq("unoff")
    op1.create_bucket(Bucket=name)
    return name


def with_header(server, name, value, operation="PutObject"):
    """An operator client that adds `name: value` to every `operation` before signing."""
    from conftest import OPERATORS

    s3 = boto3.client("s3", endpoint_url=server.s3, region_name=REGION,
                      aws_access_key_id="operator1",
                      aws_secret_access_key=OPERATORS["operator1"],
                      config=Config(s3={"addressing_style": "path"},
                                    retries={"total_max_attempts": 1, "mode": "standard"}))

    def add(request, **_):
        request.headers[name] = value

    s3.meta.events.register(f"before-sign.s3.{operation}", add)
    return s3


@pytest.mark.parametrize("lock", [
    {"ObjectLockMode": "GOVERNANCE"},
    {"ObjectLockMode": "COMPLIANCE",
     "ObjectLockRetainUntilDate": datetime.now(timezone.utc) + timedelta(days=1)},
    {"ObjectLockLegalHoldStatus": "ON"},
])
def test_object_lock_on_writes_is_refused_and_nothing_is_stored(op1, bucket, lock):
    msg = assert_s3_error("InvalidRequest", 400, op1.put_object, Bucket=bucket, Key="k",
                          Body=b"protected?", **lock)
    assert "Object Lock" in msg
    assert_missing(op1, bucket, "k")
    op1.put_object(Bucket=bucket, Key="src", Body=b"source")
    assert_s3_error("InvalidRequest", 400, op1.copy_object, Bucket=bucket, Key="copy",
                    CopySource={"Bucket": bucket, "Key": "src"}, **lock)
    assert_missing(op1, bucket, "copy")
    assert_s3_error("InvalidRequest", 400, op1.create_multipart_upload, Bucket=bucket,
                    Key="mp", **lock)
    assert op1.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_encryption_storage_classes_and_unknown_settings_are_refused(op1, bucket, server):
    assert_s3_error("NotImplemented", 501, op1.put_object, Bucket=bucket, Key="sse",
                    Body=b"x", ServerSideEncryption="AES256")
    assert_missing(op1, bucket, "sse")
    assert_s3_error("InvalidStorageClass", 400, op1.put_object, Bucket=bucket, Key="cold",
                    Body=b"x", StorageClass="GLACIER")
    assert_missing(op1, bucket, "cold")
    op1.put_object(Bucket=bucket, Key="std", Body=b"x", StorageClass="STANDARD")
    for name, value in [("x-amz-website-redirect-location", "/elsewhere"),
                        ("x-amz-write-offset-bytes", "0"),
                        ("X-Amz-Future-Setting", "on")]:
        s3 = with_header(server, name, value)
        msg = assert_s3_error("NotImplemented", 501, s3.put_object, Bucket=bucket,
                              Key="odd", Body=b"x")
        assert name in msg
        assert_missing(op1, bucket, "odd")
    # What real clients send alongside a plain upload still passes.
    op1.put_object(Bucket=bucket, Key="plain", Body=b"x", Metadata={"a": "b"},
                   ChecksumAlgorithm="SHA256", Tagging="t=1", ACL="private")
    assert op1.get_object(Bucket=bucket, Key="plain")["Metadata"] == {"a": "b"}


def test_a_post_upload_asking_for_object_lock_is_refused(op1, bucket, server):
    presigned = op1.generate_presigned_post(
        bucket, "form.csv", Fields={"x-amz-object-lock-legal-hold": "ON"},
        Conditions=[{"x-amz-object-lock-legal-hold": "ON"}], ExpiresIn=300)
    r = post_form(server, presigned)
    assert r.status_code == 400 and "<Code>InvalidRequest</Code>" in r.text, r.text
    assert_missing(op1, bucket, "form.csv")

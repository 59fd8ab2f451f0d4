"""Answers a general S3 conformance suite found wrong, each as AWS S3 gives it: the
simple CORS answer's methods and max age, a negative presign lifetime, the owner creating
their own bucket again in us-east-1, a part's checksum on GET ?partNumber, the parts of an
upload whose parts carried checksums, and the whole object's checksum at completion
(others: test_s3_semantics.py)."""

import requests

from test_s3 import assert_s3_error, uniq, xml_error_code
from test_s3 import op1, op2  # noqa: F401 (fixtures)


def test_a_simple_cors_answer_names_the_rules_methods_and_max_age(op1, server):
    bucket = uniq("cors")
    op1.create_bucket(Bucket=bucket)
    op1.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["https://app.example"], "AllowedMethods": ["GET", "PUT"],
         "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 60}]})
    op1.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    r = requests.get(url, headers={"Origin": "https://app.example"})
    assert r.status_code == 200 and r.content == b"x"
    assert r.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert r.headers["Access-Control-Allow-Methods"] == "GET, PUT"
    assert r.headers["Access-Control-Max-Age"] == "60"
    assert r.headers["Access-Control-Expose-Headers"] == "ETag"
    # An origin no rule names gets no CORS headers at all.
    r = requests.get(url, headers={"Origin": "https://other.example"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_a_negative_presign_lifetime_is_out_of_range(op1, server):
    bucket = uniq("exp")
    op1.create_bucket(Bucket=bucket)
    op1.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"},
                                     ExpiresIn=60)
    for lifetime in ("-1", "-604800", "604801", "0"):
        r = requests.get(url.replace("X-Amz-Expires=60", f"X-Amz-Expires={lifetime}"))
        assert r.status_code == 403, (lifetime, r.text)
        assert xml_error_code(r.content) == "AccessDenied"
        assert "X-Amz-Expires" in r.text
    r = requests.get(url.replace("X-Amz-Expires=60", "X-Amz-Expires=soon"))
    assert r.status_code == 400 and xml_error_code(r.content) == "AuthorizationQueryParametersError"


def test_the_owner_creating_their_bucket_again_in_us_east_1_succeeds(op1, op2):
    bucket = uniq("again")
    op1.create_bucket(Bucket=bucket, ACL="public-read")
    op1.put_object(Bucket=bucket, Key="kept", Body=b"x")
    r = op1.create_bucket(Bucket=bucket)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 200
    # The ACL is reset, the objects stay.
    assert [g["Permission"] for g in op1.get_bucket_acl(Bucket=bucket)["Grants"]] == ["FULL_CONTROL"]
    assert op1.get_object(Bucket=bucket, Key="kept")["Body"].read() == b"x"
    # Someone else still finds the name taken.
    assert_s3_error("BucketAlreadyExists", 409, op2.create_bucket, Bucket=bucket)


def crc_parts(s3, bucket, key, parts, **create):
    """A multipart upload whose every part is sent with its CRC32; answers (upload id, parts
    as CompleteMultipartUpload lists them)."""
    up = s3.create_multipart_upload(Bucket=bucket, Key=key, **create)
    done = []
    for i, data in enumerate(parts, 1):
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=up["UploadId"], PartNumber=i,
                           Body=data, ChecksumAlgorithm="CRC32")
        done.append({"PartNumber": i, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
    return up["UploadId"], done


PARTS = [b"a" * (5 * 1024 * 1024), b"b" * (5 * 1024 * 1024), b"tail"]


def test_a_parts_checksum_comes_with_the_part(op1):
    from test_s3_semantics import crc32_b64

    bucket = uniq("part")
    op1.create_bucket(Bucket=bucket)
    upload_id, done = crc_parts(op1, bucket, "mp", PARTS, ChecksumAlgorithm="CRC32")
    op1.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                  MultipartUpload={"Parts": done})
    for n, data in enumerate(PARTS, 1):
        got = op1.get_object(Bucket=bucket, Key="mp", PartNumber=n, ChecksumMode="ENABLED")
        assert got["Body"].read() == data
        assert got["ChecksumCRC32"] == crc32_b64(data)
        assert got["ChecksumType"] == "COMPOSITE"
        head = op1.head_object(Bucket=bucket, Key="mp", PartNumber=n, ChecksumMode="ENABLED")
        assert head["ChecksumCRC32"] == crc32_b64(data)


def test_parts_are_listed_when_every_part_carried_a_checksum(op1):
    from test_s3_semantics import crc32_b64

    bucket = uniq("attr")
    op1.create_bucket(Bucket=bucket)
    upload_id, done = crc_parts(op1, bucket, "mp", PARTS)  # no algorithm at creation
    op1.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                  MultipartUpload={"Parts": done})
    page = op1.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"],
                                     MaxParts=2)["ObjectParts"]
    assert page["TotalPartsCount"] == 3 and page["IsTruncated"] is True
    assert [(p["PartNumber"], p["ChecksumCRC32"]) for p in page["Parts"]] == [
        (1, crc32_b64(PARTS[0])), (2, crc32_b64(PARTS[1]))]
    rest = op1.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"],
                                     PartNumberMarker=page["NextPartNumberMarker"])["ObjectParts"]
    assert [p["PartNumber"] for p in rest["Parts"]] == [3] and rest["IsTruncated"] is False


def test_complete_checks_the_whole_objects_checksum_and_a_retry_keeps_it(op1):
    from test_s3_semantics import crc32_b64

    bucket = uniq("whole")
    op1.create_bucket(Bucket=bucket)
    upload_id, done = crc_parts(op1, bucket, "mp", PARTS, ChecksumAlgorithm="CRC32",
                                ChecksumType="FULL_OBJECT")
    whole = crc32_b64(b"".join(PARTS))
    assert_s3_error("BadDigest", 400, op1.complete_multipart_upload, Bucket=bucket, Key="mp",
                    UploadId=upload_id, MultipartUpload={"Parts": done},
                    ChecksumCRC32=crc32_b64(b"something else"))
    first = op1.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                          MultipartUpload={"Parts": done}, ChecksumCRC32=whole)
    assert (first["ChecksumCRC32"], first["ChecksumType"]) == (whole, "FULL_OBJECT")
    again = op1.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                          MultipartUpload={"Parts": done})
    assert (again["ChecksumCRC32"], again["ChecksumType"]) == (whole, "FULL_OBJECT")
    assert again["ETag"] == first["ETag"]
    # A whole-object checksum the upload cannot check is refused, not dropped.
    upload_id, done = crc_parts(op1, bucket, "plain", PARTS)
    assert_s3_error("InvalidRequest", 400, op1.complete_multipart_upload, Bucket=bucket,
                    Key="plain", UploadId=upload_id, MultipartUpload={"Parts": done},
                    ChecksumSHA256="n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=")

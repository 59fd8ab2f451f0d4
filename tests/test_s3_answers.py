"""Answers a general S3 conformance suite found wrong, each as AWS S3 gives it: the
simple CORS answer's methods and max age, a negative presign lifetime, and the owner
creating their own bucket again in us-east-1 (others: test_s3_semantics.py)."""

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

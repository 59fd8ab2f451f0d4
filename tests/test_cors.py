"""CORS on the S3 and catalog listeners, as a browser page (DuckDB-WASM on the account
page) exercises it: preflights exactly as browsers send them, then the cross-origin
requests, reading the Access-Control-* answers. Requests are raw HTTP (requests) and
boto3 for bucket configurations."""

import pytest
import requests

from conftest import Server
from test_s3 import op1  # noqa: F401 (fixture)
from test_s3 import s3_error, uniq


def own_origins(server):
    """The deployment's web origin (the API listener's) in both loopback spellings."""
    origin = server.api.rstrip("/")
    return origin, origin.replace("127.0.0.1", "localhost")


def preflight(url, origin, method="GET", headers=None):
    h = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        h["Access-Control-Request-Headers"] = headers
    return requests.options(url, headers=h)


def test_s3_default_rules_allow_the_deployments_own_origin(server, op1):
    bucket = uniq("cors")
    op1.create_bucket(Bucket=bucket)
    op1.put_object(Bucket=bucket, Key="t/data.parquet", Body=b"0123456789")
    url = f"{server.s3}/{bucket}/t/data.parquet"
    for origin in own_origins(server):
        r = preflight(url, origin, "GET", "range,authorization,x-amz-date,x-amz-security-token,"
                                          "x-amz-content-sha256")
        assert r.status_code == 200, r.text
        assert r.headers["Access-Control-Allow-Origin"] == origin
        assert "GET" in r.headers["Access-Control-Allow-Methods"]
        assert "range" in r.headers["Access-Control-Allow-Headers"]
        assert "Origin" in r.headers["Vary"]

    r = preflight(url, "https://evil.example", "GET", "range")
    assert r.status_code == 403 and "<Code>AccessForbidden</Code>" in r.text
    assert "Access-Control-Allow-Origin" not in r.headers
    r = preflight(url, own_origins(server)[0], "GET", "x-not-allowed")
    assert r.status_code == 403

    # The request itself: a signed ranged GET from the page.
    signed = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "t/data.parquet"})
    origin = own_origins(server)[0]
    r = requests.get(signed, headers={"Origin": origin, "Range": "bytes=2-4"})
    assert r.status_code == 206 and r.content == b"234"
    assert r.headers["Access-Control-Allow-Origin"] == origin
    exposed = [h.strip().lower() for h in r.headers["Access-Control-Expose-Headers"].split(",")]
    assert {"etag", "content-length", "content-range"} <= set(exposed)
    # Errors carry the CORS headers too, so the page can read why it failed.
    missing = op1.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "absent"})
    r = requests.get(missing, headers={"Origin": origin})
    assert r.status_code == 404 and r.headers["Access-Control-Allow-Origin"] == origin
    r = requests.get(signed, headers={"Origin": "https://evil.example"})
    assert r.status_code == 200 and "Access-Control-Allow-Origin" not in r.headers


def test_options_that_is_not_a_preflight_is_a_bad_request(server):
    assert requests.options(f"{server.s3}/any/key").status_code == 400
    r = requests.options(f"{server.s3}/any/key", headers={"Origin": "https://a.example"})
    assert r.status_code == 400


def test_bucket_cors_configuration(server, op1):
    bucket = uniq("cfg")
    op1.create_bucket(Bucket=bucket)
    code, status, _ = s3_error(op1.get_bucket_cors, Bucket=bucket)
    assert (code, status) == ("NoSuchCORSConfiguration", 404)
    rules = [{"AllowedOrigins": ["https://*.app.example"], "AllowedMethods": ["GET", "PUT"],
              "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 60}]
    op1.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": rules})
    got = op1.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got[0]["AllowedOrigins"] == ["https://*.app.example"]
    assert got[0]["MaxAgeSeconds"] == 60

    url = f"{server.s3}/{bucket}/k"
    r = preflight(url, "https://eu.app.example", "PUT", "content-type,x-amz-date")
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == "https://eu.app.example"
    assert r.headers["Access-Control-Max-Age"] == "60"
    assert preflight(url, "https://eu.app.example", "DELETE").status_code == 403
    # The bucket's own rules replace the default ones.
    assert preflight(url, own_origins(server)[0], "GET").status_code == 403

    code, status, _ = s3_error(op1.put_bucket_cors, Bucket=bucket, CORSConfiguration={
        "CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]})
    assert (code, status) == ("InvalidRequest", 400)
    assert op1.get_bucket_cors(Bucket=bucket)["CORSRules"][0]["AllowedMethods"] == ["GET", "PUT"]

    op1.delete_bucket_cors(Bucket=bucket)
    code, _, _ = s3_error(op1.get_bucket_cors, Bucket=bucket)
    assert code == "NoSuchCORSConfiguration"
    assert preflight(url, own_origins(server)[0], "GET").status_code == 200


def test_catalog_listener_answers_cors_for_the_token_endpoint_and_the_api(server):
    origin = own_origins(server)[0]
    r = preflight(f"{server.catalog}/v1/oauth/tokens", origin, "POST",
                  "authorization,content-type")
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == origin
    r = preflight(f"{server.catalog}/v1/config", origin, "GET",
                  "authorization,x-iceberg-access-delegation")
    assert r.status_code == 200
    assert "x-iceberg-access-delegation" in r.headers["Access-Control-Allow-Headers"]
    assert preflight(f"{server.catalog}/v1/config", "https://evil.example", "GET").status_code == 403
    r = requests.post(f"{server.catalog}/v1/oauth/tokens", headers={"Origin": origin},
                      data={"grant_type": "client_credentials", "client_id": "x", "client_secret": "y"})
    assert r.status_code in (400, 401) and r.headers["Access-Control-Allow-Origin"] == origin


def test_cors_origins_flag_replaces_the_default():
    server = Server(args=["--cors-origins", "https://lake.example.com, https://other.example"])
    try:
        url = f"{server.s3}/b/k"
        assert preflight(url, "https://lake.example.com", "GET").status_code == 200
        assert preflight(url, "https://other.example", "GET").status_code == 200
        assert preflight(url, server.api, "GET").status_code == 403
        assert preflight(f"{server.catalog}/v1/config", "https://lake.example.com",
                         "GET").status_code == 200
    finally:
        server.cleanup()

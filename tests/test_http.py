"""The transport: request ids, the access log, malformed requests, and DuckDB's raw
0x1F namespace separator."""

import socket

import boto3
import requests
from botocore.config import Config

from conftest import OPERATORS, catalog_token


def raw_request(url, request: bytes) -> bytes:
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


def test_every_response_carries_a_request_id(server):
    seen = set()
    for url in (server.api + "/livez", server.api + "/healthz", server.api + "/v1/nope",
                server.catalog + "/v1/config", server.s3 + "/"):
        r = requests.get(url)
        rid = r.headers.get("x-request-id")
        assert rid and rid not in seen, (url, r.status_code)
        seen.add(rid)
    err = requests.get(server.api + "/v1/connection")
    assert err.status_code == 401
    assert err.json()["error"]["request_id"] == err.headers["x-request-id"]


def test_access_log_has_a_line_per_request_and_no_secrets(server):
    signer = boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                          aws_access_key_id="operator1", aws_secret_access_key=OPERATORS["operator1"],
                          config=Config(signature_version="s3v4"))
    url = signer.generate_presigned_url("list_buckets", ExpiresIn=60)
    marker = "x-request-id-probe"
    r = requests.get(url, headers={"User-Agent": marker})
    assert r.status_code == 200
    log = open(server.log_path).read()
    line = [entry for entry in log.splitlines() if r.headers["x-request-id"] in entry]
    assert len(line) == 1 and '"GET /"' in line[0] and " 200 " in line[0]
    signature = url.split("X-Amz-Signature=")[1]
    assert signature not in log and "operator1-secret-key" not in log


def test_malformed_request_line_is_a_400(server):
    response = raw_request(server.api, b"GET /has space HTTP/1.1\r\nHost: x\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 400")


def test_raw_unit_separator_in_a_path_reaches_the_nested_namespace(server):
    account = server.signup()
    cred = account["connection"]["catalog_credential"]
    token = catalog_token(server, cred["client_id"], cred["client_secret"])
    base = f"{server.catalog}/v1/{account['connection']['warehouse_name']}"
    h = {"Authorization": "Bearer " + token}
    for ns in (["outer"], ["outer", "inner"]):
        assert requests.post(base + "/namespaces", json={"namespace": ns}, headers=h).status_code == 200
    path = f"/v1/{account['connection']['warehouse_name']}/namespaces/outer\x1finner"
    response = raw_request(server.catalog, (
        f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        "Connection: close\r\n\r\n").encode())
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    assert b'"namespace":["outer","inner"]' in response

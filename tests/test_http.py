"""The transport: request ids, the access log, malformed requests, and DuckDB's raw
0x1F namespace separator."""

import socket

import boto3
import requests
from botocore.config import Config

from conftest import OPERATORS, catalog_token
from helpers import request_from


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
    # The line is written after the response is sent, so it may trail the response a little.
    import time
    deadline = time.time() + 5
    while True:
        log = open(server.log_path).read()
        line = [entry for entry in log.splitlines() if r.headers["x-request-id"] in entry]
        if line or time.time() > deadline:
            break
        time.sleep(0.02)
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


# ---- connections waiting for a head: event loop, head timeout, per-address cap

def _stalled(url, source, head=b"GET /livez HTTP/1.1\r\nHost: x\r\n"):
    """A connection from `source` that sends half a request head and then nothing."""
    host, port = url.split("//")[1].split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect((host, int(port)))
    sock.sendall(head)
    return sock


def _get_from(url, source, path="/livez"):
    """One whole request from `source`; returns the status line."""
    host, port = url.split("//")[1].split(":")
    return request_from(host, port, source, path).split(b"\r\n", 1)[0]


def _closed_by_server(sock):
    """True when the server has closed `sock` (EOF or reset), False while it is open."""
    sock.setblocking(False)
    try:
        data = sock.recv(65536)
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.setblocking(True)
    return data == b"" or data.startswith(b"HTTP/1.1 503")


def test_stalled_heads_from_one_address_do_not_block_another():
    from conftest import Server
    import time
    # Far fewer request threads than stalled connections: a stalled head must hold none.
    srv = Server(args=["--max-connections-per-address", "300", "--head-timeout-seconds", "30",
                       "--max-request-threads", "4"])
    try:
        stalled = [_stalled(srv.api, "127.0.0.1") for _ in range(300)]
        for _ in range(20):
            assert _get_from(srv.api, "127.0.0.2") == b"HTTP/1.1 200 OK"
        # The stalled connections are still open (waiting, not dropped) and can finish.
        time.sleep(0.2)
        assert not any(_closed_by_server(s) for s in stalled)
        stalled[0].sendall(b"Connection: close\r\n\r\n")
        assert stalled[0].recv(65536).startswith(b"HTTP/1.1 200")
        for s in stalled:
            s.close()
    finally:
        srv.cleanup()


def test_a_head_that_does_not_arrive_in_time_is_closed():
    from conftest import Server
    import time
    srv = Server(args=["--head-timeout-seconds", "1", "--idle-timeout-seconds", "30"])
    try:
        sock = _stalled(srv.api, "127.0.0.1")
        time.sleep(0.3)
        assert not _closed_by_server(sock)
        # Trickling bytes does not extend the head's deadline (slowloris).
        deadline = time.time() + 4
        closed = False
        while time.time() < deadline and not closed:
            try:
                sock.sendall(b"X")
            except OSError:
                closed = True
                break
            time.sleep(0.2)
            closed = _closed_by_server(sock)
        assert closed
        sock.close()
        # An idle keep-alive connection is governed by the idle timeout, not the head's.
        host, port = srv.api.split("//")[1].split(":")
        with socket.create_connection((host, int(port)), timeout=10) as ka:
            ka.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
            assert ka.recv(65536).startswith(b"HTTP/1.1 200")
            time.sleep(1.8)
            assert not _closed_by_server(ka)
            ka.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
            assert ka.recv(65536).startswith(b"HTTP/1.1 200")
    finally:
        srv.cleanup()


def test_connections_beyond_the_per_address_cap_are_refused():
    from conftest import Server
    import time
    srv = Server(args=["--max-connections-per-address", "5"])
    try:
        held = [_stalled(srv.api, "127.0.0.1") for _ in range(5)]
        time.sleep(0.2)
        extra = _stalled(srv.api, "127.0.0.1", head=b"")
        extra.settimeout(5)
        answer = b""
        try:
            answer = extra.recv(65536)
        except ConnectionResetError:
            pass
        assert answer == b"" or answer.startswith(b"HTTP/1.1 503"), answer
        extra.close()
        # Another address is served meanwhile.
        assert _get_from(srv.api, "127.0.0.2") == b"HTTP/1.1 200 OK"
        # Once one closes, the address gets a connection again.
        held.pop().close()
        time.sleep(0.2)
        assert _get_from(srv.api, "127.0.0.1") == b"HTTP/1.1 200 OK"
        for s in held:
            s.close()
    finally:
        srv.cleanup()


def test_pipelined_requests_and_a_partial_next_head_after_keep_alive():
    from conftest import Server
    import time
    srv = Server(args=["--head-timeout-seconds", "1", "--idle-timeout-seconds", "30"])
    try:
        host, port = srv.api.split("//")[1].split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            # Two requests in one send: the second's head is read with the first's.
            sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"
                         b"GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            deadline = time.time() + 5
            while data.count(b"HTTP/1.1 ") < 2 and time.time() < deadline:
                data += sock.recv(65536)
            assert data.startswith(b"HTTP/1.1 200")
            assert data.count(b"HTTP/1.1 ") == 2, data
            # Half of the next head, then nothing: closed by the head timeout, not left to
            # the idle one.
            sock.sendall(b"GET /livez HTTP/1.1\r\n")
            time.sleep(2.5)
            assert _closed_by_server(sock)
    finally:
        srv.cleanup()


def test_an_answer_before_the_body_reaches_a_client_still_sending_it(server):
    """A request refused before its body is read (here: unsigned, to a bucket that does not
    exist, so 404 NoSuchBucket at once) whose client keeps sending a body larger than the
    socket buffers: the server answers, discards the rest and then closes, so the client
    reads the answer instead of a connection reset."""
    host, port = server.s3[len("http://"):].split(":")
    body = b"b" * (48 * 1024 * 1024)
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(b"PUT /nobucket/key HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body))
        s.sendall(body)  # blocks until the server has read or discarded most of it
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = s.recv(65536)
            assert chunk, answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 404 "), answer[:200]
    assert b"Connection: close" in answer

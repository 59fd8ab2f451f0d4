"""Small helpers the black-box suites share."""

import socket
import time
import urllib.parse
import uuid


def uid(prefix="n"):
    return prefix + uuid.uuid4().hex[:10]


def wait_for(probe, what, timeout=20.0, interval=0.05):
    """Polls probe() until it returns a truthy value; fails after the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def ns_path(levels):
    """A namespace as one path segment: levels joined by 0x1F, percent-encoded (%1F)."""
    return urllib.parse.quote("\x1f".join(levels), safe="")


def request_from(host, port, source, path="/livez", timeout=10):
    """One whole GET on a new connection bound to the local address `source` (loopback
    covers 127/8, so 127.0.0.2 is "another client"); returns the raw response bytes."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((source, 0))
        sock.settimeout(timeout)
        sock.connect((host, int(port)))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    return data


def run_maintenance(server, warehouse_id, namespace, table, jobs, **extra):
    """POST /internal/maintenance/run with the test operator secret; the results list."""
    import requests
    from conftest import BOOTSTRAP_SECRET
    r = requests.post(server.api + "/internal/maintenance/run",
                      headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"warehouse_id": warehouse_id, "namespace": namespace, "table": table,
                            "jobs": list(jobs), **extra})
    assert r.status_code == 200, r.text
    return r.json()["results"]


def warehouse_s3(server, acct):
    """boto3 on the server's S3 endpoint with the account's static warehouse key."""
    import boto3
    from botocore.config import Config
    cred = acct["connection"]["catalog_credential"]
    return boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                        aws_access_key_id=cred["client_id"],
                        aws_secret_access_key=cred["client_secret"],
                        config=Config(s3={"addressing_style": "path"}))



def writers_until_killed(server, s3, bucket, body_for, want, writers=8, timeout=20):
    """`writers` threads put k00000, k00001, … (body_for(i) each) into `bucket` until the
    server is SIGKILLed, which happens once `want` puts were acknowledged (or `timeout`
    passed). Returns {key: i} of the acknowledged puts."""
    import signal
    import threading

    acknowledged = {}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(w):
        i = w
        while not stop.is_set():
            try:
                s3.put_object(Bucket=bucket, Key=f"k{i:05d}", Body=body_for(i))
            except Exception:
                return  # the server died under us: this write was never acknowledged
            with lock:
                acknowledged[f"k{i:05d}"] = i
            i += writers

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    deadline = time.time() + timeout
    while len(acknowledged) < want and time.time() < deadline:
        time.sleep(0.01)
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    stop.set()
    for t in threads:
        t.join()
    return acknowledged

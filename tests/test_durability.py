"""Crash safety: a server killed with SIGKILL in the middle of uploads loses no
acknowledged write and exposes no partial object; graceful shutdown finishes in-flight
requests."""

import hashlib
import json
import os
import sqlite3
import subprocess
import signal
import time

import boto3
import requests
from botocore.config import Config

from conftest import OPERATORS, Server
from helpers import writers_until_killed


def client(server):
    return boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                        aws_access_key_id="operator1",
                        aws_secret_access_key=OPERATORS["operator1"],
                        config=Config(retries={"max_attempts": 0}, connect_timeout=5,
                                      read_timeout=30))


def body_for(i):
    # Distinct, self-describing content: a partial or mixed object cannot match. Sizes run
    # from 50 KB to over 250 KB, across the local store's 128 KiB limit between objects
    # kept in its index and objects kept in files of their own.
    return (f"object-{i}-".encode() * (2000 + i * 37))[: 50_000 + i * 1000]


def test_sigkill_loses_no_acknowledged_write():
    server = Server()
    try:
        s3 = client(server)
        s3.create_bucket(Bucket="crash")
        acknowledged = {
            key: hashlib.md5(body_for(i)).hexdigest()
            for key, i in writers_until_killed(server, s3, "crash", body_for, want=200).items()}
        assert len(acknowledged) >= 50

        server.restart()
        s3 = client(server)
        listed = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket="crash"):
            for o in page.get("Contents", []):
                listed[o["Key"]] = o["Size"]
        # Every acknowledged write is there, intact.
        for key, md5 in acknowledged.items():
            got = s3.get_object(Bucket="crash", Key=key)["Body"].read()
            assert hashlib.md5(got).hexdigest() == md5, key
        # Anything else that is visible is a complete object too (acknowledged or not).
        for key, size in listed.items():
            i = int(key[1:])
            assert size == len(body_for(i)), key
            got = s3.get_object(Bucket="crash", Key=key)["Body"].read()
            assert got == body_for(i), key
    finally:
        server.cleanup()


def test_sigterm_finishes_in_flight_requests():
    import http.client
    import socket
    import urllib.parse

    server = Server()
    try:
        s3 = client(server)
        s3.create_bucket(Bucket="graceful")
        signer = boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                              aws_access_key_id="operator1",
                              aws_secret_access_key=OPERATORS["operator1"],
                              config=Config(signature_version="s3v4"))
        url = urllib.parse.urlsplit(signer.generate_presigned_url(
            "put_object", Params={"Bucket": "graceful", "Key": "big"}, ExpiresIn=300))
        payload = b"z" * (8 * 1024 * 1024)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        conn.putrequest("PUT", url.path + "?" + url.query)
        conn.putheader("Content-Length", str(len(payload)))
        conn.endheaders()
        conn.send(payload[: len(payload) // 2])  # the request is now in flight

        server.proc.send_signal(signal.SIGTERM)
        # Shutdown has begun once the listener refuses new connections.
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection((url.hostname, url.port), timeout=1).close()
            except OSError:
                break
            assert time.time() < deadline, "server kept accepting after SIGTERM"
            time.sleep(0.01)
        conn.send(payload[len(payload) // 2:])
        response = conn.getresponse()
        assert response.status == 200, response.read()
        assert server.proc.wait(timeout=30) == 0

        server.restart()
        got = client(server).get_object(Bucket="graceful", Key="big")["Body"].read()
        assert got == payload
    finally:
        server.cleanup()


def test_a_second_server_on_the_same_data_dir_is_refused():
    # Two processes over one database would each trust their own memo of it.
    server = Server()
    try:
        cmd = list(server.cmd)
        cmd[cmd.index("--ready-file") + 1] = server.ready_file + ".second"
        second = subprocess.run(cmd, env=server.env, capture_output=True, text=True, timeout=30)
        assert second.returncode != 0
        assert "in use by another tablemere-server" in second.stderr
        assert "--data-dir" in second.stderr  # says what to do about it
        assert requests.get(server.api + "/healthz", timeout=5).json()["ok"] is True
        server.restart()  # the lock went with the stopped process
        assert requests.get(server.api + "/healthz", timeout=5).json()["ok"] is True
    finally:
        server.cleanup()


def test_buckets_the_local_index_kept_are_imported_into_the_metastore_on_upgrade():
    """Releases before the bucket registry moved to the metastore kept each bucket, with
    its tags, ACL and CORS, in the local disk's own index. The first start after the
    upgrade (an empty registry) imports them: nothing a user set is lost. (The embedded
    deployment's upgrade: SQLite state beside the local index.)"""
    server = Server(object_store="local", metastore="sqlite")
    try:
        s3 = client(server)
        s3.create_bucket(Bucket="kept-b")
        s3.put_object(Bucket="kept-b", Key="k", Body=b"v")
        server.stop()
        data = os.path.join(server.data_dir, "data")
        # The state the earlier release left: attributes in the index, no registry rows.
        with sqlite3.connect(os.path.join(data, "objects", "index.db")) as index:
            index.execute("UPDATE buckets SET attrs = ? WHERE name = 'kept-b'", (json.dumps(
                {"tags": {"team": "data"}, "acl": "public-read"}),))
        with sqlite3.connect(os.path.join(data, "state.db")) as state:
            state.execute("DELETE FROM s3_bucket_tags")
            state.execute("DELETE FROM s3_buckets")
        server.restart()
        s3 = client(server)
        s3.head_bucket(Bucket="kept-b")
        assert s3.get_bucket_tagging(Bucket="kept-b")["TagSet"] == [
            {"Key": "team", "Value": "data"}]
        # Public-read as before: an unsigned listing of the bucket succeeds.
        listing = requests.get(f"{server.s3}/kept-b?list-type=2", timeout=10)
        assert listing.status_code == 200 and "<Key>k</Key>" in listing.text, listing.text
        assert s3.get_object(Bucket="kept-b", Key="k")["Body"].read() == b"v"
    finally:
        server.cleanup()

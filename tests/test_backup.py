"""Backup and restore of the embedded deployment (SQLite, local disk), taken while the
server keeps serving writes: the restored data directory serves every table as of the
backup to DuckDB, PyIceberg and Spark, with the same API keys, tokens and catalog
credentials; and the documented procedure for the scale-out shape (pg_dump, the bucket's
copy, the same master key)."""

import os
import subprocess
import tempfile
import threading
import uuid

import pyarrow as pa
import requests
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from conftest import BOOTSTRAP_SECRET, SERVER_BIN, Server
from engines import duckdb_from_recipe, pyiceberg_from_recipe, spark_from_recipe
from helpers import warehouse_s3


# A token names its issuer, the public API URL, which a restored deployment keeps.
ISSUER = ["--public-api-url", "http://api.tablemere.test"]


def account_with_table(server, *statements):
    """A new account, a token of its key, and DuckDB's `statements` run in its catalog."""
    account = server.signup()
    token = requests.post(server.api + "/v1/tokens",
                          json={"api_key": account["api_key"]}).json()["access_token"]
    duck = duckdb_from_recipe(server.connection(account["api_key"], "duckdb"))
    for statement in statements:
        duck.execute(statement)
    duck.close()
    return account, account["api_key"], token


def backup(server, to):
    env = dict(os.environ, TABLEMERE_BOOTSTRAP_SECRET=BOOTSTRAP_SECRET)
    return subprocess.run([str(SERVER_BIN), "backup", "--to", to, "--api-url", server.api],
                          env=env, capture_output=True, text=True, timeout=120)


def restore(source, data_dir):
    return subprocess.run([str(SERVER_BIN), "restore", "--from", source, "--data-dir", data_dir],
                          capture_output=True, text=True, timeout=120)


def test_a_backup_taken_while_writing_restores_every_table_as_of_the_backup():
    server = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET},
                    object_store="local", metastore="sqlite", args=ISSUER)
    restored = None
    work = tempfile.mkdtemp(prefix="tm-backup-")
    try:
        account, key, token = account_with_table(
            server, "CREATE SCHEMA lake.sales",
            "CREATE TABLE lake.sales.orders (id BIGINT, item VARCHAR)",
            "INSERT INTO lake.sales.orders VALUES (1, 'a'), (2, 'b')")
        catalog = pyiceberg_from_recipe(server.connection(key, "pyiceberg"))
        catalog.create_namespace("live")
        live = catalog.create_table("live.events",
                                    schema=Schema(NestedField(1, "v", LongType(), required=False)))
        s3 = warehouse_s3(server, account)
        blob_bucket = "b-" + account["warehouse_id"]
        s3.put_object(Bucket=blob_bucket, Key="notes/readme.txt", Body=b"kept")

        # Appends go on while the backup is taken; each acknowledged one is counted.
        committed, stop = [], threading.Event()

        def writer():
            i = 0
            while not stop.is_set():
                live.append(pa.table({"v": pa.array([i], pa.int64())}))
                committed.append(i)
                i += 1

        t = threading.Thread(target=writer)
        t.start()
        while len(committed) < 3:
            pass
        before = len(committed)
        done = backup(server, os.path.join(work, "backup"))
        after = len(committed)
        stop.set()
        t.join()
        assert done.returncode == 0, done.stderr
        assert "objects" in done.stdout
        # Written after the backup: not in it.
        s3.put_object(Bucket=blob_bucket, Key="notes/later.txt", Body=b"later")
        again = backup(server, os.path.join(work, "backup"))  # never over an existing one
        assert again.returncode != 0 and "exists" in again.stderr

        server.stop()
        home = os.path.join(work, "restored")
        os.makedirs(home)
        r = restore(os.path.join(work, "backup"), os.path.join(home, "data"))
        assert r.returncode == 0, r.stderr
        assert restore(os.path.join(work, "backup"), os.path.join(home, "data")).returncode != 0
        restored = Server(home=home, object_store="local", metastore="sqlite", args=ISSUER)

        # The same key, token and catalog credential work on the restored server.
        assert requests.get(restored.api + "/v1/warehouses",
                            headers={"Authorization": "Bearer " + key}).status_code == 200
        assert requests.get(restored.api + "/v1/warehouses",
                            headers={"Authorization": "Bearer " + token}).status_code == 200
        duck = duckdb_from_recipe(restored.connection(key, "duckdb"))
        assert duck.execute("SELECT count(*), sum(id) FROM lake.sales.orders").fetchone() == (2, 3)
        rows = duck.execute("SELECT v FROM lake.live.events ORDER BY v").fetchall()
        duck.close()
        # As of one moment during the backup: a prefix of the appends, every file there.
        assert before <= len(rows) <= after
        assert [v for (v,) in rows] == list(range(len(rows)))
        catalog = pyiceberg_from_recipe(restored.connection(key, "pyiceberg"))
        assert catalog.load_table("live.events").scan().to_arrow().num_rows == len(rows)
        spark = spark_from_recipe(restored.connection(key, "spark"))
        try:
            assert spark.sql("SELECT count(*) FROM lake.sales.orders").collect()[0][0] == 2
        finally:
            spark.stop()
        s3 = warehouse_s3(restored, account)
        assert s3.get_object(Bucket=blob_bucket, Key="notes/readme.txt")["Body"].read() == b"kept"
        listed = [o["Key"] for o in s3.list_objects_v2(Bucket=blob_bucket).get("Contents", [])]
        assert "notes/later.txt" not in listed
    finally:
        server.cleanup()
        if restored:
            restored.cleanup()
        subprocess.run(["rm", "-rf", work])


def test_restore_refuses_what_is_not_a_complete_backup():
    work = tempfile.mkdtemp(prefix="tm-restore-")
    try:
        os.makedirs(os.path.join(work, "half"))
        r = restore(os.path.join(work, "half"), os.path.join(work, "data"))
        assert r.returncode == 1 and "not a complete backup" in r.stderr
        assert not os.path.exists(os.path.join(work, "data"))
    finally:
        subprocess.run(["rm", "-rf", work])


def test_backup_is_an_operator_route_refused_without_the_secret():
    server = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET},
                    object_store="local", metastore="sqlite")
    try:
        to = os.path.join(server.data_dir, "b-" + uuid.uuid4().hex[:6])
        r = requests.post(server.api + "/internal/backup", json={"to": to})
        assert r.status_code == 404, r.text
        assert not os.path.exists(to)
        r = requests.post(server.api + "/internal/backup", json={"to": "relative/dir"},
                          headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET})
        assert r.status_code == 400, r.text
    finally:
        server.cleanup()


def test_the_scale_out_backup_procedure_restores_a_new_deployment():
    """The README's procedure for PostgreSQL and an S3 store: pg_dump of the database,
    the bucket prefix copied with the store's own tools (here boto3 against SeaweedFS),
    the same master key file; a server started on the copies serves the same tables,
    keys and tokens."""
    import seaweed

    server = Server(object_store="s3", metastore="postgres", args=ISSUER)
    restored = None
    try:
        account, key, token = account_with_table(
            server, "CREATE SCHEMA lake.s", "CREATE TABLE lake.s.t AS SELECT range AS id FROM range(100)")

        cluster = server.cluster
        dump = os.path.join(cluster.dir, server.database + ".dump")
        cluster._run("pg_dump", "-h", cluster.dir, "-U", "postgres", "-Fc", "-f", dump,
                     server.database)
        store = server.backend.client()
        new_root = "restored-" + uuid.uuid4().hex[:8]
        copied = 0
        for page in store.get_paginator("list_objects_v2").paginate(
                Bucket=seaweed.BUCKET, Prefix=server.store_root + "/"):
            for o in page.get("Contents", []):
                store.copy_object(Bucket=seaweed.BUCKET,
                                  Key=new_root + o["Key"][len(server.store_root):],
                                  CopySource={"Bucket": seaweed.BUCKET, "Key": o["Key"]})
                copied += 1
        assert copied > 0
        server.stop()
        new_db = cluster.create_database()
        cluster._run("pg_restore", "-h", cluster.dir, "-U", "postgres", "-d", new_db, dump)

        restored = Server(object_store="s3", metastore="postgres", database=new_db,
                          master_key_file=server.master_key_file, store_root=new_root,
                          args=ISSUER)
        assert requests.get(restored.api + "/v1/warehouses",
                            headers={"Authorization": "Bearer " + token}).status_code == 200
        duck = duckdb_from_recipe(restored.connection(key, "duckdb"))
        assert duck.execute("SELECT count(*), sum(id) FROM lake.s.t").fetchone() == (100, 4950)
        duck.close()
    finally:
        server.cleanup()
        if restored:
            restored.cleanup()

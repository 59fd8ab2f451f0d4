"""Table maintenance through the operator route POST /internal/maintenance/run: snapshot
expiry by the product's rules, committed through the catalog, then the deletion of
exactly the files no retained snapshot reaches. Tables are written by PyIceberg through
the catalog and read back by PyIceberg and DuckDB."""

import uuid

import pyarrow as pa
import pytest
import requests

from conftest import BOOTSTRAP_SECRET, advance_clock
from engines import duckdb_from_recipe, pyiceberg_from_recipe
from helpers import run_maintenance, warehouse_s3

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(ids):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


@pytest.fixture(scope="module")
def env(clocked_server):
    acct = clocked_server.signup(engine="pyiceberg")
    s3 = warehouse_s3(clocked_server, acct)
    return {"srv": clocked_server, "acct": acct, "s3": s3,
            "cat": pyiceberg_from_recipe(acct["connection"])}


def run(env, ns, table, jobs=("expire",)):
    return run_maintenance(env["srv"], env["acct"]["warehouse_id"], ns, table, jobs)


def exists(env, location):
    bucket, key = location.removeprefix("s3://").split("/", 1)
    try:
        env["s3"].head_object(Bucket=bucket, Key=key)
        return True
    except env["s3"].exceptions.ClientError as e:
        assert e.response["Error"]["Code"] in ("404", "NoSuchKey"), e
        return False


def reachable(table):
    """Every manifest list, manifest and live data file of every snapshot."""
    files = set()
    for snap in table.metadata.snapshots:
        files.add(snap.manifest_list)
        for m in snap.manifests(table.io):
            files.add(m.manifest_path)
            for e in m.fetch_manifest_entry(table.io, discard_deleted=True):
                files.add(e.data_file.file_path)
    return files


def new_table(env, properties=None):
    ns = "mnt_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns)
    return ns, env["cat"].create_table(f"{ns}.t", schema=SCHEMA, properties=properties or {})


def test_expiry_deletes_exactly_what_only_expired_snapshots_reach(env):
    ns, t = new_table(env, {"tablemere.maintenance.max-snapshots": "1"})
    t.append(rows([1, 2]))
    t.append(rows([3]))
    t.overwrite(rows([7, 8, 9]))
    t = env["cat"].load_table(f"{ns}.t")
    before_all = reachable(t)
    current = t.current_snapshot()
    kept_before = reachable_of(t, current)
    # PyIceberg's overwrite commits a delete and an append: four snapshots.
    assert len(t.metadata.snapshots) == 4 and all(exists(env, f) for f in before_all)

    [result] = run(env, ns, "t")
    assert result["ran"] and result["snapshots_expired"] == 3, result
    t = env["cat"].load_table(f"{ns}.t")
    assert [s.snapshot_id for s in t.metadata.snapshots] == [current.snapshot_id]
    # Everything the retained snapshot reaches is there; everything else is gone.
    assert reachable(t) == kept_before
    assert all(exists(env, f) for f in kept_before)
    gone = before_all - kept_before
    assert gone and not any(exists(env, f) for f in gone), [f for f in gone if exists(env, f)]
    assert result["files_deleted"] == len(gone), result
    # The table reads the same in PyIceberg and DuckDB.
    assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [7, 8, 9]
    duck = duckdb_from_recipe(env["srv"].connection(env["acct"]["api_key"]))
    assert duck.sql(f"SELECT count(*), sum(id) FROM lake.{ns}.t").fetchone() == (3, 24)
    # A second run has nothing to do.
    [again] = run(env, ns, "t")
    assert not again["ran"] and again["skipped_because"] == "nothing to expire", again


def reachable_of(table, snapshot):
    files = {snapshot.manifest_list}
    for m in snapshot.manifests(table.io):
        files.add(m.manifest_path)
        for e in m.fetch_manifest_entry(table.io, discard_deleted=True):
            files.add(e.data_file.file_path)
    return files


def test_age_limit_keeps_every_ref_head(env):
    ns, t = new_table(env)
    for i in range(4):
        t.append(rows([i]))
    t = env["cat"].load_table(f"{ns}.t")
    first = t.metadata.snapshots[0].snapshot_id
    t.manage_snapshots().create_tag(first, "audit").commit()
    # Four recent snapshots: under the defaults (20, 7 days) nothing expires.
    [r] = run(env, ns, "t")
    assert not r["ran"] and r["snapshots_before"] == 4, r
    # With an age limit of a millisecond (history.expire.max-snapshot-age-ms) everything but
    # the heads expires: main's and the tag's. (The seven-day default is unit-tested: the
    # test clock cannot move here, S3 signatures are checked against it.)
    with t.transaction() as tx:
        tx.set_properties({"history.expire.max-snapshot-age-ms": "1"})
    [r] = run(env, ns, "t")
    assert r["ran"] and r["snapshots_expired"] == 2, r
    t = env["cat"].load_table(f"{ns}.t")
    ids = {s.snapshot_id for s in t.metadata.snapshots}
    assert ids == {first, t.current_snapshot().snapshot_id}
    assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
    assert sorted(t.scan(snapshot_id=first).to_arrow()["id"].to_pylist()) == [0]
    assert all(exists(env, f) for f in reachable(t))


def test_unknown_jobs_and_tables_are_refused(env):
    r = requests.post(env["srv"].api + "/internal/maintenance/run",
                      headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"warehouse_id": env["acct"]["warehouse_id"], "namespace": "x",
                            "table": "t", "jobs": ["defragment"]})
    assert r.status_code == 400 and r.json()["error"]["field"] == "jobs", r.text
    r = requests.post(env["srv"].api + "/internal/maintenance/run",
                      headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"warehouse_id": env["acct"]["warehouse_id"], "namespace": "nope",
                            "table": "t"})
    assert r.status_code == 404, r.text
    # Without the operator secret the route does not exist.
    r = requests.post(env["srv"].api + "/internal/maintenance/run", json={})
    assert r.status_code == 404 and r.json()["error"]["code"] == "route_not_found", r.text


def account_with_a_table(srv, ns, properties=None):
    """A new account on `srv`, its PyIceberg catalog, and an empty table `ns`.t in it."""
    acct = srv.signup(engine="pyiceberg")
    cat = pyiceberg_from_recipe(acct["connection"])
    cat.create_namespace(ns)
    return acct, cat, cat.create_table(f"{ns}.t", schema=SCHEMA, properties=properties or {})


def test_the_periodic_sweep_expires_every_table():
    """Maintenance is on by default; --maintenance-interval sets the sweep's period, and the
    sweep also removes orphans older than --orphan-grace-seconds."""
    from conftest import Server
    import time
    srv = Server(args=("--maintenance-interval", "1", "--orphan-grace-seconds", "1"))
    try:
        acct, cat, t = account_with_a_table(
            srv, "swept", properties={"tablemere.maintenance.max-snapshots": "2"})
        for i in range(4):
            t.append(rows([i]))
        busy = cat.create_table("swept.busy", schema=SCHEMA)
        for i in range(5):
            busy.append(rows([i]))
        deadline = time.time() + 30
        while len(cat.load_table("swept.t").metadata.snapshots) > 2:
            assert time.time() < deadline, "the sweep did not expire the table"
            time.sleep(0.2)
        t = cat.load_table("swept.t")
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
        s3 = warehouse_s3(srv, acct)
        bucket, base = t.metadata.location.removeprefix("s3://").split("/", 1)
        s3.put_object(Bucket=bucket, Key=f"{base}/data/stray.parquet", Body=b"x")
        deadline = time.time() + 30
        while s3.list_objects_v2(Bucket=bucket, Prefix=f"{base}/data/stray")["KeyCount"]:
            assert time.time() < deadline, "the sweep did not remove the orphan"
            time.sleep(0.2)
        t = cat.load_table("swept.t")
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [0, 1, 2, 3]
        # The sweep leaves a partition written in the last ten minutes to its writer.
        r = requests.get(srv.api + "/v1/table",
                         headers={"Authorization": "Bearer " + acct["api_key"]},
                         params={"warehouse": acct["warehouse_id"], "namespace": "swept",
                                 "name": "busy"})
        compact = r.json()["maintenance"]["jobs"]["compact"]
        assert compact["result"] and not compact["result"]["ran"], compact
        assert "written in the last 600 s" in compact["result"]["skipped_because"], compact
        assert len(cat.load_table("swept.busy").inspect.files()) == 5
    finally:
        srv.cleanup()


def test_a_table_clients_write_is_visited_once_its_writes_settle():
    """Commit-driven maintenance: with the sweep an hour away, a table a client wrote is
    compacted a quiet period (--maintenance-quiet-seconds) after its last commit, and
    GET /v1/table says when that visit is due."""
    from conftest import Server
    import datetime
    import time
    srv = Server(args=("--maintenance-quiet-seconds", "2"))
    try:
        acct, cat, t = account_with_a_table(srv, "visited")
        untouched = cat.create_table("visited.untouched", schema=SCHEMA)
        for i in range(8):
            t.append(rows([i * 10, i * 10 + 1]))
        before = len(cat.load_table("visited.t").inspect.files())
        assert before == 8

        def maintenance(name):
            r = requests.get(srv.api + "/v1/table",
                             headers={"Authorization": "Bearer " + acct["api_key"]},
                             params={"warehouse": acct["warehouse_id"], "namespace": "visited",
                                     "name": name})
            assert r.status_code == 200, r.text
            return r.json()["maintenance"]

        def due_in(name):
            due = datetime.datetime.fromisoformat(maintenance(name)["next_due_at"].replace("Z", "+00:00"))
            return (due - datetime.datetime.now(datetime.timezone.utc)).total_seconds()

        # The written table is due within the quiet period; the other one at the sweep.
        assert due_in("t") < 10
        assert due_in("untouched") > 3000
        deadline = time.time() + 30
        while cat.load_table("visited.t").current_snapshot().summary.get("tablemere.maintenance") != "compact":
            assert time.time() < deadline, maintenance("t")
            time.sleep(0.2)
        t = cat.load_table("visited.t")
        assert len(t.inspect.files()) < before
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == sorted(
            x for i in range(8) for x in (i * 10, i * 10 + 1))
        shown = maintenance("t")["jobs"]
        assert shown["compact"]["result"]["ran"] and shown["expire"]["last_run_at"], shown
        # The visit is done: the table is next due at the sweep again.
        assert due_in("t") > 3000
        assert maintenance("untouched")["jobs"]["compact"]["last_run_at"] is None
        assert untouched.current_snapshot() is None
    finally:
        srv.cleanup()


def test_a_restarted_server_queues_no_second_visit_for_a_table():
    """The visit a commit queued is durable; after a restart, the next commit to that table
    finds it instead of queueing another (the queue depth in /metrics stays at one)."""
    from conftest import Server
    srv = Server(args=("--maintenance-quiet-seconds", "3600"))
    try:
        acct, cat, t = account_with_a_table(srv, "v")

        def depth():
            text = requests.get(srv.api + "/metrics").text
            [line] = [x for x in text.splitlines() if x.startswith("tablemere_task_queue_depth ")]
            return int(line.split()[1])

        queued = depth()
        t.append(rows([1]))
        t.append(rows([2]))
        assert depth() == queued + 1
        srv.restart()
        cat = pyiceberg_from_recipe(srv.connection(acct["api_key"], "pyiceberg"))
        cat.load_table("v.t").append(rows([3]))
        assert depth() == queued + 1
        cat.create_table("v.other", schema=SCHEMA).append(rows([4]))
        assert depth() == queued + 2  # another table's visit is its own
    finally:
        srv.cleanup()


def test_a_visit_running_when_a_restart_restores_the_queue_still_ends(tmp_path):
    """After a restart, the queued visits are taken back into memory at the first commit.
    A visit that is running at that moment (its worker is slow) must not stay there as a
    pending one once it ends: the next commit to its table queues a new visit."""
    from conftest import Server
    import time
    started = tmp_path / "worker-started"
    worker = tmp_path / "worker.sh"
    worker.write_text(f"#!/bin/sh\ntouch {started}\nsleep 4\nexit 1\n")
    worker.chmod(0o755)
    srv = Server(args=("--maintenance-quiet-seconds", "1", "--maintenance-worker", str(worker)))
    try:
        acct, cat, t = account_with_a_table(srv, "r")
        for i in range(5):  # five small files: the visit runs the worker on them
            t.append(rows([i]))
        srv.restart()  # the visit is queued; nothing of it is in memory
        cat = pyiceberg_from_recipe(srv.connection(acct["api_key"], "pyiceberg"))

        def depth():
            text = requests.get(srv.api + "/metrics").text
            [line] = [x for x in text.splitlines() if x.startswith("tablemere_task_queue_depth ")]
            return int(line.split()[1])

        deadline = time.time() + 30
        while not started.exists():
            assert time.time() < deadline, "the visit never ran"
            time.sleep(0.1)
        # While it runs, a commit to another table makes the server restore the queue.
        other = cat.create_table("r.other", schema=SCHEMA)
        other.append(rows([100]))

        def compacted_at():
            r = requests.get(srv.api + "/v1/table",
                             headers={"Authorization": "Bearer " + acct["api_key"]},
                             params={"warehouse": acct["warehouse_id"], "namespace": "r",
                                     "name": "t"})
            assert r.status_code == 200, r.text
            return r.json()["maintenance"]["jobs"]["compact"]["last_run_at"]

        while compacted_at() is None:
            assert time.time() < deadline, "the visit never ended"
            time.sleep(0.1)
        time.sleep(0.5)  # its task completes after the jobs' results are recorded
        queued = depth()
        cat.load_table("r.t").append(rows([6]))
        assert depth() == queued + 1  # a new visit for r.t
    finally:
        srv.cleanup()


def test_orphans_older_than_the_grace_period_are_deleted(env):
    ns, t = new_table(env)
    t.append(rows([1, 2, 3]))
    t = env["cat"].load_table(f"{ns}.t")
    bucket = t.metadata.location.removeprefix("s3://").split("/", 1)[0]
    base = t.metadata.location.removeprefix(f"s3://{bucket}/")
    stray = f"{base}/data/stray-{uuid.uuid4().hex}.parquet"
    env["s3"].put_object(Bucket=bucket, Key=stray, Body=b"x" * 100)
    # Beside the table, not below its location: never touched.
    neighbour = f"{base}-other/data/keep.parquet"
    env["s3"].put_object(Bucket=bucket, Key=neighbour, Body=b"y")
    # Under the default grace period (3 days) a fresh orphan stays: perhaps a write in flight.
    # It is noncurrent meanwhile: metering leaves it out.
    [r] = run(env, ns, "t", jobs=("orphans",))
    assert r["ran"] and r["orphans_found"] == 1 and r["orphans_kept_young"] == 1, r
    assert r["noncurrent_bytes"] == 100, r
    assert exists(env, f"s3://{bucket}/{stray}")

    def metered_and_listed():
        m = requests.post(env["srv"].api + "/internal/usage",
                          headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                          json={"warehouse_id": env["acct"]["warehouse_id"]})
        assert m.status_code == 200, m.text
        pages = env["s3"].get_paginator("list_objects_v2").paginate(Bucket=bucket)
        listed = sum(o["Size"] for page in pages for o in page.get("Contents", []))
        return m.json()["bytes"], listed

    metered, listed = metered_and_listed()
    assert metered == listed - 100
    r = requests.post(env["srv"].api + "/internal/maintenance/run",
                      headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"warehouse_id": env["acct"]["warehouse_id"], "namespace": ns,
                            "table": "t", "jobs": ["orphans"], "orphan_grace_seconds": 0})
    assert r.status_code == 200, r.text
    [r] = r.json()["results"]
    assert r["orphans_deleted"] == 1 and r["bytes_deleted"] == 100, r
    assert r["orphans_kept_young"] == 0 and r["noncurrent_bytes"] == 0, r
    assert not exists(env, f"s3://{bucket}/{stray}")
    metered, listed = metered_and_listed()
    assert metered == listed
    assert exists(env, f"s3://{bucket}/{neighbour}")
    # Every file the metadata references is still there, and the table reads.
    assert all(exists(env, f) for f in reachable(t))
    assert exists(env, t.metadata_location)
    assert sorted(env["cat"].load_table(f"{ns}.t").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]


def run_orphans_now(env, ns, table):
    [result] = run_maintenance(env["srv"], env["acct"]["warehouse_id"], ns, table, ["orphans"],
                               orphan_grace_seconds=0)
    return result


def test_orphan_cleanup_leaves_a_nested_namespace_tables_files_alone(env):
    """Table a.t lives at .../a/t; namespace a.t's table x at .../a/t/x, inside it."""
    ns, outer = new_table(env)
    outer.append(rows([1]))
    env["cat"].create_namespace((ns, "t"))
    inner = env["cat"].create_table((ns, "t", "x"), schema=SCHEMA)
    inner.append(rows([5, 6]))
    inner = env["cat"].load_table((ns, "t", "x"))
    outer = env["cat"].load_table(f"{ns}.t")
    assert inner.metadata.location.startswith(outer.metadata.location + "/"), (
        "the test needs the inner table inside the outer one's location")
    r = run_orphans_now(env, ns, "t")
    assert r["ran"] and r["orphans_deleted"] == 0 and r["files_nested"] >= 3, r
    assert all(exists(env, f) for f in reachable(inner))
    assert exists(env, inner.metadata_location)
    reread = env["cat"].load_table((ns, "t", "x"))
    assert sorted(reread.scan().to_arrow()["id"].to_pylist()) == [5, 6]
    assert sorted(env["cat"].load_table(f"{ns}.t").scan().to_arrow()["id"].to_pylist()) == [1]


def test_expiry_goes_on_when_an_expired_snapshots_files_are_already_gone(env):
    """A manifest list deleted by hand must not block expiry forever."""
    ns, t = new_table(env, {"tablemere.maintenance.max-snapshots": "1"})
    t.append(rows([1]))
    t.overwrite(rows([1, 2]))  # the first snapshot's manifest is then its alone
    t = env["cat"].load_table(f"{ns}.t")
    old = t.metadata.snapshots[0]
    bucket, key = old.manifest_list.removeprefix("s3://").split("/", 1)
    env["s3"].delete_object(Bucket=bucket, Key=key)
    [r] = run(env, ns, "t")
    # (PyIceberg overwrites in two snapshots, a delete and an append.)
    assert r["ran"] and r["snapshots_expired"] == 2 and r["files_already_gone"] >= 1, r
    t = env["cat"].load_table(f"{ns}.t")
    assert [s.snapshot_id for s in t.metadata.snapshots] == [t.current_snapshot().snapshot_id]
    assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [1, 2]
    # What only the lost manifest list named (the first manifest) is now an orphan;
    # cleanup removes it.
    r = run_orphans_now(env, ns, "t")
    assert r["ran"] and r["orphans_deleted"] >= 1, r
    assert all(exists(env, f) for f in reachable(t))
    assert sorted(env["cat"].load_table(f"{ns}.t").scan().to_arrow()["id"].to_pylist()) == [1, 2]


def test_an_interval_of_zero_turns_the_sweep_off():
    from conftest import Server
    srv = Server(args=("--maintenance-interval", "0"))
    try:
        acct = srv.signup(engine="pyiceberg")
        cat = pyiceberg_from_recipe(acct["connection"])
        cat.create_namespace("off")
        cat.create_table("off.t", schema=SCHEMA)
        r = requests.get(srv.api + "/v1/table", headers={"Authorization": "Bearer " + acct["api_key"]},
                         params={"warehouse": acct["warehouse_id"], "namespace": "off", "name": "t"})
        assert r.status_code == 200, r.text
        m = r.json()["maintenance"]
        assert m["enabled"] is False and m["next_due_at"] is None, m
    finally:
        srv.cleanup()
    # A negative interval is refused at start.
    with pytest.raises(RuntimeError, match="non-negative"):
        Server(args=("--maintenance-interval", "-1"))


def test_over_quota_only_the_jobs_that_free_space_run(env):
    """A warehouse over its storage quota is read-only to clients; maintenance then does
    not rewrite (that adds files first) but still expires snapshots and removes orphans."""
    srv = env["srv"]
    acct = srv.signup(engine="pyiceberg")
    cat = pyiceberg_from_recipe(acct["connection"])
    cat.create_namespace("full")
    t = cat.create_table("full.t", schema=SCHEMA,
                         properties={"tablemere.maintenance.max-snapshots": "1"})
    for i in range(6):
        t.append(rows([i]))
    over = requests.post(srv.api + "/internal/usage", headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                         json={"warehouse_id": acct["warehouse_id"], "bytes": 6_000_000_000,
                               "objects": 10})
    assert over.status_code == 200 and over.json()["quota"]["made_read_only"] == 1, over.text
    try:
        compact, manifests, expire, orphans = run_maintenance(
            srv, acct["warehouse_id"], "full", "t",
            ["compact", "rewrite-manifests", "expire", "orphans"])
        for skipped in (compact, manifests):
            assert not skipped["ran"] and "over its storage quota" in skipped["skipped_because"]
        assert expire["ran"] and expire["snapshots_expired"] == 5 and expire["files_deleted"] > 0
        assert orphans["ran"], orphans
        t = cat.load_table("full.t")
        assert len(t.metadata.snapshots) == 1 and len(t.inspect.files()) == 6
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == list(range(6))
    finally:
        back = requests.post(srv.api + "/internal/usage",
                             headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                             json={"warehouse_id": acct["warehouse_id"], "bytes": 1000, "objects": 1})
        assert back.status_code == 200, back.text
    [compact] = run_maintenance(srv, acct["warehouse_id"], "full", "t", ["compact"])
    assert compact["ran"], compact


def test_rewriting_an_orphan_does_not_restart_its_grace_period(env):
    """An object nothing commits stays noncurrent (unmetered) for the grace period from
    when a run first found it; writing it again under the same key, with another size,
    neither restarts that clock nor keeps it unmetered for longer. (Last in the module: the
    clock moves ten minutes, within what S3 signatures tolerate.)"""
    ns, t = new_table(env)
    t.append(rows([1]))
    t = env["cat"].load_table(f"{ns}.t")
    bucket = t.metadata.location.removeprefix("s3://").split("/", 1)[0]
    stray = t.metadata.location.removeprefix(f"s3://{bucket}/") + "/data/rewritten.parquet"
    env["s3"].put_object(Bucket=bucket, Key=stray, Body=b"x" * 10)
    [r] = run(env, ns, "t", jobs=("orphans",))
    assert r["orphans_kept_young"] == 1 and r["noncurrent_bytes"] == 10, r
    advance_clock(env["srv"], 600)
    env["s3"].put_object(Bucket=bucket, Key=stray, Body=b"x" * 20)
    [r] = run_maintenance(env["srv"], env["acct"]["warehouse_id"], ns, "t", ["orphans"],
                          orphan_grace_seconds=300)
    assert r["orphans_deleted"] == 1 and r["orphans_kept_young"] == 0, r
    assert not exists(env, f"s3://{bucket}/{stray}")
    assert env["cat"].load_table(f"{ns}.t").scan().to_arrow()["id"].to_pylist() == [1]

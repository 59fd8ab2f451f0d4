"""The commit rebase: a client commit planned before a compaction and sent after it is
re-applied on the new head instead of failing, when it removes none of the files the
compaction replaced; its position deletes of rows the compaction moved are re-aimed at
their new places (commit_rebase.h). DuckDB 1.5 never retries a failed commit, so
without the rebase its DELETE would fail with 409; PyIceberg's append likewise."""

import http.client
import http.server
import threading
import urllib.parse
import uuid

import pyarrow as pa
import pytest
import requests

from engines import duckdb_from_recipe, pyiceberg_from_recipe, spark_from_recipe
from helpers import run_maintenance
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "part", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "part"))


def rows(ids, part):
    return pa.table({"id": pa.array(ids, pa.int64()), "part": [part] * len(ids)})


@pytest.fixture(scope="module")
def env(clocked_server):
    acct = clocked_server.signup(engine="pyiceberg")
    return {"srv": clocked_server, "acct": acct,
            "cat": pyiceberg_from_recipe(acct["connection"]),
            "duck_recipe": clocked_server.connection(acct["api_key"], "duckdb")}


def compact(env, ns):
    [result] = run_maintenance(env["srv"], env["acct"]["warehouse_id"], ns, "t", ["compact"])
    assert result["ran"], result
    return result


def rebases(env):
    text = requests.get(env["srv"].api + "/metrics").text
    for line in text.splitlines():
        if line.startswith("tablemere_commit_rebases_total "):
            return int(line.split()[1])
    raise AssertionError("no tablemere_commit_rebases_total in /metrics")


def table_with_a_crowded_partition(env):
    """Partition b: six small files (compaction rewrites them); partition a: one file."""
    ns = "rb_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns)
    t = env["cat"].create_table(f"{ns}.t", schema=SCHEMA, partition_spec=SPEC)
    t.append(rows(list(range(0, 20)), "a"))
    for k in range(6):
        t.append(rows(list(range(100 + k * 10, 110 + k * 10)), "b"))
    return ns, env["cat"].load_table(f"{ns}.t")


def ids(table):
    return sorted(table.scan().to_arrow()["id"].to_pylist())


def test_a_duckdb_delete_planned_before_a_compaction_commits_after_it(env):
    ns, t = table_with_a_crowded_partition(env)
    expected = [i for i in ids(t) if not (i < 5)]
    duck = duckdb_from_recipe(env["duck_recipe"])
    before = rebases(env)
    duck.execute("BEGIN")
    duck.execute(f"DELETE FROM lake.{ns}.t WHERE part = 'a' AND id < 5")
    result = compact(env, ns)  # rewrites partition b only
    assert result["files_rewritten"] == 6, result
    duck.execute("COMMIT")  # 409 without the rebase
    assert rebases(env) == before + 1
    t = env["cat"].load_table(f"{ns}.t")
    assert ids(t) == expected
    ops = [s.summary.operation.value for s in t.metadata.snapshots]
    assert ops[-2:] == ["replace", "delete"], ops
    assert t.current_snapshot().parent_snapshot_id == result["snapshot_id"]
    fresh = duckdb_from_recipe(env["duck_recipe"])
    assert sorted(r[0] for r in fresh.execute(f"SELECT id FROM lake.{ns}.t").fetchall()) == expected
    # Every snapshot still reads: the compaction's, as before the delete.
    assert sorted(t.scan(snapshot_id=result["snapshot_id"]).to_arrow()["id"].to_pylist()) == sorted(
        expected + list(range(5)))


def test_a_pyiceberg_append_planned_before_a_compaction_commits_after_it(env):
    ns, t = table_with_a_crowded_partition(env)
    expected = ids(t) + [900, 901]
    tx = t.transaction()
    tx.append(rows([900, 901], "a"))
    compact(env, ns)
    tx.commit_transaction()
    t = env["cat"].load_table(f"{ns}.t")
    assert ids(t) == sorted(expected)
    snap = t.current_snapshot()
    assert snap.summary.operation.value == "append"
    assert snap.sequence_number == t.metadata.last_sequence_number
    assert int(snap.summary["total-records"]) - int(snap.summary["total-position-deletes"]) \
        == len(expected)
    assert int(snap.summary["total-data-files"]) == len(
        [f for f in t.inspect.files().to_pylist() if f["content"] == 0])
    # PyIceberg stamped its snapshot when it planned, before the compaction: rebased, it is
    # still the newest (DuckDB reads the newest snapshot, and the log must be in order).
    assert snap.timestamp_ms > t.snapshot_by_id(snap.parent_snapshot_id).timestamp_ms
    duck = duckdb_from_recipe(env["duck_recipe"])
    assert sorted(r[0] for r in duck.execute(f"SELECT id FROM lake.{ns}.t").fetchall()) == sorted(expected)


@pytest.mark.parametrize("change", ["delete-whole-file", "delete-some-rows", "overwrite",
                                    "overwrite-in-the-compacted-partition"])
def test_a_pyiceberg_copy_on_write_change_planned_before_a_compaction_commits_after_it(
        env, change):
    """PyIceberg removes files by rewriting its parent's manifests (copy-on-write). Planned
    before a compaction of partition b and committed after it, a delete in partition a is
    rebased: the head's manifest that lists the removed file is rewritten with it DELETED.
    An overwrite commits two snapshots at once (a delete, then an append): each is rebased
    on the one before it; in partition b, the file its delete rewrites was compacted, so
    that removal becomes position deletes of the file's rows in the compacted file."""
    rebased = True
    ns, t = table_with_a_crowded_partition(env)
    before = ids(t)
    before_rebases = rebases(env)
    tx = t.transaction()
    if change == "delete-whole-file":
        tx.delete("part = 'a'")
        expected = [i for i in before if i >= 100]
    elif change == "delete-some-rows":
        tx.delete("part = 'a' AND id < 5")
        expected = [i for i in before if i >= 5]
    elif change == "overwrite":
        tx.overwrite(rows([7, 8], "a"), overwrite_filter="part = 'a'")
        expected = sorted([i for i in before if i >= 100] + [7, 8])
    else:
        tx.overwrite(rows([1000, 1001], "b"), overwrite_filter="part = 'b' AND id < 103")
        expected = sorted([i for i in before if i < 100 or i >= 103] + [1000, 1001])
    result = compact(env, ns)
    assert result["files_rewritten"] == 6, result
    tx.commit_transaction()  # 409 without the rebase
    assert rebases(env) == before_rebases + rebased
    t = env["cat"].load_table(f"{ns}.t")
    assert ids(t) == expected
    snap = t.current_snapshot()
    ancestors = {snap.parent_snapshot_id,
                 t.snapshot_by_id(snap.parent_snapshot_id).parent_snapshot_id}
    assert result["snapshot_id"] in ancestors
    assert int(snap.summary["total-records"]) - int(snap.summary["total-position-deletes"]) \
        == len(expected)
    assert int(snap.summary["total-data-files"]) == len(
        [f for f in t.inspect.files().to_pylist() if f["content"] == 0])
    # The compacted partition b is untouched; partition a's old file is gone from the
    # live set in every engine, and the compaction's snapshot still reads as before.
    duck = duckdb_from_recipe(env["duck_recipe"])
    assert sorted(r[0] for r in duck.execute(f"SELECT id FROM lake.{ns}.t").fetchall()) == expected
    assert ids_at(t, result["snapshot_id"]) == before
    # Nothing in the manifests the rebase wrote lists a file twice as live.
    live = [e.data_file.file_path for m in snap.manifests(t.io)
            for e in m.fetch_manifest_entry(t.io, discard_deleted=True)]
    assert len(live) == len(set(live)) == len(t.inspect.files())
    assert snap.summary["total-delete-files"] == str(
        sum(1 for f in t.inspect.files().to_pylist() if f["content"] == 1))


def ids_at(table, snapshot_id):
    return sorted(table.scan(snapshot_id=snapshot_id).to_arrow()["id"].to_pylist())


def test_a_pyiceberg_copy_on_write_delete_of_a_file_the_compaction_replaced_commits(env):
    """PyIceberg deletes a row by rewriting its file without it (copy-on-write), planned
    before a compaction rewrote that file. Removing the file again is impossible, so the
    rebase turns the removal into position deletes of its rows where the compaction put
    them, and keeps the client's rewritten file: the commit succeeds (before, it got its
    409 and PyIceberg's own validation refused the retry: "Deleted data files were
    found"), and every engine reads the table without that one row."""
    ns, t = table_with_a_crowded_partition(env)
    before = ids(t)
    before_rebases = rebases(env)
    tx = t.transaction()
    tx.delete("part = 'b' AND id = 105")
    head = compact(env, ns)["snapshot_id"]
    tx.commit_transaction()
    assert rebases(env) == before_rebases + 1
    t = env["cat"].load_table(f"{ns}.t")
    assert t.current_snapshot().parent_snapshot_id == head
    expected = [i for i in before if i != 105]
    assert ids(t) == expected
    assert ids_at(t, head) == before
    duck = duckdb_from_recipe(env["duck_recipe"])
    assert [r[0] for r in duck.execute(f"SELECT id FROM lake.{ns}.t ORDER BY id").fetchall()] \
        == expected
    summary = t.current_snapshot().summary
    files = t.inspect.files().to_pylist()
    assert summary["total-data-files"] == str(sum(1 for f in files if f["content"] == 0))
    assert summary["total-delete-files"] == str(sum(1 for f in files if f["content"] == 1))
    assert summary["total-records"] == str(sum(f["record_count"] for f in files
                                               if f["content"] == 0))
    assert summary["total-position-deletes"] == str(sum(f["record_count"] for f in files
                                                        if f["content"] == 1)) == "10"
    # What the snapshot itself did: it added its rewritten file and a delete file of the
    # ten rows; it removed no file the head still had (the compaction had replaced it).
    assert summary["added-data-files"] == "1"
    assert summary["added-delete-files"] == summary["added-position-delete-files"] == "1"
    assert summary["added-position-deletes"] == "10"
    counts = summary.additional_properties
    assert not {"deleted-data-files", "deleted-records", "removed-files-size"} & set(counts), counts


@pytest.mark.parametrize("manifests_rewritten", [False, True])
def test_a_duckdb_delete_of_rows_the_compaction_moved_is_re_aimed_at_their_new_file(
        env, manifests_rewritten):
    """DuckDB deletes rows of two small files, planned before a compaction rewrote them
    (and, in one case, before a manifest rewrite dropped the entries recording that). The
    rebase re-aims its position deletes at the rows' places in the compacted file, from
    where the compaction recorded moving them: COMMIT succeeds, those rows are gone for
    every engine, and no other row is."""
    ns, t = table_with_a_crowded_partition(env)
    before_ids = ids(t)
    before_rebases = rebases(env)
    duck = duckdb_from_recipe(env["duck_recipe"])
    duck.execute("BEGIN")
    duck.execute(f"DELETE FROM lake.{ns}.t WHERE part = 'b' AND id IN (105, 131, 159)")
    head = compact(env, ns)["snapshot_id"]
    if manifests_rewritten:
        [m] = run_maintenance(env["srv"], env["acct"]["warehouse_id"], ns, "t",
                              ["rewrite-manifests"])
        assert m["ran"] and m["entries_dropped"] > 0, m
        head = m["snapshot_id"]
    duck.execute("COMMIT")
    assert rebases(env) == before_rebases + 1
    t = env["cat"].load_table(f"{ns}.t")
    assert t.current_snapshot().parent_snapshot_id == head
    expected = [i for i in before_ids if i not in (105, 131, 159)]
    assert ids(t) == expected
    fresh = duckdb_from_recipe(env["duck_recipe"])
    assert [r[0] for r in fresh.execute(f"SELECT id FROM lake.{ns}.t ORDER BY id").fetchall()] \
        == expected
    files = t.inspect.files().to_pylist()
    [compacted] = [f["file_path"] for f in files
                   if f["content"] == 0 and "compacted-" in f["file_path"]]
    deletes = [f for f in files if f["content"] == 1]
    assert deletes and all("rebased-deletes-" in f["file_path"] for f in deletes), deletes
    assert sum(f["record_count"] for f in deletes) == 3
    # They name the compacted file now, and nothing else.
    import pyarrow.parquet as pq
    named = set()
    for f in deletes:
        with t.io.new_input(f["file_path"]).open() as stream:
            named |= set(pq.read_table(stream)["file_path"].to_pylist())
    assert named == {compacted}
    assert ids_at(t, head) == before_ids  # the compaction's own snapshot is unchanged


class CommitInterleaver:
    """A pass-through HTTP proxy in front of the catalog that, on the first commit to table
    `t` (POST .../tables/t, or DuckDB's .../transactions/commit), runs `before_commit` and
    only then forwards it: the client
    planned its change before whatever `before_commit` does and commits after it. It
    counts the commits it forwards, so a client's own retries show."""

    def __init__(self, upstream, before_commit):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.before_commit = before_commit
        self.commits = []  # the upstream status of each forwarded commit
        self.armed = True  # while False, commits pass as any request does
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?")[0]
                commit = proxy.armed and self.command == "POST" and (
                    path.endswith("/tables/t") or path.endswith("/transactions/commit"))
                if commit and not proxy.commits:
                    proxy.before_commit()
                upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port,
                                                      timeout=60)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "connection", "content-length")}
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                if commit:
                    proxy.commits.append(answer.status)
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("connection", "content-length", "transfer-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = forward

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def spark_table_with_a_crowded_partition(env, spark, mode):
    """As table_with_a_crowded_partition, written by Spark in format v3 (row lineage;
    merge-on-read deletes are deletion vectors)."""
    ns = "rb_" + uuid.uuid4().hex[:6]
    spark.sql(f"CREATE NAMESPACE lake.{ns}")
    spark.sql(f"""CREATE TABLE lake.{ns}.t (id bigint, part string) USING iceberg
                  PARTITIONED BY (part)
                  TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='{mode}',
                                 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}')""")
    spark.sql(f"INSERT INTO lake.{ns}.t SELECT id, 'a' FROM range(0, 20)")
    for k in range(6):
        spark.sql(f"INSERT INTO lake.{ns}.t SELECT id, 'b' FROM range({100 + k * 10}, "
                  f"{110 + k * 10})")
    return ns, env["cat"].load_table(f"{ns}.t")


LINEAGE = "SELECT id, _row_id, _last_updated_sequence_number FROM lake.{}.t"


@pytest.mark.spark
@pytest.mark.parametrize("part", ["a", "b"])
@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
@pytest.mark.parametrize("version", [2, 3])
def test_a_spark_merge_planned_before_a_compaction_commits_after_it(env, version, mode, part):
    """Spark plans a MERGE into a partition, then the proxy lets a compaction of partition b
    commit before the MERGE's commit arrives. Merge-on-read adds a data file and a position
    delete of the file holding the deleted row; copy-on-write replaces that file. Into
    partition a, the MERGE touches nothing the compaction did; into partition b, the file it
    deletes from is one the compaction replaced: its position delete is re-aimed at the
    row's new place, or its removal of the file becomes position deletes of that file's rows
    there. The server rebases each, so Spark's one commit succeeds (Iceberg Java would
    otherwise retry after a 409, and its own validation would then refuse the retry when
    the MERGE touched partition b: "Cannot commit, missing data files"). In format v3 the
    deletes are deletion vectors (re-aimed into one for the compacted file), and the rows'
    ids are assigned anew past the compaction's: every row keeps its id, and the new one
    gets one no other row has."""
    compaction = {}

    def compact_b():
        compaction.update(compact(env, ns))

    conf = dict(env["srv"].connection(env["acct"]["api_key"], "spark"))
    proxy = CommitInterleaver(conf["conf"]["spark.sql.catalog.lake.uri"], compact_b)
    conf["conf"] = {**conf["conf"], "spark.sql.catalog.lake.uri": proxy.url}
    spark = spark_from_recipe(conf)
    if version == 2:
        ns, t = table_with_a_crowded_partition(env)
        with t.transaction() as tx:
            tx.set_properties({"write.merge.mode": mode, "write.delete.mode": mode,
                               "write.update.mode": mode})
    else:
        proxy.armed = False
        ns, t = spark_table_with_a_crowded_partition(env, spark, mode)
        lineage_before = {r[0]: (r[1], r[2]) for r in spark.sql(LINEAGE.format(ns)).collect()}
        proxy.armed = True
    before_ids = ids(t)
    gone = 3 if part == "a" else 105
    expected = sorted([i for i in before_ids if i != gone] + [500])
    before = rebases(env)
    try:
        spark.sql(f"""MERGE INTO lake.{ns}.t AS target
                      USING (SELECT {gone}L AS id, '{part}' AS part
                             UNION ALL SELECT 500L, '{part}') AS source
                      ON target.id = source.id AND target.part = '{part}'
                      WHEN MATCHED THEN DELETE
                      WHEN NOT MATCHED THEN INSERT *""")
        assert compaction.get("files_rewritten") == 6, compaction
        t = env["cat"].load_table(f"{ns}.t")
        assert ids(t) == expected
        ops = [x.summary.operation.value for x in t.metadata.snapshots]
        assert ops[-2] == "replace", ops
        assert t.current_snapshot().parent_snapshot_id == compaction["snapshot_id"]
        # Both are rebased: one commit, answered 200.
        assert proxy.commits == [200], proxy.commits
        assert rebases(env) == before + 1
        got = sorted(r[0] for r in spark.sql(f"SELECT id FROM lake.{ns}.t").collect())
        assert got == expected
        duck = duckdb_from_recipe(env["duck_recipe"])
        assert [r[0] for r in duck.execute(
            f"SELECT id FROM lake.{ns}.t ORDER BY id").fetchall()] == expected
        if version == 3:
            if mode == "merge-on-read":
                assert {f.file_format for f in spark.sql(
                    f"SELECT file_format FROM lake.{ns}.t.delete_files").collect()} == {"PUFFIN"}
            lineage = {r[0]: (r[1], r[2]) for r in spark.sql(LINEAGE.format(ns)).collect()}
            assert sorted(lineage) == expected
            # Rows the MERGE did not touch keep their ids and sequence numbers.
            for i in expected:
                if i != 500:
                    assert lineage[i] == lineage_before[i], i
            ids_now = [v[0] for v in lineage.values()]
            assert None not in ids_now and len(set(ids_now)) == len(ids_now)
            # The new row's id lies past every id the compaction's manifests could give.
            assert lineage[500][0] >= max(v[0] for v in lineage_before.values())
            assert lineage[500][1] == max(v[1] for v in lineage.values())
        # The compaction's snapshot still reads as before the MERGE.
        then = sorted(r[0] for r in spark.sql(
            f"SELECT id FROM lake.{ns}.t VERSION AS OF {compaction['snapshot_id']}").collect())
        assert then == before_ids
    finally:
        spark.stop()
        proxy.close()


def test_a_client_snapshot_may_not_carry_the_maintenance_mark(env):
    """The rebase follows snapshots marked as maintenance's (their summary's
    tablemere.maintenance): a client's commit carrying the mark is refused with a 400
    naming it, and the table is unchanged."""
    from pyiceberg.exceptions import BadRequestError
    ns, t = table_with_a_crowded_partition(env)
    before = t.current_snapshot().snapshot_id
    with pytest.raises(BadRequestError, match="tablemere.maintenance"):
        t.append(rows([1], "a"), snapshot_properties={"tablemere.maintenance": "compact"})
    t = env["cat"].load_table(f"{ns}.t")
    assert t.current_snapshot().snapshot_id == before
    t.append(rows([1], "a"), snapshot_properties={"note": "fine"})  # other keys are
    assert env["cat"].load_table(f"{ns}.t").current_snapshot().summary["note"] == "fine"


def test_a_duckdb_delete_planned_before_two_compactions_is_re_aimed_through_both(env):
    """DuckDB deletes rows of both partitions; one compaction rewrites partition b, then
    (its threshold lowered) another rewrites partition a. The rebase re-aims each delete
    with the row moves of the compaction that moved its rows."""
    ns, t = table_with_a_crowded_partition(env)
    for k in range(2):  # partition a: three files, too few for the first compaction
        t.append(rows(list(range(20 + k * 10, 30 + k * 10)), "a"))
    t = env["cat"].load_table(f"{ns}.t")
    before = ids(t)
    before_rebases = rebases(env)
    duck = duckdb_from_recipe(env["duck_recipe"])
    duck.execute("BEGIN")
    duck.execute(f"DELETE FROM lake.{ns}.t WHERE id IN (3, 25, 105, 131)")
    first = compact(env, ns)
    assert first["files_rewritten"] == 6, first
    with env["cat"].load_table(f"{ns}.t").transaction() as tx:
        tx.set_properties({"tablemere.maintenance.compact.min-input-files": "3"})
    second = compact(env, ns)
    assert second["files_rewritten"] == 3, second
    duck.execute("COMMIT")
    assert rebases(env) == before_rebases + 1
    t = env["cat"].load_table(f"{ns}.t")
    assert t.current_snapshot().parent_snapshot_id == second["snapshot_id"]
    expected = [i for i in before if i not in (3, 25, 105, 131)]
    assert ids(t) == expected
    fresh = duckdb_from_recipe(env["duck_recipe"])
    assert [r[0] for r in fresh.execute(f"SELECT id FROM lake.{ns}.t ORDER BY id").fetchall()] \
        == expected
    files = t.inspect.files().to_pylist()
    compacted = {f["file_path"] for f in files if f["content"] == 0}
    assert len(compacted) == 2 and all("compacted-" in p for p in compacted), compacted
    import pyarrow.parquet as pq
    named = set()
    for f in files:
        if f["content"] == 1:
            with t.io.new_input(f["file_path"]).open() as stream:
                named |= set(pq.read_table(stream)["file_path"].to_pylist())
    assert named == compacted


@pytest.mark.parametrize("a_day_passes", [False, True])
def test_a_commit_whose_row_moves_were_forgotten_keeps_its_conflict(a_day_passes):
    """Row moves are kept a day. A DuckDB delete planned before a compaction (the proxy runs
    it once DuckDB has written its files) is rebased when it arrives at once; when it
    arrives more than a day later, after another compaction's save forgot the old moves,
    it cannot be re-aimed: its 409 stands and the table is unchanged."""
    from conftest import BOOTSTRAP_SECRET, Server, advance_clock
    srv = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                            "TABLEMERE_TEST_CLOCK": "1"},
                 args=("--catalog-token-seconds", "200000"))
    proxy = None
    try:
        acct = srv.signup(engine="pyiceberg")
        local = {"srv": srv, "acct": acct, "cat": pyiceberg_from_recipe(acct["connection"])}
        ns, t = table_with_a_crowded_partition(local)
        other, _ = table_with_a_crowded_partition(local)
        before = ids(t)
        heads = []

        def compact_then_maybe_a_day_passes():
            heads.append(compact(local, ns)["snapshot_id"])
            if a_day_passes:
                advance_clock(srv, 25 * 3600)
            compact(local, other)  # saves its own moves, forgetting those over a day old

        proxy = CommitInterleaver(srv.catalog, compact_then_maybe_a_day_passes)
        recipe = dict(srv.connection(acct["api_key"], "duckdb"))
        recipe["sql"] = recipe["sql"].replace(srv.catalog, proxy.url)
        assert proxy.url in recipe["sql"]
        duck = duckdb_from_recipe(recipe)
        duck.execute("BEGIN")
        duck.execute(f"DELETE FROM lake.{ns}.t WHERE id IN (105, 131)")
        if not a_day_passes:
            duck.execute("COMMIT")
            assert proxy.commits == [204] and rebases(local) == 1, proxy.commits  # transactions/commit
            t = local["cat"].load_table(f"{ns}.t")
            assert t.current_snapshot().parent_snapshot_id == heads[0]
            assert ids(t) == [i for i in before if i not in (105, 131)]
            return
        with pytest.raises(Exception, match="409|[Cc]onflict"):
            duck.execute("COMMIT")
        assert proxy.commits == [409], proxy.commits
        t = local["cat"].load_table(f"{ns}.t")
        # Nothing of DuckDB's: only maintenance committed since (the sweep may have too,
        # once the clock moved).
        ops = [x.summary.operation.value for x in t.metadata.snapshots]
        assert ops[:7] == ["append"] * 7 and set(ops[7:]) == {"replace"}, ops
        assert heads[0] in [x.snapshot_id for x in t.metadata.snapshots]
        assert rebases(local) == 0
        # (Its rows are not read back: S3 refuses clients' signatures a day off its clock.)
    finally:
        if proxy:
            proxy.close()
        srv.cleanup()


@pytest.mark.parametrize("rows_in_files", [1, 3])
def test_the_rebase_time_limit_is_for_the_whole_commit(tmp_path, rows_in_files):
    """The rebase runs the worker inside the commit request, bounded in all by
    --rebase-timeout-seconds (here 6 s), not per run. The worker is made to take 2.5 s
    more per delete file it re-aims: DuckDB's delete of a row of one file is rebased; of
    rows in three files (a delete file each) it runs out of time and keeps its 409, and the
    table is unchanged."""
    from conftest import BOOTSTRAP_SECRET, ROOT, Server
    runs = tmp_path / "runs"
    worker = tmp_path / "worker.sh"
    real = ROOT / "build" / "bin" / "tablemere-maint"
    worker.write_text("#!/bin/sh\n"
                      f'if [ "$1" = translate-deletes ]; then echo run >> {runs}; sleep 2.5; fi\n'
                      f'exec {real} "$@"\n')
    worker.chmod(0o755)
    srv = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET},
                 args=("--maintenance-worker", str(worker), "--rebase-timeout-seconds", "6"))
    try:
        acct = srv.signup(engine="pyiceberg")
        local = {"srv": srv, "acct": acct, "cat": pyiceberg_from_recipe(acct["connection"]),
                 "duck_recipe": srv.connection(acct["api_key"], "duckdb")}
        ns, t = table_with_a_crowded_partition(local)
        before = ids(t)
        gone = [105, 131, 159][:rows_in_files]  # each in a file of its own
        duck = duckdb_from_recipe(local["duck_recipe"])
        duck.execute("BEGIN")
        duck.execute(f"DELETE FROM lake.{ns}.t WHERE id IN ({', '.join(map(str, gone))})")
        head = compact(local, ns)["snapshot_id"]
        if rows_in_files == 1:
            duck.execute("COMMIT")
            assert ids(local["cat"].load_table(f"{ns}.t")) == [i for i in before if i not in gone]
            assert runs.read_text().count("run") == 1
            return
        with pytest.raises(Exception, match="409|[Cc]onflict"):
            duck.execute("COMMIT")
        assert runs.read_text().count("run") in (2, 3)  # the third, if started, was cut
        t = local["cat"].load_table(f"{ns}.t")
        assert t.current_snapshot().snapshot_id == head and ids(t) == before
    finally:
        srv.cleanup()

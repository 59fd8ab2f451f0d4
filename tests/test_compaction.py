"""Compaction through POST /internal/maintenance/run: a table's small Parquet files are
rewritten per partition by the worker (tablemere-maint, Arrow C++) and swapped in by a
`replace` snapshot the server commits. PyIceberg writes the tables through the catalog;
PyIceberg, DuckDB and Spark read them back before and after, at the current and the
previous snapshot, with filters that the new files' column bounds must not mis-prune."""

import datetime
import decimal
import uuid

import pyarrow as pa
import pytest
import requests

from engines import (duckdb_from_recipe, pyiceberg_from_recipe, pyiceberg_server_planning,
                     spark_from_recipe, spark_reads_alike, with_server_planning_catalog)
from helpers import run_maintenance, warehouse_s3
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (BooleanType, DateType, DecimalType, DoubleType, LongType,
                             NestedField, StringType, TimestampType)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "part", StringType(), required=False),
    NestedField(3, "name", StringType(), required=False),
    NestedField(4, "score", DoubleType(), required=False),
    NestedField(5, "day", DateType(), required=False),
    NestedField(6, "at", TimestampType(), required=False),
    NestedField(7, "ok", BooleanType(), required=False),
    NestedField(8, "price", DecimalType(10, 2), required=False),
)
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "part"),
                     PartitionField(7, 1001, IdentityTransform(), "ok"))
ARROW = SCHEMA.as_arrow()


def batch(start, n):
    ids = list(range(start, start + n))
    return pa.table({
        "id": ids,
        "part": ["a" if i % 2 else "b" for i in ids],
        "name": [None if i % 7 == 0 else f"name-{i}" for i in ids],
        "score": [None if i % 5 == 0 else i * 0.25 for i in ids],
        "day": [datetime.date(2026, 1, 1) + datetime.timedelta(days=i % 40) for i in ids],
        "at": [datetime.datetime(2026, 1, 1) + datetime.timedelta(minutes=i) for i in ids],
        "ok": [i % 3 == 0 for i in ids],
        "price": [decimal.Decimal(i) / 100 for i in ids],
    }, schema=ARROW)


@pytest.fixture(scope="module")
def env(clocked_server):
    server = clocked_server
    acct = server.signup(engine="pyiceberg")
    return {"srv": server, "acct": acct, "cat": pyiceberg_from_recipe(acct["connection"]),
            "duck": duckdb_from_recipe(server.connection(acct["api_key"], "duckdb"))}


def run(env, ns, table, jobs=("compact",)):
    return run_maintenance(env["srv"], env["acct"]["warehouse_id"], ns, table, jobs)


def rows_of(table, **scan):
    t = table.scan(**scan).to_arrow().sort_by("id")
    return t.to_pylist()


def data_files(table):
    return table.inspect.files().to_pylist()


def written_table(env, appends=6, per_append=40, properties=None):
    ns = "cmp_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns)
    t = env["cat"].create_table(f"{ns}.t", schema=SCHEMA, partition_spec=SPEC,
                                properties=properties or {})
    for k in range(appends):
        t.append(batch(k * per_append, per_append))
    return ns, env["cat"].load_table(f"{ns}.t")


def test_small_files_are_rewritten_per_partition_and_every_engine_reads_the_same(env):
    ns, t = written_table(env)
    before_rows = rows_of(t)
    before_files = data_files(t)
    before_snapshot = t.current_snapshot().snapshot_id
    partitions = {(f["partition"]["part"], f["partition"]["ok"]) for f in before_files}
    assert len(before_files) >= 5 * len(partitions) / 2, "the test needs several files a partition"

    [r] = run(env, ns, "t")
    assert r["ran"], r["skipped_because"]
    t = env["cat"].load_table(f"{ns}.t")
    after_files = data_files(t)
    # One file per partition that had at least five (the default) small files.
    crowded = {p for p in partitions
               if sum((f["partition"]["part"], f["partition"]["ok"]) == p
                      for f in before_files) >= 5}
    assert r["bins"] == len(crowded) and r["files_written"] == len(crowded), r
    assert r["data_files_before"] == len(before_files), r
    assert r["data_files_after"] == len(after_files) < len(before_files), r
    assert r["snapshot_id"] == t.current_snapshot().snapshot_id
    assert t.current_snapshot().summary.operation.value == "replace"
    assert t.current_snapshot().parent_snapshot_id == before_snapshot
    assert sum(f["record_count"] for f in after_files) == len(before_rows)
    # The manifests that held the small files are merged, not rewritten one by one: one of
    # the new files and one of the rest (the replaced files deleted, the others existing).
    assert len(before_files) >= 12 and len(t.current_snapshot().manifests(t.io)) == 2

    # The same rows, now and at the snapshot before, in PyIceberg.
    assert rows_of(t) == before_rows
    assert rows_of(t, snapshot_id=before_snapshot) == before_rows
    # Filters that prune by the new files' bounds (a wrong bound would drop rows).
    for expr, keep in [
        (And(GreaterThanOrEqual("id", 50), LessThan("id", 90)), lambda r: 50 <= r["id"] < 90),
        (EqualTo("name", "name-123"), lambda r: r["name"] == "name-123"),
        (GreaterThanOrEqual("score", 50.0), lambda r: r["score"] is not None and r["score"] >= 50),
        (EqualTo("part", "a"), lambda r: r["part"] == "a"),
    ]:
        assert rows_of(t, row_filter=expr) == [r for r in before_rows if keep(r)], expr
    # DuckDB: counts, checksums and the same filters.
    duck = env["duck"]
    q = f"SELECT count(*), sum(id), sum(score), count(name), min(day), max(\"at\"), sum(price) FROM lake.{ns}.t"
    expected = (len(before_rows), sum(r["id"] for r in before_rows),
                sum(r["score"] for r in before_rows if r["score"] is not None),
                sum(r["name"] is not None for r in before_rows),
                min(r["day"] for r in before_rows), max(r["at"] for r in before_rows),
                sum(r["price"] for r in before_rows))
    assert duck.execute(q).fetchone() == expected
    assert duck.execute(f"SELECT count(*) FROM lake.{ns}.t WHERE id BETWEEN 50 AND 89").fetchone() == (40,)
    assert duck.execute(f"SELECT id FROM lake.{ns}.t WHERE name = 'name-123'").fetchall() == [(123,)]

    # Nothing left to do: every partition now has one file.
    [again] = run(env, ns, "t")
    assert not again["ran"] and "files smaller" in again["skipped_because"], again

    # Rewriting the manifests leaves one, without the compaction's DELETED entries.
    [m] = run(env, ns, "t", jobs=("rewrite-manifests",))
    assert m["ran"] and m["manifests_before"] == 2 and m["manifests_after"] == 1, m
    assert m["entries_dropped"] == r["files_rewritten"] and m["entries_kept"] == len(after_files), m
    t = env["cat"].load_table(f"{ns}.t")
    [manifest] = t.current_snapshot().manifests(t.io)
    assert manifest.existing_files_count == len(after_files) and manifest.deleted_files_count == 0
    assert t.current_snapshot().summary["total-records"] == str(len(before_rows))
    assert rows_of(t) == before_rows
    assert rows_of(t, row_filter=EqualTo("part", "a")) == [x for x in before_rows if x["part"] == "a"]
    assert duck.execute(q).fetchone() == expected
    [m] = run(env, ns, "t", jobs=("rewrite-manifests",))
    assert not m["ran"] and "already has one manifest" in m["skipped_because"], m


def describe(env, ns, table):
    r = requests.get(env["srv"].api + "/v1/table",
                     headers={"Authorization": "Bearer " + env["acct"]["api_key"]},
                     params={"warehouse": env["acct"]["warehouse_id"], "namespace": ns,
                             "name": table})
    assert r.status_code == 200, r.text
    return r.json()


def test_get_table_shows_each_jobs_last_run(env):
    ns, t = written_table(env)
    m = describe(env, ns, "t")["maintenance"]
    assert m["enabled"] and m["next_due_at"]
    assert all(m["jobs"][j] == {"last_run_at": None, "result": None}
               for j in ("compact", "expire", "orphans")), m
    [compact, expire] = run(env, ns, "t", jobs=("compact", "expire"))
    m = describe(env, ns, "t")["maintenance"]
    shown = m["jobs"]["compact"]
    assert shown["last_run_at"] and shown["result"]["ran"], m
    for k in ("data_files_before", "data_files_after", "data_bytes_before", "data_bytes_after",
              "snapshot_id"):
        assert shown["result"][k] == compact[k], k
    assert m["jobs"]["expire"]["result"]["skipped_because"] == expire["skipped_because"]
    assert m["jobs"]["orphans"]["last_run_at"] is None
    assert m["next_due_at"] > shown["last_run_at"]
    # A new table of the same name starts with no history.
    env["cat"].drop_table(f"{ns}.t")
    env["cat"].create_table(f"{ns}.t", schema=SCHEMA)
    m = describe(env, ns, "t")["maintenance"]
    assert m["jobs"]["compact"]["result"] is None, m


def test_expiry_after_compaction_deletes_the_small_files_and_the_table_still_reads(env):
    ns, t = written_table(env, properties={"tablemere.maintenance.max-snapshots": "1"})
    before_rows = rows_of(t)
    small = {f["file_path"] for f in data_files(t)}
    compact, expire = run(env, ns, "t", jobs=("compact", "expire"))
    assert compact["ran"] and expire["ran"], (compact, expire)
    t = env["cat"].load_table(f"{ns}.t")
    assert len(t.metadata.snapshots) == 1
    kept = {f["file_path"] for f in data_files(t)}
    gone = small - kept
    assert len(gone) == compact["files_rewritten"] and expire["files_deleted"] >= len(gone)
    for path in gone:
        assert not t.io.new_input(path).exists(), path
    assert rows_of(t) == before_rows
    assert env["duck"].execute(f"SELECT count(*) FROM lake.{ns}.t").fetchone() == (len(before_rows),)


def test_tables_that_cannot_be_compacted_say_why(env):
    # Too few small files.
    ns, t = written_table(env, appends=2)
    [r] = run(env, ns, "t")
    assert not r["ran"] and "files smaller" in r["skipped_because"], r
    assert data_files(env["cat"].load_table(f"{ns}.t")) == data_files(t)
    # A table without a snapshot.
    ns2 = "cmp_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns2)
    env["cat"].create_table(f"{ns2}.empty", schema=SCHEMA)
    [r] = run(env, ns2, "empty")
    assert not r["ran"] and r["skipped_because"] == "the table has no snapshot", r


def test_a_table_partitioned_by_a_decimal_is_compacted_with_summaries_readers_prune_by(env):
    """Partition summaries of decimals are the unscaled value's shortest two's-complement
    big-endian bytes (the spec's single-value serialization): the new manifest's summaries
    decode in PyIceberg to the partitions' smallest and largest price, and a filter on the
    price plans only its partition's compacted file."""
    from pyiceberg.conversions import from_bytes

    ns = "cmp_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns)
    t = env["cat"].create_table(
        f"{ns}.t", schema=SCHEMA,
        partition_spec=PartitionSpec(PartitionField(8, 1000, IdentityTransform(), "price")))
    prices = [decimal.Decimal("-3.25"), decimal.Decimal("1.50")]
    for k in range(6):
        rows = batch(k * 10, 10).to_pylist()
        for i, r in enumerate(rows):
            r["price"] = prices[i % 2]
        t.append(pa.Table.from_pylist(rows, schema=ARROW))
    t = env["cat"].load_table(f"{ns}.t")
    before = rows_of(t)
    [r] = run(env, ns, "t")
    assert r["ran"], r["skipped_because"]
    assert r["files_rewritten"] == 12 and r["files_written"] == 2, r
    t = env["cat"].load_table(f"{ns}.t")
    assert rows_of(t) == before
    added = [m for m in t.current_snapshot().manifests(t.io) if m.added_files_count]
    assert len(added) == 1
    [summary] = added[0].partitions
    assert not summary.contains_null
    price = t.schema().find_field("price").field_type
    assert from_bytes(price, summary.lower_bound) == prices[0]
    assert from_bytes(price, summary.upper_bound) == prices[1]
    planned = list(t.scan(row_filter=EqualTo("price", "1.50")).plan_files())
    assert len(planned) == 1 and "compacted-" in planned[0].file.file_path
    assert rows_of(t, row_filter=EqualTo("price", "1.50")) == [
        x for x in before if x["price"] == prices[1]]
    assert env["duck"].execute(f"SELECT count(*), sum(price) FROM lake.{ns}.t").fetchone() == (
        len(before), sum(x["price"] for x in before))


def test_a_format_v1_table_is_compacted_and_its_manifests_rewritten_in_v1(env):
    """Format v1 has no sequence numbers and its own manifest fields (block_size_in_bytes
    required, the list's counts named added_data_files_count…): the new snapshot, list and
    manifests are v1 ones, and every engine reads the table as before."""
    ns, t = written_table(env, properties={"format-version": "1"})
    assert t.metadata.format_version == 1
    before_rows = rows_of(t)
    before_snapshot = t.current_snapshot().snapshot_id
    compact, manifests = run(env, ns, "t", jobs=("compact", "rewrite-manifests"))
    assert compact["ran"] and compact["files_rewritten"] > compact["files_written"] > 0, compact
    assert manifests["ran"], manifests
    t = env["cat"].load_table(f"{ns}.t")
    assert t.metadata.format_version == 1
    snap = t.current_snapshot()
    assert snap.sequence_number in (None, 0) and snap.summary["tablemere.maintenance"] == "rewrite-manifests"
    for m in snap.manifests(t.io):
        assert m.sequence_number in (None, 0)
        for e in m.fetch_manifest_entry(t.io, discard_deleted=False):
            assert e.sequence_number in (None, 0)
    assert rows_of(t) == before_rows
    assert rows_of(t, snapshot_id=before_snapshot) == before_rows
    assert rows_of(t, row_filter=EqualTo("part", "a")) == [x for x in before_rows if x["part"] == "a"]
    # Planned by the server, now and before: the same rows, from the same files.
    served = pyiceberg_server_planning(env["cat"]).load_table(f"{ns}.t")
    for scan in ({}, {"snapshot_id": before_snapshot}, {"row_filter": EqualTo("part", "a")}):
        assert rows_of(served, **scan) == rows_of(t, **scan), scan
        assert sorted(f.file.file_path for f in served.scan(**scan).plan_files()) == sorted(
            f.file.file_path for f in t.scan(**scan).plan_files()), scan
    assert env["duck"].execute(f"SELECT count(*), sum(id) FROM lake.{ns}.t").fetchone() == (
        len(before_rows), sum(x["id"] for x in before_rows))
    env.setdefault("v1_tables", []).append((ns, before_snapshot, len(before_rows)))


@pytest.mark.spark
def test_spark_reads_the_compacted_v1_table(env):
    """Iceberg Java, the strictest reader of v1 manifests, reads it now and as before."""
    if not env.get("v1_tables"):
        test_a_format_v1_table_is_compacted_and_its_manifests_rewritten_in_v1(env)
    ns, before_snapshot, count = env["v1_tables"][-1]
    spark = spark_from_recipe(with_server_planning_catalog(
        env["srv"].connection(env["acct"]["api_key"], "spark")))
    try:
        table = f"lake.{ns}.t"
        now = spark.sql(f"SELECT * FROM {table}")
        then = spark.sql(f"SELECT * FROM {table} VERSION AS OF {before_snapshot}")
        assert now.count() == then.count() == count
        assert now.exceptAll(then).count() == 0 and then.exceptAll(now).count() == 0
        # Planned by the server: the same rows, now and before.
        for version in ("", f"VERSION AS OF {before_snapshot}"):
            for where in ("true", "part = 'a'", "id < 30"):
                spark_reads_alike(spark, f"{table} {version}", f"srv.{ns}.t {version}", where)
        assert spark.sql(f"SELECT count(*) FROM {table}.files").collect()[0][0] < 12
    finally:
        spark.stop()


def test_files_written_before_and_after_schema_changes_are_compacted_into_the_current_schema(env):
    """Files from before a column was added, a column was promoted (int to long, float to
    double) and one was renamed: the compacted file has the current schema, the old files'
    rows read with nulls for the added column and their values widened."""
    from pyiceberg.types import FloatType, IntegerType
    ns = "cmp_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "small", IntegerType(), required=False),
                    NestedField(3, "ratio", FloatType(), required=False),
                    NestedField(4, "label", StringType(), required=False))
    t = env["cat"].create_table(f"{ns}.t", schema=schema)
    for k in range(3):
        t.append(pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64()),
                           "small": pa.array(range(10), pa.int32()),
                           "ratio": pa.array([0.5] * 10, pa.float32()),
                           "label": [f"l{i}" for i in range(10)]},
                          schema=schema.as_arrow()))
    with t.update_schema() as u:
        u.add_column("extra", StringType())
        u.update_column("small", LongType())
        u.update_column("ratio", DoubleType())
        u.rename_column("label", "tag")
    t = env["cat"].load_table(f"{ns}.t")
    for k in range(3, 6):
        t.append(pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64()),
                           "small": pa.array([2**40] * 10, pa.int64()),
                           "ratio": pa.array([0.25] * 10, pa.float64()),
                           "tag": [f"t{i}" for i in range(10)],
                           "extra": ["x"] * 10}, schema=t.schema().as_arrow()))
    t = env["cat"].load_table(f"{ns}.t")
    before_rows = rows_of(t)
    assert before_rows[0] == {"id": 0, "small": 0, "ratio": 0.5, "tag": "l0", "extra": None}
    [r] = run(env, ns, "t")
    assert r["ran"] and r["files_rewritten"] == 6 and r["files_written"] == 1, r
    t = env["cat"].load_table(f"{ns}.t")
    assert len(data_files(t)) == 1
    assert rows_of(t) == before_rows
    duck = env["duck"]
    assert duck.execute(f"SELECT count(*), sum(small), count(extra), min(tag), sum(ratio) "
                        f"FROM lake.{ns}.t").fetchone() == (
        60, 3 * sum(range(10)) + 30 * 2**40, 30, "l0", 30 * 0.5 + 30 * 0.25)
    assert duck.execute(f"SELECT id FROM lake.{ns}.t WHERE small > 100 ORDER BY id LIMIT 1"
                        ).fetchone() == (30,)


def test_a_column_dropped_and_re_added_by_name_is_not_mistaken_for_the_old_one(env):
    """Columns are matched by field id: a new column named like a dropped one stays null
    in the files written before it."""
    ns = "cmp_" + uuid.uuid4().hex[:6]
    env["cat"].create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "note", StringType(), required=False))
    t = env["cat"].create_table(f"{ns}.t", schema=schema)
    for k in range(3):
        t.append(pa.table({"id": pa.array([k], pa.int64()), "note": ["old"]},
                          schema=schema.as_arrow()))
    with t.update_schema() as u:
        u.delete_column("note")
    with env["cat"].load_table(f"{ns}.t").update_schema() as u:
        u.add_column("note", StringType())
    t = env["cat"].load_table(f"{ns}.t")
    for k in range(3, 6):
        t.append(pa.table({"id": pa.array([k], pa.int64()), "note": ["new"]},
                          schema=t.schema().as_arrow()))
    t = env["cat"].load_table(f"{ns}.t")
    before_rows = rows_of(t)
    assert [x["note"] for x in before_rows] == [None] * 3 + ["new"] * 3
    [r] = run(env, ns, "t")
    assert r["ran"], r
    assert rows_of(env["cat"].load_table(f"{ns}.t")) == before_rows
    assert env["duck"].execute(f"SELECT count(note) FROM lake.{ns}.t").fetchone() == (3,)


@pytest.mark.spark
def test_spark_reads_the_compacted_table_like_the_original(env):
    ns, t = written_table(env)
    before = t.current_snapshot().snapshot_id
    [r] = run(env, ns, "t")
    assert r["ran"], r
    spark = spark_from_recipe(env["srv"].connection(env["acct"]["api_key"], "spark"))
    try:
        table = f"lake.{ns}.t"
        now = spark.sql(f"SELECT * FROM {table}")
        then = spark.sql(f"SELECT * FROM {table} VERSION AS OF {before}")
        assert now.count() == then.count() == len(rows_of(t))
        assert now.exceptAll(then).count() == 0
        assert then.exceptAll(now).count() == 0
        assert spark.sql(f"SELECT count(*) FROM {table} WHERE id >= 50 AND id < 90").collect()[0][0] == 40
        ops = [row.operation for row in spark.sql(f"SELECT operation FROM {table}.snapshots").collect()]
        assert ops[-1] == "replace"
    finally:
        spark.stop()


def spark_table(spark, partitioned=True, properties=None):
    """A new format v2 table lake.<ns>.t (id int, part string, v string) created by Spark,
    partitioned by part or not, with `properties`."""
    ns = "cmp_" + uuid.uuid4().hex[:6]
    table = f"lake.{ns}.t"
    props = {"format-version": "2", **(properties or {})}
    spark.sql(f"CREATE NAMESPACE lake.{ns}")
    spark.sql(f"CREATE TABLE {table} (id int, part string, v string) USING iceberg "
              + ("PARTITIONED BY (part) " if partitioned else "")
              + "TBLPROPERTIES (" + ", ".join(f"'{k}'='{v}'" for k, v in props.items()) + ")")
    return ns, table


def spark_equality_delete(spark, table, columns, rows, partition=None):
    """Commits an equality delete file on `columns` holding `rows` (tuples, None for null)
    to `table`, written the way Flink and Iceberg's own writers do it: through Iceberg
    Java's GenericAppenderFactory and a RowDelta, over py4j. Spark SQL never writes them."""
    jvm = spark._jvm
    gateway = spark.sparkContext._gateway
    t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table)
    schema = t.schema()
    ids = gateway.new_array(jvm.int, len(columns))
    for i, c in enumerate(columns):
        ids[i] = schema.findField(c).fieldId()
    row_schema = schema.select(columns)
    factory = jvm.org.apache.iceberg.data.GenericAppenderFactory(schema, t.spec(), ids, row_schema, None)
    key = None
    if partition is not None:
        key = jvm.org.apache.iceberg.data.GenericRecord.create(t.spec().partitionType())
        for i, v in enumerate(partition):
            key.set(i, v)
    out = t.io().newOutputFile(t.locationProvider().newDataLocation(
        t.spec(), key, f"eq-delete-{uuid.uuid4().hex}.parquet") if key is not None
        else t.locationProvider().newDataLocation(f"eq-delete-{uuid.uuid4().hex}.parquet"))
    writer = factory.newEqDeleteWriter(
        jvm.org.apache.iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(out),
        jvm.org.apache.iceberg.FileFormat.PARQUET, key)
    for values in rows:
        record = jvm.org.apache.iceberg.data.GenericRecord.create(row_schema)
        for c, v in zip(columns, values):
            record.setField(c, v)
        writer.write(record)
    writer.close()
    t.newRowDelta().addDeletes(writer.toDeleteFile()).commit()


@pytest.mark.spark
def test_spark_equality_deletes_are_applied_and_removed_so_pyiceberg_reads_the_table(env):
    spark = spark_from_recipe(with_server_planning_catalog(
        env["srv"].connection(env["acct"]["api_key"], "spark")))
    try:
        ns, table = spark_table(spark)
        for k in range(3):
            spark.sql(f"INSERT INTO {table} VALUES " + ",".join(
                f"({i}, '{'a' if i % 2 else 'b'}', 'v{i}')" for i in range(k * 10, k * 10 + 10)))
        spark.sql(f"INSERT INTO {table} VALUES (100, 'b', NULL), (102, 'b', 'x')")
        # Partition a: by id. Partition b: by (id, v), where a null matches only a null.
        spark_equality_delete(spark, table, ["id"], [(1,), (3,), (5,)], partition=("a",))
        spark_equality_delete(spark, table, ["id", "v"], [(100, None), (102, None), (2, "other")],
                              partition=("b",))
        # Written after the deletes: an equality delete never applies to newer data.
        spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 'again')")
        q = f"SELECT id, part, v FROM {table} ORDER BY id, v"
        expected = [tuple(r) for r in spark.sql(q).collect()]
        deleted = {1, 3, 5, 100}
        assert [r for r in expected if r[0] in deleted] == [(1, "a", "again")]
        assert len(expected) == 30 + 2 + 1 - 4
        # Planned by the server, the equality deletes go with the tasks they apply to
        # (global ones too): Iceberg Java reads the same rows.
        wheres = ("true", "part = 'a'", "part = 'b' AND id > 50", "v IS NULL")
        for where in wheres:
            spark_reads_alike(spark, table, f"srv.{ns}.t", where)
        t = env["cat"].load_table(f"{ns}.t")
        before_snapshot = t.current_snapshot().snapshot_id
        with pytest.raises(ValueError, match="equality deletes"):
            t.scan().to_arrow()

        [r] = run(env, ns, "t")
        assert r["ran"], r["skipped_because"]
        assert r["bins_failed"] == 0 and r["rows_deleted"] == 4, (r["skipped_because"], r)
        assert r["delete_files_removed"] == 2, r
        t = env["cat"].load_table(f"{ns}.t")
        assert [f for f in t.inspect.files().to_pylist() if f["content"] != 0] == []
        summary = t.current_snapshot().summary
        assert summary["removed-equality-delete-files"] == "2", summary
        assert summary["removed-equality-deletes"] == "6", summary
        assert summary["total-equality-deletes"] == "0", summary
        assert summary["total-records"] == str(len(expected)), summary
        # PyIceberg now reads it, and all three engines agree with Spark before compaction.
        rows = sorted((x["id"], x["part"], x["v"]) for x in t.scan().to_arrow().to_pylist())
        assert rows == sorted(expected, key=lambda x: (x[0], x[2] or ""))
        duck = duckdb_from_recipe(env["srv"].connection(env["acct"]["api_key"], "duckdb"))
        assert duck.execute(f"SELECT count(*), sum(id) FROM lake.{ns}.t").fetchone() == (
            len(expected), sum(x[0] for x in expected))
        now = spark.sql(f"SELECT * FROM {table}")
        then = spark.sql(f"SELECT * FROM {table} VERSION AS OF {before_snapshot}")
        assert now.count() == len(expected)
        assert now.exceptAll(then).count() == 0 and then.exceptAll(now).count() == 0
        spark.sql(f"REFRESH TABLE srv.{ns}.t")
        for where in wheres:
            spark_reads_alike(spark, table, f"srv.{ns}.t", where)
            spark_reads_alike(spark, f"{table} VERSION AS OF {before_snapshot}",
                              f"srv.{ns}.t VERSION AS OF {before_snapshot}", where)
    finally:
        spark.stop()


def test_duckdb_position_deletes_are_applied_and_their_files_removed(env):
    duck = env["duck"]
    ns = "cmp_" + uuid.uuid4().hex[:6]
    duck.execute(f"CREATE SCHEMA lake.{ns}")
    duck.execute(f"CREATE TABLE lake.{ns}.t (id BIGINT, label VARCHAR)")
    for k in range(6):
        duck.execute(f"INSERT INTO lake.{ns}.t SELECT range + {k * 100}, 'l' || range FROM range(100)")
    duck.execute(f"DELETE FROM lake.{ns}.t WHERE id % 7 = 0")
    duck.execute(f"UPDATE lake.{ns}.t SET label = 'changed' WHERE id = 250")
    q = f"SELECT id, label FROM lake.{ns}.t ORDER BY id"
    expected = duck.execute(q).fetchall()
    t = env["cat"].load_table(f"{ns}.t")
    before_snapshot = t.current_snapshot().snapshot_id
    files = t.inspect.files().to_pylist()
    position_deletes = [f for f in files if f["content"] == 1]
    assert position_deletes, "DuckDB wrote no position deletes"

    [r] = run(env, ns, "t")
    assert r["ran"], r["skipped_because"]
    assert r["rows_deleted"] == sum(f["record_count"] for f in position_deletes), r
    t = env["cat"].load_table(f"{ns}.t")
    after = t.inspect.files().to_pylist()
    # Every delete file targeted a rewritten file, so none is left; no data file either
    # but the compacted one (and the UPDATE's new one if it was too big to matter: none).
    assert [f for f in after if f["content"] != 0] == [], after
    assert duckdb_from_recipe(env["srv"].connection(env["acct"]["api_key"], "duckdb")).execute(
        q).fetchall() == expected
    rows = sorted((r["id"], r["label"]) for r in t.scan().to_arrow().to_pylist())
    assert rows == expected
    old = sorted((r["id"], r["label"]) for r in t.scan(snapshot_id=before_snapshot).to_arrow().to_pylist())
    assert old == expected
    summary = t.current_snapshot().summary
    assert summary["total-delete-files"] == "0" and summary["total-records"] == str(len(expected))


def five_small_files(srv):
    """A new account on `srv` with a table k.t of five small files."""
    acct = srv.signup(engine="pyiceberg")
    cat = pyiceberg_from_recipe(acct["connection"])
    cat.create_namespace("k")
    t = cat.create_table("k.t", schema=SCHEMA)
    for k in range(5):
        t.append(batch(k * 10, 10))
    return acct, cat, cat.load_table("k.t")


def test_a_large_file_is_rewritten_alone_when_deletes_name_a_tenth_of_it_and_dangling_deletes_go(env):
    """Files too large to compact: one whose position deletes name 20% of its rows is
    rewritten alone (its delete file removed); one with 1% deleted is left as it is. Then
    its data file is removed by a copy-on-write delete, leaving its position delete file
    applying to nothing: the next run drops it without rewriting anything."""
    duck = env["duck"]
    ns = "cmp_" + uuid.uuid4().hex[:6]
    duck.execute(f"CREATE SCHEMA lake.{ns}")
    duck.execute(f"CREATE TABLE lake.{ns}.t (id BIGINT, label VARCHAR)")
    t = env["cat"].load_table(f"{ns}.t")
    with t.transaction() as tx:  # every file counts as large
        tx.set_properties({"tablemere.maintenance.target-file-size-bytes": "100"})
    for k in range(2):
        duck.execute(f"INSERT INTO lake.{ns}.t SELECT range + {k * 100}, 'l' || range FROM range(100)")
    duck.execute(f"DELETE FROM lake.{ns}.t WHERE id < 20")    # 20% of the first file
    duck.execute(f"DELETE FROM lake.{ns}.t WHERE id = 150")   # 1% of the second
    q = f"SELECT id FROM lake.{ns}.t ORDER BY id"
    expected = [r[0] for r in duck.execute(q).fetchall()]
    [r] = run(env, ns, "t")
    assert r["ran"] and r["files_rewritten"] == 1 and r["files_written"] == 1, r
    assert r["rows_deleted"] == 20 and r["delete_files_removed"] == 1, r
    t = env["cat"].load_table(f"{ns}.t")
    files = t.inspect.files().to_pylist()
    assert sorted(f["content"] for f in files) == [0, 0, 1], files
    assert sorted(t.scan().to_arrow()["id"].to_pylist()) == expected
    # The second file removed whole (copy-on-write): its delete file now applies to nothing.
    with t.transaction() as tx:
        tx.delete("id >= 100")
    t = env["cat"].load_table(f"{ns}.t")
    dangling = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
    assert len(dangling) == 1  # PyIceberg 0.12 leaves it; the run drops it, rewriting nothing
    [r] = run(env, ns, "t")
    assert r["ran"] and r["files_rewritten"] == 0 and r["delete_files_removed"] == 1, r
    t = env["cat"].load_table(f"{ns}.t")
    assert [f for f in t.inspect.files().to_pylist() if f["content"] != 0] == []
    assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [i for i in expected if i < 100]
    fresh = duckdb_from_recipe(env["srv"].connection(env["acct"]["api_key"], "duckdb"))
    assert [x[0] for x in fresh.execute(q).fetchall()] == [i for i in expected if i < 100]


def engines_agree(env, ns, spark, before_snapshot):
    """Spark now and at `before_snapshot` hold the same rows both ways (EXCEPT ALL), and
    PyIceberg and DuckDB read what Spark reads; answers the rows."""
    table = f"lake.{ns}.t"
    spark.sql(f"REFRESH TABLE {table}")
    now = spark.sql(f"SELECT * FROM {table}")
    then = spark.sql(f"SELECT * FROM {table} VERSION AS OF {before_snapshot}")
    assert now.exceptAll(then).count() == 0 and then.exceptAll(now).count() == 0
    expected = sorted(tuple(r) for r in now.collect())
    t = env["cat"].load_table(f"{ns}.t")
    assert sorted(tuple(r.values()) for r in t.scan().to_arrow().to_pylist()) == expected
    duck = duckdb_from_recipe(env["srv"].connection(env["acct"]["api_key"], "duckdb"))
    assert sorted(duck.execute(f"SELECT * FROM {table}").fetchall()) == expected
    return expected


@pytest.mark.spark
def test_spark_position_delete_files_are_merged_and_rows_for_rewritten_files_dropped(env):
    """Merge-on-read DELETEs leave a position delete file each per partition (Spark keeps one
    per data file itself at its default, file granularity; not at partition granularity,
    nor do other writers). (1) Data files
    too large to compact, four DELETEs naming a few rows: nothing to do at the default of
    five delete files; at three, each partition's four become one, and nothing else is
    rewritten. (2) One partition-scoped delete file naming rows of a large file and of five
    small ones: compacting the small files applies their rows, and the delete file is
    rewritten with only the large file's rows."""
    spark = spark_from_recipe(env["srv"].connection(env["acct"]["api_key"], "spark"))
    try:
        ns, table = spark_table(spark, properties={
            "write.delete.mode": "merge-on-read", "write.delete.granularity": "partition",
            "tablemere.maintenance.target-file-size-bytes": "100"})
        spark.sql(f"INSERT INTO {table} SELECT id, IF(id % 2 = 0, 'a', 'b'), CONCAT('v', id) "
                  "FROM range(400)")
        for k in range(4):  # 2% of each partition's one file: not worth rewriting it
            spark.sql(f"DELETE FROM {table} WHERE id IN ({k * 10}, {k * 10 + 1})")
        t = env["cat"].load_table(f"{ns}.t")
        before = t.current_snapshot().snapshot_id
        deletes = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
        assert len(deletes) == 8, deletes
        [r] = run(env, ns, "t")
        assert not r["ran"] and "merge" in r["skipped_because"], r
        with env["cat"].load_table(f"{ns}.t").transaction() as tx:
            tx.set_properties({"tablemere.maintenance.compact.min-delete-files": "3"})
        t = env["cat"].load_table(f"{ns}.t")
        before = t.current_snapshot().snapshot_id
        [r] = run(env, ns, "t")
        assert r["ran"] and r["files_rewritten"] == 0 and r["bins_failed"] == 0, (r["skipped_because"], r)
        assert r["delete_files_merged"] == 8 and r["delete_files_written"] == 2, r
        assert r["position_deletes_dropped"] == 0, r
        t = env["cat"].load_table(f"{ns}.t")
        merged = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
        assert len(merged) == 2 and {f["file_path"] for f in merged}.isdisjoint(
            {f["file_path"] for f in deletes})
        assert sorted(f["record_count"] for f in merged) == [4, 4]
        summary = t.current_snapshot().summary
        assert summary["total-position-deletes"] == "8" and summary["total-delete-files"] == "2"
        assert summary["removed-position-delete-files"] == "8", summary
        rows = engines_agree(env, ns, spark, before)
        assert len(rows) == 392 and not {r[0] for r in rows} & {0, 1, 10, 11, 20, 21, 30, 31}

        # (2) Unpartitioned, deletes scoped to the partition (one file names several).
        ns, table = spark_table(spark, partitioned=False, properties={
            "write.delete.mode": "merge-on-read", "write.delete.granularity": "partition",
            "tablemere.maintenance.target-file-size-bytes": "20000"})
        spark.sql(f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ id, 'x', "
                  "CONCAT('value-', sha2(CAST(id AS string), 256)) FROM range(20000)")
        for k in range(5):
            spark.sql(f"INSERT INTO {table} VALUES " + ",".join(
                f"({i}, 'y', 'small')" for i in range(100000 + k * 10, 100000 + k * 10 + 10)))
        spark.sql(f"DELETE FROM {table} WHERE id IN (5, 6, 7, 100000, 100011, 100022)")
        t = env["cat"].load_table(f"{ns}.t")
        before = t.current_snapshot().snapshot_id
        files = t.inspect.files().to_pylist()
        [large] = [f for f in files if f["content"] == 0 and f["file_size_in_bytes"] >= 15000]
        [delete] = [f for f in files if f["content"] == 1]
        assert delete["record_count"] == 6, delete
        small = [f for f in files if f["content"] == 0 and f is not large]
        [r] = run(env, ns, "t")
        assert r["ran"] and r["files_rewritten"] == len(small) and r["rows_deleted"] == 3, r
        assert r["delete_files_merged"] == 1 and r["delete_files_written"] == 1, r
        assert r["position_deletes_dropped"] == 3, r
        t = env["cat"].load_table(f"{ns}.t")
        [kept] = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
        assert kept["record_count"] == 3 and kept["file_path"] != delete["file_path"]
        assert t.current_snapshot().summary["total-position-deletes"] == "3"
        rows = engines_agree(env, ns, spark, before)
        assert len(rows) == 20000 + 50 - 6
    finally:
        spark.stop()


@pytest.mark.spark
def test_a_table_upgraded_to_v3_is_compacted_without_new_position_delete_files(env):
    """A format v2 table with Parquet position deletes, upgraded to v3. (1) Its files are
    too large to compact and the deletes name too few rows to rewrite them: in v2 a
    partition's four delete files would be merged (three suffice here), but format v3
    takes no new position delete files, so nothing is done. (2) A DELETE after the upgrade
    (a deletion vector per file now, Spark folding the file's Parquet deletes into it)
    names a sixth of the rows: those files are rewritten, their deletion vectors go, no
    delete file is added, every row keeps its
    _row_id and _last_updated_sequence_number, and the table reads the same."""
    spark = spark_from_recipe(env["srv"].connection(env["acct"]["api_key"], "spark"))
    try:
        ns, table = spark_table(spark, properties={
            "write.delete.mode": "merge-on-read", "write.delete.granularity": "partition",
            "tablemere.maintenance.compact.min-delete-files": "3",
            "tablemere.maintenance.target-file-size-bytes": "100"})
        spark.sql(f"INSERT INTO {table} SELECT id, IF(id % 2 = 0, 'a', 'b'), CONCAT('v', id) "
                  "FROM range(400)")
        for k in range(4):  # 2% of each file: not worth rewriting it
            spark.sql(f"DELETE FROM {table} WHERE id IN ({k * 10}, {k * 10 + 1})")
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('format-version'='3')")
        spark.sql(f"INSERT INTO {table} VALUES (1000, 'a', 'new'), (1001, 'b', 'new')")
        deletes_sql = f"SELECT file_path, file_format FROM {table}.delete_files"
        before_deletes = {r[0] for r in spark.sql(deletes_sql).collect()}
        assert len(before_deletes) == 8
        [r] = run(env, ns, "t")
        assert r["delete_files_merged"] == 0 and r["delete_files_written"] == 0, r
        spark.sql(f"REFRESH TABLE {table}")
        assert {r[0] for r in spark.sql(deletes_sql).collect()} == before_deletes

        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES "
                  "('tablemere.maintenance.target-file-size-bytes'='100000000')")
        spark.sql(f"DELETE FROM {table} WHERE id >= 100 AND id < 170")
        # Spark folds a file's Parquet deletes into its new deletion vector.
        assert {r[1] for r in spark.sql(deletes_sql).collect()} == {"PUFFIN"}
        before_deletes = {r[0] for r in spark.sql(deletes_sql).collect()}
        lineage_sql = f"SELECT id, part, v, _row_id, _last_updated_sequence_number FROM {table}"
        lineage = sorted(spark.sql(lineage_sql).collect())
        assert len(lineage) == 400 - 8 + 2 - 70 and all(x[3] is not None for x in lineage)
        [r] = run(env, ns, "t")
        assert r["ran"] and r["bins_failed"] == 0, (r["skipped_because"], r)
        assert r["delete_files_merged"] == 0 and r["delete_files_written"] == 0, r
        assert r["files_rewritten"] > 0 and r["delete_files_removed"] > 0, r
        spark.sql(f"REFRESH TABLE {table}")
        after_deletes = {r[0] for r in spark.sql(deletes_sql).collect()}
        assert after_deletes < before_deletes  # fewer, and none new
        assert sorted(spark.sql(lineage_sql).collect()) == lineage
        t = env["cat"].load_table(f"{ns}.t")
        assert t.metadata.format_version == 3
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == sorted(x[0] for x in lineage)
    finally:
        spark.stop()


@pytest.mark.spark
def test_duckdb_deletes_across_a_spec_change_are_merged_per_partition_and_misfiled_ones_kept(env):
    """A table written before and after a partition spec change; DuckDB's DELETEs name rows
    of both. It writes the deletes of the old, unpartitioned file with the new spec and a
    null partition: by the spec those apply to nothing, and Spark and PyIceberg read the
    rows, while DuckDB applies them. Compaction changes nobody's view: it merges each
    partition's deletes of the new spec, and leaves the misfiled ones and the file they
    name as they are (it used to drop them as applying to nothing, bringing the rows back
    for DuckDB)."""
    cat = env["cat"]
    ns = "sc_" + uuid.uuid4().hex[:6]
    cat.create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "part", StringType(), required=False))
    t = cat.create_table(f"{ns}.t", schema=schema, properties={
        "tablemere.maintenance.target-file-size-bytes": "100",
        "tablemere.maintenance.compact.min-delete-files": "2"})

    def part_rows(ids):
        return pa.table({"id": pa.array(ids, pa.int64()),
                         "part": ["a" if i % 2 else "b" for i in ids]})

    t.append(part_rows(list(range(0, 100))))
    with t.update_spec() as u:
        u.add_field("part", IdentityTransform(), "part")
    cat.load_table(f"{ns}.t").append(part_rows(list(range(100, 200))))
    for gone in [(1, 101, 102), (3, 103, 104), (5, 105, 106)]:
        env["duck"].execute(f"DELETE FROM lake.{ns}.t WHERE id IN {gone}")
    by_spec = [i for i in range(200) if i not in (101, 102, 103, 104, 105, 106)]
    by_duckdb = [i for i in by_spec if i not in (1, 3, 5)]

    def duckdb_ids():
        fresh = duckdb_from_recipe(env["srv"].connection(env["acct"]["api_key"], "duckdb"))
        return sorted(r[0] for r in fresh.execute(f"SELECT id FROM lake.{ns}.t").fetchall())

    def spark_ids():
        spark.sql(f"REFRESH TABLE lake.{ns}.t")
        return sorted(r[0] for r in spark.sql(f"SELECT id FROM lake.{ns}.t").collect())

    t = cat.load_table(f"{ns}.t")
    before = t.current_snapshot().snapshot_id
    assert sum(1 for f in t.inspect.files().to_pylist() if f["content"] == 1) == 9
    assert sorted(x["id"] for x in rows_of(t)) == by_spec
    assert duckdb_ids() == by_duckdb
    spark = spark_from_recipe(env["srv"].connection(env["acct"]["api_key"], "spark"))
    try:
        assert spark_ids() == by_spec
        [r] = run(env, ns, "t")
        assert r["ran"] and r["files_rewritten"] == 0 and r["bins_failed"] == 0, r
        assert r["delete_files_misfiled"] == 3 and r["delete_files_removed"] == 0, r
        assert r["delete_files_merged"] == 6 and r["delete_files_written"] == 2, r
        t = cat.load_table(f"{ns}.t")
        deletes = [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
        assert sorted(f["record_count"] for f in deletes) == [1, 1, 1, 3, 3]
        summary = t.current_snapshot().summary
        assert summary["changed-partition-count"] == "2", summary  # a and b of the new spec
        assert summary["total-position-deletes"] == "9" and summary["total-delete-files"] == "5"
        # Nobody's view changed: Spark's both ways against the snapshot before.
        now = spark.sql(f"SELECT * FROM lake.{ns}.t")
        then = spark.sql(f"SELECT * FROM lake.{ns}.t VERSION AS OF {before}")
        assert now.exceptAll(then).count() == 0 and then.exceptAll(now).count() == 0
        assert spark_ids() == by_spec
        assert sorted(x["id"] for x in rows_of(t)) == by_spec
        assert duckdb_ids() == by_duckdb
        # Nothing else to do: the next run says why, naming the misfiled files.
        [again] = run(env, ns, "t")
        assert not again["ran"] and "another partition spec" in again["skipped_because"], again
    finally:
        spark.stop()


@pytest.mark.parametrize("worker", [
    "#!/bin/sh\nkill -9 $$\n",                                   # killed mid-rewrite
    "#!/bin/sh\necho 'out of memory' >&2\nexit 3\n",             # fails
    "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --result ] && echo '{\"record_count\": 1}' > \"$2\"; shift; done\n",  # lies
])
def test_a_worker_that_dies_or_lies_changes_nothing_and_leaves_no_file(tmp_path, worker):
    from conftest import Server
    script = tmp_path / "worker.sh"
    script.write_text(worker)
    script.chmod(0o755)
    srv = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": "test-bootstrap-secret"},
                 args=("--maintenance-worker", str(script)))
    try:
        acct, cat, t = five_small_files(srv)
        s3 = warehouse_s3(srv, acct)
        bucket, prefix = t.metadata.location.removeprefix("s3://").split("/", 1)

        def objects():
            return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")
                          .get("Contents", []))

        before = objects()
        [r] = run_maintenance(srv, acct["warehouse_id"], "k", "t", ["compact"])
        assert not r["ran"] and r["bins_failed"] == 1, r["skipped_because"]
        assert "every bin failed" in r["skipped_because"], r
        after = cat.load_table("k.t")
        assert after.current_snapshot().snapshot_id == t.current_snapshot().snapshot_id
        assert objects() == before  # nothing uploaded is left behind
        assert sorted(after.scan().to_arrow()["id"].to_pylist()) == list(range(50))
    finally:
        srv.cleanup()


def compact_killed_and_restarted(srv, acct):
    """Runs a compaction of k.t on `srv`, started with TABLEMERE_TEST_CRASH_AT, which kills
    the server; restarts it without the crash point and answers a new PyIceberg catalog."""
    with pytest.raises(requests.exceptions.ConnectionError):
        run_maintenance(srv, acct["warehouse_id"], "k", "t", ["compact"])
    assert srv.proc.wait(timeout=30) == -9
    del srv.env["TABLEMERE_TEST_CRASH_AT"]
    srv.restart()
    return pyiceberg_from_recipe(srv.connection(acct["api_key"], "pyiceberg"))


@pytest.mark.parametrize("point", ["compact.worker-done", "compact.uploaded",
                                   "compact.manifests-written", "compact.committed"])
def test_a_server_killed_between_compaction_steps_loses_nothing_and_leaves_only_orphans(point):
    """The server dies (SIGKILL, at a test crash point) between two steps of a compaction:
    after a restart the table reads as before, at the snapshot it had or at the
    compaction's if that was committed; the worker's scratch copies are gone; what was
    uploaded but never committed is an orphan that the next orphan run removes, after
    which every object under the table location is one its metadata reaches."""
    from conftest import Server, BOOTSTRAP_SECRET
    srv = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                            "TABLEMERE_TEST_CRASH_AT": point})
    try:
        acct, cat, t = five_small_files(srv)
        before_snapshot = t.current_snapshot().snapshot_id
        cat = compact_killed_and_restarted(srv, acct)
        t = cat.load_table("k.t")
        committed = point == "compact.committed"
        if committed:
            assert t.current_snapshot().parent_snapshot_id == before_snapshot
            assert t.current_snapshot().summary["tablemere.maintenance"] == "compact"
        else:
            assert t.current_snapshot().snapshot_id == before_snapshot
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == list(range(50))
        import os
        scratch = os.path.join(srv.data_dir, "data", "maintenance")
        assert not os.path.exists(scratch) or os.listdir(scratch) == []

        [orphans] = run_maintenance(srv, acct["warehouse_id"], "k", "t", ["orphans"],
                                    orphan_grace_seconds=0)
        uploaded = point in ("compact.uploaded", "compact.manifests-written")
        assert (orphans["orphans_deleted"] > 0) == uploaded, orphans
        s3 = warehouse_s3(srv, acct)
        bucket, prefix = t.metadata.location.removeprefix("s3://").split("/", 1)
        listed = {f"s3://{bucket}/{o['Key']}" for o in s3.list_objects_v2(
            Bucket=bucket, Prefix=prefix + "/").get("Contents", [])}
        reached = {t.metadata_location} | {m.metadata_file for m in t.metadata.metadata_log}
        for snap in t.metadata.snapshots:
            reached.add(snap.manifest_list)
            for m in snap.manifests(t.io):
                reached.add(m.manifest_path)
                reached |= {e.data_file.file_path for e in m.fetch_manifest_entry(t.io)}
        assert listed == reached
        if not committed:  # and the next compaction goes through
            [r] = run_maintenance(srv, acct["warehouse_id"], "k", "t", ["compact"])
            assert r["ran"], r["skipped_because"]
            t = cat.load_table("k.t")
            assert sorted(t.scan().to_arrow()["id"].to_pylist()) == list(range(50))
    finally:
        srv.cleanup()


def test_a_server_killed_after_uploading_a_merged_delete_file_loses_nothing():
    """The same for merging position delete files (here DuckDB's, one per DELETE): killed
    once the merged file is uploaded, the server restarts with the table at its old
    snapshot reading as before; the merged file is an orphan the next orphan run removes,
    and the next compaction merges again."""
    from conftest import Server, BOOTSTRAP_SECRET
    srv = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                            "TABLEMERE_TEST_CRASH_AT": "compact.deletes-uploaded"})
    try:
        acct = srv.signup(engine="pyiceberg")
        duck = duckdb_from_recipe(srv.connection(acct["api_key"], "duckdb"))
        duck.execute("CREATE SCHEMA lake.k")
        duck.execute("CREATE TABLE lake.k.t (id BIGINT)")
        cat = pyiceberg_from_recipe(acct["connection"])
        with cat.load_table("k.t").transaction() as tx:
            tx.set_properties({"tablemere.maintenance.target-file-size-bytes": "100",
                               "tablemere.maintenance.compact.min-delete-files": "2"})
        duck.execute("INSERT INTO lake.k.t SELECT range FROM range(100)")
        duck.execute("DELETE FROM lake.k.t WHERE id = 1")
        duck.execute("DELETE FROM lake.k.t WHERE id = 2")
        t = cat.load_table("k.t")
        before_snapshot = t.current_snapshot().snapshot_id
        expected = [i for i in range(100) if i not in (1, 2)]
        assert sorted(f["content"] for f in t.inspect.files().to_pylist()) == [0, 1, 1]
        cat = compact_killed_and_restarted(srv, acct)
        t = cat.load_table("k.t")
        assert t.current_snapshot().snapshot_id == before_snapshot
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == expected
        [orphans] = run_maintenance(srv, acct["warehouse_id"], "k", "t", ["orphans"],
                                    orphan_grace_seconds=0)
        assert orphans["orphans_deleted"] == 1, orphans
        [r] = run_maintenance(srv, acct["warehouse_id"], "k", "t", ["compact"])
        assert r["ran"] and r["delete_files_merged"] == 2 and r["delete_files_written"] == 1, (
            r["skipped_because"], r)
        t = cat.load_table("k.t")
        assert sorted(f["content"] for f in t.inspect.files().to_pylist()) == [0, 1]
        assert sorted(t.scan().to_arrow()["id"].to_pylist()) == expected
        fresh = duckdb_from_recipe(srv.connection(acct["api_key"], "duckdb"))
        assert [x[0] for x in fresh.execute("SELECT id FROM lake.k.t ORDER BY id").fetchall()] \
            == expected
    finally:
        srv.cleanup()

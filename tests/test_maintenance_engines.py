"""Every maintenance job on a table Spark wrote the hard way, read by all three engines.

Spark writes a table with every common primitive type, a struct, a list and a map, in
small files, then changes it with merge-on-read DELETE, UPDATE and MERGE (position
deletes), evolves its partition spec and its schema, and tags the last snapshot. Then the
jobs run one after the other (compact, rewrite-manifests, expire, orphans), and after each:
Spark's time-travel EXCEPT ALL against the tagged snapshot is empty both ways; Spark,
PyIceberg and DuckDB agree on the count and checksums; every retained snapshot still
reads, with the same count, in all three; and no file any retained snapshot reaches is
gone. Both PyIceberg and Spark planning their scans on the server read exactly what they
read planning for themselves, with the same files planned. In format v2 the deletes are
Parquet position deletes; in v3 deletion vectors, and every row keeps its _row_id and
_last_updated_sequence_number through every job."""

import uuid

import pytest

from engines import (duckdb_from_recipe, pyiceberg_from_recipe, pyiceberg_server_planning,
                     spark_from_recipe, spark_reads_alike, with_server_planning_catalog)
from pyiceberg.expressions import EqualTo, LessThan
from helpers import run_maintenance

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("version", [2, 3])
def test_every_job_leaves_a_spark_written_table_reading_the_same_in_every_engine(
        clocked_server, version):
    srv = clocked_server
    acct = srv.signup(engine="spark")
    spark = spark_from_recipe(with_server_planning_catalog(srv.connection(acct["api_key"], "spark")))
    cat = pyiceberg_from_recipe(srv.connection(acct["api_key"], "pyiceberg"))
    planned_by_server = pyiceberg_server_planning(cat)
    duck = duckdb_from_recipe(srv.connection(acct["api_key"], "duckdb"))
    ns = "eng_" + uuid.uuid4().hex[:6]
    table = f"lake.{ns}.t"
    try:
        spark.sql(f"CREATE NAMESPACE lake.{ns}")
        spark.sql(f"""CREATE TABLE {table} (
            id bigint NOT NULL, p string, b boolean, i int, f float, d double,
            dec decimal(12, 3), dt date, ts timestamp, ntz timestamp_ntz, s string,
            bin binary, st struct<x: int, y: string>, arr array<int>, m map<string, int>)
            USING iceberg PARTITIONED BY (p)
            TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read',
                           'write.update.mode'='merge-on-read',
                           'write.merge.mode'='merge-on-read',
                           'tablemere.maintenance.max-snapshots'='3')""")

        def insert(first, n, extra=""):
            spark.sql(f"""INSERT INTO {table} SELECT
                id, IF(id % 2 = 0, 'even', 'odd'), id % 3 = 0, CAST(id AS int),
                CAST(id AS float) / 4, id * 1.5D, CAST(id AS decimal(12, 3)) / 8,
                date_add(DATE '2026-01-01', CAST(id % 50 AS int)),
                TIMESTAMP '2026-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id AS int)),
                CAST(TIMESTAMP '2026-02-01 00:00:00' + make_interval(0, 0, 0, 0, CAST(id AS int)) AS timestamp_ntz),
                IF(id % 11 = 0, NULL, concat('s', id)), CAST(concat('b', id) AS binary),
                named_struct('x', CAST(id AS int), 'y', concat('y', id)),
                array(CAST(id AS int), CAST(id + 1 AS int)), map(concat('k', id), CAST(id AS int))
                {extra} FROM range({first}, {first + n})""")

        for k in range(6):
            insert(k * 20, 20)
        spark.sql(f"DELETE FROM {table} WHERE id % 7 = 0")
        spark.sql(f"UPDATE {table} SET s = 'updated', i = i + 1000 WHERE id % 5 = 0")
        spark.sql(f"""MERGE INTO {table} AS t USING (SELECT id FROM range(110, 130)) AS src
                      ON t.id = src.id
                      WHEN MATCHED AND t.id % 2 = 0 THEN DELETE
                      WHEN MATCHED THEN UPDATE SET t.d = -1.0D
                      WHEN NOT MATCHED THEN INSERT (id, p, s) VALUES (src.id, 'merged', 'new')""")
        spark.sql(f"ALTER TABLE {table} ADD PARTITION FIELD bucket(2, id)")
        spark.sql(f"ALTER TABLE {table} ADD COLUMN extra string")
        for k in range(3):
            insert(200 + k * 10, 10, extra=", concat('e', id)")
        spark.sql(f"ALTER TABLE {table} CREATE TAG pre")
        t = cat.load_table(f"{ns}.t")
        assert any(f["content"] == 1 for f in t.inspect.files().to_pylist()), "no position deletes"
        assert len(t.metadata.specs()) == 2
        assert t.metadata.format_version == version
        lineage_sql = f"SELECT id, _row_id, _last_updated_sequence_number FROM {table}"
        lineage = sorted(spark.sql(lineage_sql).collect()) if version == 3 else None

        checksum_sql = ("SELECT count(*), sum(id), sum(i), sum(dec), count(s), count(bin), "
                        "sum(st.x), count(extra) FROM {}")
        expected = tuple(spark.sql(checksum_sql.format(table)).collect()[0])
        assert expected[0] > 100

        def check(job):
            spark.sql(f"REFRESH TABLE {table}")  # Spark's catalog caches the table otherwise
            assert spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC "
                             "LIMIT 1").collect()[0][0] == cat.load_table(
                f"{ns}.t").current_snapshot().snapshot_id, job
            # Spark's set operations take no map columns: the map as its sorted entries.
            cols = ("id, p, b, i, f, d, dec, dt, ts, ntz, s, bin, st, arr, extra, "
                    "array_sort(map_entries(m)) AS m")
            now = spark.sql(f"SELECT {cols} FROM {table}")
            pre = spark.sql(f"SELECT {cols} FROM {table} VERSION AS OF 'pre'")
            assert now.exceptAll(pre).count() == 0, job
            assert pre.exceptAll(now).count() == 0, job
            assert tuple(spark.sql(checksum_sql.format(table)).collect()[0]) == expected, job
            got = duck.execute(checksum_sql.format(f"lake.{ns}.t")).fetchone()
            assert (got[0], got[1], got[2], float(got[3]), got[4], got[5], got[6], got[7]) == (
                expected[0], expected[1], expected[2], float(expected[3]), *expected[4:]), job
            fresh = cat.load_table(f"{ns}.t")
            rows = fresh.scan().to_arrow()
            assert rows.num_rows == expected[0], job
            assert sum(rows["id"].to_pylist()) == expected[1], job
            # Planned by the server: the same rows, from the same files (so it prunes).
            served = planned_by_server.load_table(f"{ns}.t")
            for row_filter in (None, EqualTo("p", "even"), LessThan("id", 40)):
                scan = {} if row_filter is None else {"row_filter": row_filter}
                assert sorted(served.scan(**scan).to_arrow()["id"].to_pylist()) == sorted(
                    fresh.scan(**scan).to_arrow()["id"].to_pylist()), (job, row_filter)
                files = sorted(f.file.file_path for f in served.scan(**scan).plan_files())
                assert files == sorted(f.file.file_path for f in fresh.scan(**scan).plan_files())
            assert 0 < len(list(served.scan(row_filter=EqualTo("p", "even")).plan_files())) < len(
                list(served.scan().plan_files())), job
            for where in ("true", "p = 'odd'", "id >= 200", "s IS NULL"):
                spark_reads_alike(spark, table, f"srv.{ns}.t", where, cols)
            if version == 3:
                assert sorted(spark.sql(lineage_sql).collect()) == lineage, job
            # Every retained snapshot reads, alike in all three; every file it reaches exists.
            for snap in fresh.metadata.snapshots:
                sid = snap.snapshot_id
                n = spark.sql(f"SELECT count(*) FROM {table} VERSION AS OF {sid}").collect()[0][0]
                assert fresh.scan(snapshot_id=sid).to_arrow().num_rows == n, (job, sid)
                assert served.scan(snapshot_id=sid).to_arrow().num_rows == n, (job, sid)
                assert duck.execute(f"SELECT count(*) FROM lake.{ns}.t AT (VERSION => {sid})"
                                    ).fetchone()[0] == n, (job, sid)
                assert fresh.io.new_input(snap.manifest_list).exists(), (job, sid)
                for m in snap.manifests(fresh.io):
                    assert fresh.io.new_input(m.manifest_path).exists(), (job, m.manifest_path)
                    for e in m.fetch_manifest_entry(fresh.io, discard_deleted=True):
                        assert fresh.io.new_input(e.data_file.file_path).exists(), (job, e.data_file.file_path)
            return fresh

        def run(job, **extra):
            [r] = run_maintenance(srv, acct["warehouse_id"], ns, "t", [job], **extra)
            assert r["ran"], (job, r["skipped_because"], r)
            return r

        compacted = run("compact")
        assert compacted["rows_deleted"] > 0 and compacted["delete_files_removed"] > 0, compacted
        t = check("compact")
        assert not [f for f in t.inspect.files().to_pylist() if f["content"] == 1]
        run("rewrite-manifests")
        check("rewrite-manifests")
        expired = run("expire")
        assert expired["snapshots_expired"] > 0, expired
        t = check("expire")
        assert len(t.metadata.snapshots) <= 4  # three, and the tagged one
        run("orphans", orphan_grace_seconds=0)
        check("orphans")
    finally:
        spark.stop()

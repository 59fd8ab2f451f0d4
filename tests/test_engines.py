"""The three engines against a running server, each using the recipe the server hands
out, each reading what the others wrote."""

import time

import pyarrow as pa
import pytest
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from conftest import Server
from engines import duckdb_from_recipe, pyiceberg_from_recipe, spark_from_recipe
from helpers import wait_for


@pytest.fixture(scope="module")
def recipes(server, account):
    key = account["api_key"]
    return {engine: server.connection(key, engine) for engine in ("duckdb", "pyiceberg", "spark")}


@pytest.fixture(scope="module")
def duck(recipes):
    con = duckdb_from_recipe(recipes["duckdb"])
    yield con
    con.close()


@pytest.fixture(scope="module")
def pyice(recipes):
    return pyiceberg_from_recipe(recipes["pyiceberg"])


@pytest.fixture(scope="module")
def spark(recipes):
    session = spark_from_recipe(recipes["spark"])
    yield session
    session.stop()


class TestDuckDB:
    def test_full_lifecycle(self, duck):
        duck.execute("CREATE SCHEMA lake.duck")
        duck.execute("CREATE TABLE lake.duck.big AS SELECT range AS id, 'row-' || range AS label "
                     "FROM range(1000000)")
        assert duck.execute("SELECT count(*), sum(id) FROM lake.duck.big").fetchall() == [
            (1000000, 499999500000)]
        duck.execute("INSERT INTO lake.duck.big VALUES (1000000, 'extra')")
        duck.execute("DELETE FROM lake.duck.big WHERE id < 10")
        duck.execute("UPDATE lake.duck.big SET label = 'changed' WHERE id = 500")
        assert duck.execute("SELECT count(*), min(id), max(id) FROM lake.duck.big").fetchall() == [
            (999991, 10, 1000000)]
        assert duck.execute("SELECT label FROM lake.duck.big WHERE id = 500").fetchall() == [
            ("changed",)]
        duck.execute("CREATE TABLE lake.duck.gone AS SELECT 1 AS x")
        duck.execute("DROP TABLE lake.duck.gone")
        tables = [r[0] for r in duck.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'lake' "
            "AND table_schema = 'duck'").fetchall()]
        assert "gone" not in tables and "big" in tables


class TestPyIceberg:
    def test_create_append_overwrite_evolve(self, pyice):
        pyice.create_namespace("py")
        data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "city": pa.array(["a", "b", "c"])})
        table = pyice.create_table(("py", "cities"), schema=data.schema)
        table.append(data)
        table.append(data)
        assert table.scan().to_arrow().num_rows == 6
        table.overwrite(data)
        assert pyice.load_table(("py", "cities")).scan().to_arrow().num_rows == 3
        with table.update_schema() as update:
            update.add_column("population", LongType())
        reloaded = pyice.load_table(("py", "cities"))
        assert [f.name for f in reloaded.schema().fields] == ["id", "city", "population"]
        reloaded.append(pa.table({"id": pa.array([4], pa.int64()), "city": pa.array(["d"]),
                                  "population": pa.array([10], pa.int64())}))
        rows = reloaded.scan().to_arrow().sort_by("id").to_pydict()
        assert rows["population"] == [None, None, None, 10]

    def test_partitioned_table(self, pyice):
        schema = Schema(NestedField(1, "id", LongType(), required=False),
                        NestedField(2, "region", StringType(), required=False))
        spec = PartitionSpec(PartitionField(source_id=2, field_id=1000,
                                            transform=IdentityTransform(), name="region"))
        table = pyice.create_table(("py", "parts"), schema=schema, partition_spec=spec)
        table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                               "region": pa.array(["eu", "us", "eu"])}))
        files = list(table.inspect.files().to_pydict()["file_path"])
        assert len(files) == 2 and all("region=" in f for f in files)
        eu = table.scan(row_filter="region = 'eu'").to_arrow()
        assert sorted(eu["id"].to_pylist()) == [1, 3]

    def test_concurrent_writers_lose_nothing(self, pyice):
        import threading

        pyice.create_namespace_if_not_exists("py")
        pyice.create_table(("py", "concurrent"),
                                   schema=pa.schema([pa.field("writer", pa.int64()),
                                                     pa.field("n", pa.int64())]))
        errors = []

        def writer(w):
            try:
                for n in range(4):
                    batch = pa.table({"writer": pa.array([w], pa.int64()),
                                      "n": pa.array([n], pa.int64())})
                    for _ in range(50):
                        try:
                            pyice.load_table(("py", "concurrent")).append(batch)
                            break
                        except CommitFailedException:
                            continue
                    else:
                        errors.append(f"writer {w} gave up")
            except Exception as e:  # surfaced below, with the writer named
                errors.append(f"writer {w}: {e!r}")

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        rows = pyice.load_table(("py", "concurrent")).scan().to_arrow()
        assert sorted(zip(rows["writer"].to_pylist(), rows["n"].to_pylist())) == [
            (w, n) for w in range(8) for n in range(4)]


@pytest.mark.spark
class TestSpark:
    def test_sql_lifecycle(self, spark):
        spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.sp")
        spark.sql("CREATE TABLE lake.sp.orders (id bigint, item string) USING iceberg")
        spark.sql("INSERT INTO lake.sp.orders VALUES (1, 'apple'), (2, 'pear')")
        spark.sql("MERGE INTO lake.sp.orders t USING (SELECT 2 AS id, 'plum' AS item UNION ALL "
                  "SELECT 3, 'fig') u ON t.id = u.id WHEN MATCHED THEN UPDATE SET item = u.item "
                  "WHEN NOT MATCHED THEN INSERT *")
        rows = [tuple(r) for r in spark.sql("SELECT id, item FROM lake.sp.orders ORDER BY id").collect()]
        assert rows == [(1, "apple"), (2, "plum"), (3, "fig")]
        snapshots = spark.sql("SELECT operation FROM lake.sp.orders.snapshots").collect()
        assert len(snapshots) == 2

    def test_drop_purge_removes_files(self, spark, server, account):
        import boto3

        spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.sp")
        spark.sql("CREATE TABLE lake.sp.tmp (id bigint) USING iceberg")
        spark.sql("INSERT INTO lake.sp.tmp VALUES (1)")
        cred = account["connection"]["catalog_credential"]
        s3 = boto3.client("s3", endpoint_url=server.s3, region_name="us-east-1",
                          aws_access_key_id=cred["client_id"],
                          aws_secret_access_key=cred["client_secret"])
        bucket = account["connection"]["warehouse_name"]
        listing = s3.list_objects_v2(Bucket=bucket, Prefix="sp/tmp/")
        assert any(o["Key"].endswith(".parquet") for o in listing.get("Contents", []))
        spark.sql("DROP TABLE lake.sp.tmp PURGE")
        assert [r.tableName for r in spark.sql("SHOW TABLES IN lake.sp").collect()] == ["orders"]
        left = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="sp/tmp/").get("Contents", [])]
        assert not any(k.endswith(".parquet") for k in left)


BRIEF_SESSION_SECONDS = 12


@pytest.fixture(scope="module")
def brief(spark):
    """Spark's catalog `brief` on a server whose vended sessions live twelve seconds: long
    enough for a small purge after the drop, short enough to outlive in a test."""
    srv = Server(args=["--session-seconds", str(BRIEF_SESSION_SECONDS)])
    account = srv.signup(engine="spark")
    conf = srv.connection(account["api_key"], "spark")["conf"]
    for key, value in conf.items():
        if key.startswith("spark.sql.catalog.lake"):
            spark.conf.set("spark.sql.catalog.brief" + key[len("spark.sql.catalog.lake"):], value)
    yield srv, account
    srv.cleanup()


@pytest.mark.spark
class TestShortSessions:
    def test_drop_purge_outliving_its_session_leaves_nothing(self, spark, brief):
        import boto3

        srv, account = brief
        spark.sql("CREATE NAMESPACE IF NOT EXISTS brief.sp")
        spark.sql("CREATE TABLE brief.sp.long (id bigint, label string) USING iceberg")
        # Written across several session lifetimes, so the writes refresh too.
        for i in range(4):
            spark.sql(f"INSERT INTO brief.sp.long SELECT id, 'batch-{i}' FROM range({i * 100}, "
                      f"{(i + 1) * 100})")
            time.sleep(1.0)
        assert spark.sql("SELECT count(*) FROM brief.sp.long").collect()[0][0] == 400
        cred = account["connection"]["catalog_credential"]
        s3 = boto3.client("s3", endpoint_url=srv.s3, region_name="us-east-1",
                          aws_access_key_id=cred["client_id"],
                          aws_secret_access_key=cred["client_secret"])
        bucket = account["connection"]["warehouse_name"]

        def keys():
            return [o["Key"] for o in
                    s3.list_objects_v2(Bucket=bucket, Prefix="sp/long/").get("Contents", [])]

        assert sum(k.endswith(".parquet") for k in keys()) >= 4
        # The session Spark holds for the table runs out: its purge must refresh it after
        # the drop (Iceberg's provider refreshes early too, but need not).
        time.sleep(BRIEF_SESSION_SECONDS + 0.5)
        started = time.monotonic()
        spark.sql("DROP TABLE brief.sp.long PURGE")
        print(f"DROP TABLE ... PURGE took {time.monotonic() - started:.1f} s")
        assert [r.tableName for r in spark.sql("SHOW TABLES IN brief.sp").collect()] == []
        # Spark deleted every reachable file; what it does not reach (none here) is left
        # to the catalog's own purge, due a lifetime after the drop.
        assert not any(k.endswith(".parquet") or k.endswith(".avro") for k in keys()), keys()
        wait_for(lambda: keys() == [], "the catalog's purge after the drop", timeout=40,
                 interval=0.2)


@pytest.mark.spark
class TestCrossEngine:
    def test_each_engine_reads_the_others(self, duck, pyice, spark):
        duck.execute("CREATE SCHEMA IF NOT EXISTS lake.cross")
        duck.execute("CREATE TABLE lake.cross.from_duck AS SELECT range AS id FROM range(100)")
        pyice.create_namespace_if_not_exists("cross")
        t = pyice.create_table(("cross", "from_py"), schema=pa.schema([pa.field("id", pa.int64())]))
        t.append(pa.table({"id": pa.array(list(range(50)), pa.int64())}))
        spark.sql("CREATE TABLE lake.cross.from_spark (id bigint) USING iceberg")
        spark.sql("INSERT INTO lake.cross.from_spark SELECT id FROM range(25)")

        # DuckDB reads PyIceberg's and Spark's tables.
        assert duck.execute("SELECT count(*) FROM lake.cross.from_py").fetchall() == [(50,)]
        assert duck.execute("SELECT count(*) FROM lake.cross.from_spark").fetchall() == [(25,)]
        # PyIceberg reads DuckDB's and Spark's.
        assert pyice.load_table(("cross", "from_duck")).scan().to_arrow().num_rows == 100
        assert pyice.load_table(("cross", "from_spark")).scan().to_arrow().num_rows == 25
        # Spark reads DuckDB's and PyIceberg's.
        assert spark.sql("SELECT count(*) FROM lake.cross.from_duck").collect()[0][0] == 100
        assert spark.sql("SELECT sum(id) FROM lake.cross.from_py").collect()[0][0] == sum(range(50))
        # Writes on top of another engine's table, read back by a third.
        spark.sql("INSERT INTO lake.cross.from_duck VALUES (1000)")
        duck.execute("INSERT INTO lake.cross.from_py VALUES (500)")
        assert pyice.load_table(("cross", "from_duck")).scan().to_arrow().num_rows == 101
        spark.sql("REFRESH TABLE lake.cross.from_py")  # Spark caches loaded tables for 30 s
        assert spark.sql("SELECT max(id) FROM lake.cross.from_py").collect()[0][0] == 500

"""Helpers that run the real engines exactly as the server's connection recipes say."""

import glob
import os

import duckdb


def duckdb_from_recipe(connection):
    """A DuckDB connection with the recipe's statements executed as printed."""
    con = duckdb.connect()
    for statement in connection["sql"].split(";\n"):
        if statement.strip():
            con.execute(statement)
    return con


def pyiceberg_from_recipe(connection):
    scope = {}
    exec(connection["python"], scope)  # the recipe as printed
    return scope["catalog"]


def iceberg_jars():
    """The Iceberg Spark runtime and AWS bundle, as Maven put them in the local repository."""
    m2 = os.path.expanduser(os.environ.get("MAVEN_REPO", "~/.m2/repository"))
    jars = []
    for artifact in ("iceberg-spark-runtime-3.5_2.12", "iceberg-aws-bundle"):
        found = glob.glob(f"{m2}/org/apache/iceberg/{artifact}/1.11.0/{artifact}-1.11.0.jar")
        if not found:
            raise RuntimeError(f"{artifact} 1.11.0 is not in {m2}; run scripts/install-deps.sh")
        jars.append(found[0])
    return ",".join(jars)


def spark_from_recipe(connection):
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName("tablemere-tests")
               .config("spark.jars", iceberg_jars())
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.memory", "1g"))
    for key, value in connection["conf"].items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def with_server_planning_catalog(connection):
    """The Spark recipe with a second catalog `srv` on the same warehouse that plans its
    scans on the server (Iceberg 1.11's scan-planning-mode), beside `lake`, which plans
    for itself."""
    conf = dict(connection["conf"])
    for key, value in connection["conf"].items():
        if key.startswith("spark.sql.catalog.lake"):
            conf["spark.sql.catalog.srv" + key[len("spark.sql.catalog.lake"):]] = value
    conf["spark.sql.catalog.srv.scan-planning-mode"] = "server"
    return {**connection, "conf": conf}


def pyiceberg_server_planning(catalog):
    """The same PyIceberg catalog, planning its scans on the server."""
    from pyiceberg.catalog.rest import RestCatalog

    props = dict(catalog.properties)
    props["scan-planning-mode"] = "server"
    return RestCatalog(name="server-planned", **props)


def spark_reads_alike(spark, lake_table, srv_table, where="true", cols="*"):
    """Both catalogs read exactly the same rows (as multisets); answers the count."""
    client = spark.sql(f"SELECT {cols} FROM {lake_table} WHERE {where}")
    server = spark.sql(f"SELECT {cols} FROM {srv_table} WHERE {where}")
    assert client.exceptAll(server).count() == 0, (srv_table, where)
    assert server.exceptAll(client).count() == 0, (srv_table, where)
    return server.count()

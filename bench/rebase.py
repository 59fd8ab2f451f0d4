#!/usr/bin/env python3
"""Commit rebase benchmark: what a DuckDB DELETE pays when a compaction rewrote the files it
deletes from between its planning and its COMMIT, so that the server re-aims its position
deletes at the compacted file (the worker rewrites the delete file) before answering 200.

  bench/rebase.py [ROUNDS]     (default 6)

Each round makes two fresh tables of six small files and deletes two rows from each in a
DuckDB transaction: on one nothing happens before COMMIT (the reference, same run), on the
other a compaction commits first. Figures: median COMMIT wall time of each, and the ratio.
"""

import json
import pathlib
import statistics
import sys
import time
import uuid

import pyarrow as pa

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402
from engines import duckdb_from_recipe, pyiceberg_from_recipe  # noqa: E402
from helpers import run_maintenance  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "part", StringType(), required=False))
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "part"))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    srv = conftest.Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": conftest.BOOTSTRAP_SECRET})
    times = {"plain": [], "rebased": []}
    try:
        acct = srv.signup(engine="pyiceberg")
        cat = pyiceberg_from_recipe(acct["connection"])
        recipe = srv.connection(acct["api_key"], "duckdb")
        for _ in range(rounds):
            for mode in ("plain", "rebased"):
                ns = "b" + uuid.uuid4().hex[:6]
                cat.create_namespace(ns)
                t = cat.create_table(f"{ns}.t", schema=SCHEMA, partition_spec=SPEC)
                for k in range(6):
                    ids = list(range(100 + k * 10, 110 + k * 10))
                    t.append(pa.table({"id": pa.array(ids, pa.int64()), "part": ["b"] * 10}))
                duck = duckdb_from_recipe(recipe)
                duck.execute("BEGIN")
                duck.execute(f"DELETE FROM lake.{ns}.t WHERE id IN (105, 131)")
                if mode == "rebased":
                    [r] = run_maintenance(srv, acct["warehouse_id"], ns, "t", ["compact"])
                    assert r["ran"], r
                start = time.perf_counter()
                duck.execute("COMMIT")
                times[mode].append((time.perf_counter() - start) * 1000)
                got = duck.execute(f"SELECT count(*) FROM lake.{ns}.t").fetchone()[0]
                assert got == 58, got
    finally:
        srv.cleanup()
    plain, rebased = statistics.median(times["plain"]), statistics.median(times["rebased"])
    print(json.dumps({"rounds": rounds, "commit_ms_median": round(plain, 1),
                      "rebased_commit_ms_median": round(rebased, 1),
                      "ratio": round(rebased / plain, 2)}, indent=2))


if __name__ == "__main__":
    main()

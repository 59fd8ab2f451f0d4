#!/usr/bin/env python3
"""Compaction benchmark: a table of about FILES small files (written by PyIceberg in 20
appends) is compacted through POST /internal/maintenance/run, and then its snapshots expired.

  bench/compaction.py [FILES [ROWS_PER_FILE]]     (defaults 2000, 500)

Figures, each against a reference measured in the same run:
- compaction throughput (bytes of the small files / wall time of the compact job, which
  includes copying them out of the object store, the worker's rewrite, the manifests and
  the commit) against pyarrow reading the same files from local disk and writing them as
  one zstd Parquet file in one process;
- loadTable (sequential, PyIceberg's load_table) and DuckDB `SELECT count(*)` (answered
  from manifests) and `SELECT sum(score)` (reads every file) before compaction, after it,
  and after the expiry that follows.
"""

import json
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import requests

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402
from engines import duckdb_from_recipe, pyiceberg_from_recipe  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                    pa.field("score", pa.float64())])


def rows(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "name": [f"name-{i}" for i in ids],
                     "score": [i * 0.5 for i in ids]}, schema=SCHEMA)


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    per_file = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    tmp = None
    server = conftest.Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": conftest.BOOTSTRAP_SECRET},
                             args=("--maintenance-interval", "0"))
    try:
        acct = server.signup(engine="pyiceberg")
        cat = pyiceberg_from_recipe(acct["connection"])
        duck = duckdb_from_recipe(server.connection(acct["api_key"], "duckdb"))
        cat.create_namespace("bench")
        # Many small files in a few commits: PyIceberg splits an append into files of
        # write.target-file-size-bytes (in memory); the property is removed afterwards so
        # compaction aims at the default 128 MB.
        t = cat.create_table("bench.small", schema=SCHEMA,
                             properties={"tablemere.maintenance.max-snapshots": "1",
                                         "write.target-file-size-bytes": str(per_file * 24)})
        t0 = time.perf_counter()
        commits = 20
        for k in range(commits):
            t = cat.load_table("bench.small")  # fresh vended credentials
            t.append(rows(k * per_file * (files // commits), per_file * (files // commits)))
        write_s = time.perf_counter() - t0
        t = cat.load_table("bench.small")
        with t.transaction() as tx:
            tx.remove_properties("write.target-file-size-bytes")
        t = cat.load_table("bench.small")
        paths = [f["file_path"] for f in t.inspect.files().to_pylist()]
        small_bytes = sum(f["file_size_in_bytes"] for f in t.inspect.files().to_pylist())

        tmp = tempfile.mkdtemp(prefix="tm-bench-")
        local = []
        for i, p in enumerate(paths):
            dest = pathlib.Path(tmp) / f"in-{i}.parquet"
            with t.io.new_input(p).open() as src:
                dest.write_bytes(src.read())
            local.append(str(dest))

        def load():
            cat.load_table("bench.small")

        def count():
            return duck.execute("SELECT count(*) FROM lake.bench.small").fetchone()[0]

        def scan():
            return duck.execute("SELECT sum(score) FROM lake.bench.small").fetchone()[0]

        total_rows = count()
        before = {"load_s": timed(load, 20), "count_s": timed(count, 5), "scan_s": timed(scan, 5)}

        def run(job):
            r = requests.post(server.api + "/internal/maintenance/run",
                              headers={"X-Bootstrap-Secret": conftest.BOOTSTRAP_SECRET},
                              json={"warehouse_id": acct["warehouse_id"], "namespace": "bench",
                                    "table": "small", "jobs": [job]})
            r.raise_for_status()
            return r.json()["results"][0]

        t0 = time.perf_counter()
        compacted = run("compact")
        compact_s = time.perf_counter() - t0
        assert compacted["ran"], compacted
        assert count() == total_rows
        after = {"load_s": timed(load, 20), "count_s": timed(count, 5), "scan_s": timed(scan, 5)}
        rewritten = run("rewrite-manifests")
        assert rewritten["ran"], rewritten
        assert count() == total_rows
        after_manifests = {"load_s": timed(load, 20), "count_s": timed(count, 5),
                           "scan_s": timed(scan, 5)}
        expired = run("expire")
        assert count() == total_rows
        expired_fig = {"load_s": timed(load, 20), "count_s": timed(count, 5), "scan_s": timed(scan, 5)}

        # The reference: the same bytes read and rewritten by pyarrow in one process
        # (copied out before compaction and expiry delete them).
        t0 = time.perf_counter()
        with pq.ParquetWriter(pathlib.Path(tmp) / "out.parquet", pq.read_schema(local[0]),
                              compression="zstd") as w:
            for f in local:
                w.write_table(pq.read_table(f))
        reference_s = time.perf_counter() - t0

        mb = small_bytes / 1e6
        out = {
            "files": len(paths), "rows": total_rows, "small_bytes": small_bytes,
            "write_s": round(write_s, 1),
            "compact": {"seconds": round(compact_s, 2), "mb_per_s": round(mb / compact_s, 2),
                        "files_after": compacted["data_files_after"]},
            "reference_pyarrow": {"seconds": round(reference_s, 2),
                                  "mb_per_s": round(mb / reference_s, 2)},
            "ratio": round(reference_s / compact_s, 3),
            "load_table_ms": {k: round(v["load_s"] * 1000, 2)
                              for k, v in (("before", before), ("after", after),
                                           ("after_manifests", after_manifests),
                                           ("after_expiry", expired_fig))},
            "duckdb_count_ms": {k: round(v["count_s"] * 1000, 1)
                                for k, v in (("before", before), ("after", after),
                                             ("after_manifests", after_manifests),
                                             ("after_expiry", expired_fig))},
            "duckdb_sum_ms": {k: round(v["scan_s"] * 1000, 1)
                              for k, v in (("before", before), ("after", after),
                                           ("after_manifests", after_manifests),
                                           ("after_expiry", expired_fig))},
            "expired_snapshots": expired["snapshots_expired"],
            "files_deleted": expired["files_deleted"],
        }
        print(json.dumps(out, indent=2))
    finally:
        server.cleanup()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Server-side scan planning against PyIceberg 0.12's own client-side planning, same run.

  bench/scan_planning.py [APPENDS] [PAIRS]     (default 300 appends, 5 pairs)

Builds a table partitioned by city (20 cities) with APPENDS PyIceberg appends of 10 files
each (one manifest per append: thousands of files across hundreds of manifests), then
times `scan(row_filter).plan_files()` to the list of tasks, alternating client-side
planning (PyIceberg reads the manifest list and every manifest over S3) and server-side
planning (scan-planning-mode=server) PAIRS times, for a filter that prunes partitions and
files and for the whole table. Each timing loads the table first (not timed), so neither
side plans from a cache of the previous round. Figures: median seconds of each and the
median of the paired ratios (client / server).
"""

import pathlib
import statistics
import sys
import time

import pyarrow as pa

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402
from engines import pyiceberg_from_recipe  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import IdentityTransform  # noqa: E402
from pyiceberg.types import DoubleType, LongType, NestedField, StringType  # noqa: E402

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "city", StringType(), required=False),
                NestedField(3, "v", DoubleType(), required=False))
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "city"))
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("city", pa.string()),
                   pa.field("v", pa.float64())])


def main():
    appends = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    srv = conftest.Server()
    try:
        acct = srv.signup(engine="pyiceberg")
        client = pyiceberg_from_recipe(acct["connection"])
        props = dict(client.properties)
        props["scan-planning-mode"] = "server"
        server = RestCatalog(name="server-planned", **props)
        client.create_namespace("b")
        t = client.create_table("b.t", schema=SCHEMA, partition_spec=SPEC)
        started = time.perf_counter()
        for a in range(appends):
            # 10 rows in each of 10 of the 20 cities: 10 files, one manifest.
            ids = list(range(a * 100, a * 100 + 100))
            cities = [f"c{(a + i // 10) % 20:02d}" for i in range(100)]
            t.append(pa.table({"id": ids, "city": cities, "v": [i * 0.5 for i in ids]},
                              schema=ARROW))
        built = time.perf_counter() - started
        files = len(client.load_table("b.t").inspect.files())
        print(f"table: {appends} appends, {files} data files, {appends} manifests "
              f"(built in {built:.0f} s)")
        filters = {"city = c07 and id >= half": And(EqualTo("city", "c07"),
                                                    GreaterThanOrEqual("id", appends * 50)),
                   "whole table": None}
        for name, row_filter in filters.items():
            times = {"client": [], "server": []}
            planned = {}
            for _ in range(pairs):
                for side, cat in (("client", client), ("server", server)):
                    table = cat.load_table("b.t")
                    scan = table.scan(row_filter=row_filter) if row_filter is not None else table.scan()
                    start = time.perf_counter()
                    tasks = list(scan.plan_files())
                    times[side].append(time.perf_counter() - start)
                    planned[side] = sorted(task.file.file_path for task in tasks)
            assert planned["client"] == planned["server"], name
            ratios = [c / s for c, s in zip(times["client"], times["server"])]
            print(f"{name}: {len(planned['server'])} files planned; client "
                  f"{statistics.median(times['client']):.3f} s, server "
                  f"{statistics.median(times['server']):.3f} s; client/server "
                  f"{statistics.median(ratios):.1f}x (pairs {min(ratios):.1f}-{max(ratios):.1f}x)")
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()

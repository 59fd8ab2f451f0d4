#!/usr/bin/env python3
"""A/B of catalog loadTable (100 snapshots, 16 clients) and the trivial endpoint between
two server binaries in the same run: both serve at once over their own data, and the
measurements alternate (old, new) five times; the median new/old ratio is reported.

  bench/ab_load_table.py OLD_BINARY [NEW_BINARY]
"""

import json
import pathlib
import subprocess
import sys

import requests

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from catalog_fixture import create_tables, signed_up_catalog  # noqa: E402

LOAD = str(ROOT / "build" / "bin" / "tm-load")


def load(*args):
    out = subprocess.run([LOAD, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def setup(server):
    """The table of bench/run.py: t0 with 100 snapshots. Returns (url, token)."""
    base, h, prefix, token = signed_up_catalog(server)
    create_tables(base, h, prefix)
    return base + "/namespaces/b/tables/t0?snapshots=all", token


def start(binary):
    conftest.SERVER_BIN = pathlib.Path(binary)
    return conftest.Server()


def main():
    old_bin = sys.argv[1]
    new_bin = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "build" / "bin" / "tablemere-server")
    old, new = start(old_bin), start(new_bin)
    try:
        targets = {name: setup(s) for name, s in (("old", old), ("new", new))}
        servers = {"old": old, "new": new}
        rounds = {"load_table": [], "trivial": []}
        for _ in range(5):
            got = {}
            for name in ("old", "new"):
                url, token = targets[name]
                got[name] = (load("http", "GET", url, 16, 3, "--bearer", token),
                             load("http", "GET", servers[name].api + "/livez", 16, 3))
            rounds["load_table"].append((got["old"][0], got["new"][0]))
            rounds["trivial"].append((got["old"][1], got["new"][1]))
        for what, pairs in rounds.items():
            ratios = sorted(n["ops_per_s"] / o["ops_per_s"] for o, n in pairs)
            mid = ratios[len(ratios) // 2]
            o, n = next((o, n) for o, n in pairs if n["ops_per_s"] / o["ops_per_s"] == mid)
            print(json.dumps({"what": what, "old_ops_per_s": o["ops_per_s"], "new_ops_per_s": n["ops_per_s"],
                              "old_p99_ms": o.get("p99_ms"), "new_p99_ms": n.get("p99_ms"),
                              "errors": sum(p[0]["errors"] + p[1]["errors"] for p in pairs),
                              "ratio_new_over_old": mid, "min": ratios[0], "max": ratios[-1]}))
    finally:
        old.cleanup()
        new.cleanup()


if __name__ == "__main__":
    main()

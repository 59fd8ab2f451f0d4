#!/usr/bin/env python3
"""The S3 backend against the store it fronts, same client (tm-load), same run:

- PUT and GET of one 256 MiB object, and 4 KiB objects from 16 clients, through our
  listener on --object-store s3, against the same requests sent straight to SeaweedFS;
- catalog loadTable (100 snapshots, 16 clients) on the S3 backend against local disk.

Figure and reference alternate five times; the round with the median ratio is reported.

  bench/s3_backend.py [--quick]
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
import seaweed  # noqa: E402
from catalog_fixture import create_tables, signed_up_catalog  # noqa: E402
from conftest import OPERATORS, Server  # noqa: E402
from measure import load, paired  # noqa: E402

QUICK = "--quick" in sys.argv
SECONDS = "2" if QUICK else "4"
BIG = (64 if QUICK else 256) * 1024 * 1024


def main():
    weed = seaweed.SeaweedFS()
    ours = Server(object_store="s3")
    local = Server(object_store="local")
    try:
        ak, sk = "operator1", OPERATORS["operator1"]
        dak, dsk = seaweed.ACCESS_KEY, seaweed.SECRET_KEY
        load("http", "PUT", ours.s3 + "/bench", 1, "0.1", "--s3", ak, sk)  # CreateBucket
        through = ours.s3 + "/bench"
        direct = weed.endpoint + "/" + seaweed.BUCKET + "/direct"
        r = {}
        r["big_put"] = paired(
            lambda i: load("big-put", f"{through}/big{i}", BIG, ak, sk)["mb_per_s"],
            lambda i: load("big-put", f"{direct}/big{i}", BIG, dak, dsk)["mb_per_s"])
        r["big_get"] = paired(
            lambda i: load("big-get", f"{through}/big{i}", ak, sk)["mb_per_s"],
            lambda i: load("big-get", f"{direct}/big{i}", dak, dsk)["mb_per_s"])
        r["small_put"] = paired(
            lambda i: load("http", "PUT", f"{through}/small{i}", 16, SECONDS, "--body-bytes", 4096,
                           "--s3", ak, sk, "--unique-keys")["ops_per_s"],
            lambda i: load("http", "PUT", f"{direct}/small{i}", 16, SECONDS, "--body-bytes", 4096,
                           "--s3", dak, dsk, "--unique-keys")["ops_per_s"])
        load("http", "PUT", f"{through}/one", 1, "0.1", "--body-bytes", 4096, "--s3", ak, sk)
        load("http", "PUT", f"{direct}/one", 1, "0.1", "--body-bytes", 4096, "--s3", dak, dsk)
        r["small_get"] = paired(
            lambda i: load("http", "GET", f"{through}/one", 16, SECONDS, "--s3", ak, sk)["ops_per_s"],
            lambda i: load("http", "GET", f"{direct}/one", 16, SECONDS, "--s3", dak, dsk)["ops_per_s"])
        urls = {}
        for name, server in (("s3", ours), ("local", local)):
            base, h, prefix, token = signed_up_catalog(server)
            create_tables(base, h, prefix)
            urls[name] = (base + "/namespaces/b/tables/t0?snapshots=all", token)
        r["load_table"] = paired(
            lambda i: load("http", "GET", urls["s3"][0], 16, SECONDS, "--bearer",
                           urls["s3"][1])["ops_per_s"],
            lambda i: load("http", "GET", urls["local"][0], 16, SECONDS, "--bearer",
                           urls["local"][1])["ops_per_s"])
        print(json.dumps(r, indent=2))
    finally:
        ours.cleanup()
        local.cleanup()
        weed.stop()


if __name__ == "__main__":
    main()

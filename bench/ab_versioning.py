#!/usr/bin/env python3
"""S3 versioning's cost, measured in one run:

- A/B between two server binaries (the release before versioning, and this one) on a
  bucket without versioning: 4 KiB PUT and GET at 16 clients, 256 MiB PUT and GET on one
  stream. Both servers run at once over their own data; measurements alternate (old, new)
  five times and the median new/old ratio is reported with its range.
- On this binary, the same figures on a bucket with versioning Enabled, against the
  unversioned bucket in the same rounds (what keeping every version costs).
- 4 KiB durable PUT at 16 clients against the one-thread write+fdatasync rate measured
  just before it (the figure the issue asks to raise).

  bench/ab_versioning.py OLD_BINARY [NEW_BINARY] [--quick]
"""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402
from conftest import OPERATORS  # noqa: E402

LOAD = str(ROOT / "build" / "bin" / "tm-load")
QUICK = "--quick" in sys.argv
SECONDS = "2" if QUICK else "3"
BIG = (64 if QUICK else 256) * 1024 * 1024
AK, SK = "operator1", OPERATORS["operator1"]


def load(*args):
    out = subprocess.run([LOAD, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def start(binary):
    conftest.SERVER_BIN = pathlib.Path(binary)
    return conftest.Server()


def bucket(server, name, versioned=False):
    load("http", "PUT", f"{server.s3}/{name}", 1, "0.1", "--s3", AK, SK)
    if versioned:
        body = os.path.join(server.data_dir, "versioning.xml")
        with open(body, "w") as f:
            f.write("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>")
        load("http", "PUT", f"{server.s3}/{name}?versioning=", 1, "0.1", "--s3", AK, SK,
             "--body-file", body)
    load("http", "PUT", f"{server.s3}/{name}/small-one", 1, "0.1", "--body-bytes", 4096,
         "--s3", AK, SK)
    load("big-put", f"{server.s3}/{name}/big", BIG, AK, SK)


def measure(server, name, round_no):
    """One round of the four figures on `name`."""
    base = f"{server.s3}/{name}"
    return {
        "put_4k": load("http", "PUT", f"{base}/small-r{round_no}", 16, SECONDS, "--body-bytes", 4096,
                       "--s3", AK, SK, "--unique-keys")["ops_per_s"],
        "get_4k": load("http", "GET", f"{base}/small-one", 16, SECONDS, "--s3", AK, SK)["ops_per_s"],
        # The same key each round: on a versioned bucket every round keeps one more version.
        "put_256m": load("big-put", f"{base}/big", BIG, AK, SK)["mb_per_s"],
        "get_256m": load("big-get", f"{base}/big", AK, SK)["mb_per_s"],
    }


def summary(pairs):
    """{figure: (median ratio b/a, min, max, median a, median b)} over (a, b) rounds."""
    out = {}
    for key in pairs[0][0]:
        ratios = sorted(b[key] / a[key] for a, b in pairs)
        firsts = sorted(a[key] for a, _ in pairs)
        seconds = sorted(b[key] for _, b in pairs)
        mid = len(ratios) // 2
        out[key] = (ratios[mid], ratios[0], ratios[-1], firsts[mid], seconds[mid])
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    old_bin = args[0]
    new_bin = args[1] if len(args) > 1 else str(ROOT / "build" / "bin" / "tablemere-server")
    old, new = start(old_bin), start(new_bin)
    try:
        bucket(old, "plain")
        bucket(new, "plain")
        bucket(new, "versioned", versioned=True)
        ab, versioned, durable = [], [], []
        for r in range(3 if QUICK else 5):
            o = measure(old, "plain", r)
            n = measure(new, "plain", r)
            v = measure(new, "versioned", r)
            ab.append((o, n))
            versioned.append((n, v))
            fsync = load("ref-fsync", os.path.join(new.data_dir, "data"), SECONDS, 1)["ops_per_s"]
            put = load("http", "PUT", f"{new.s3}/plain/durable-r{r}", 16, SECONDS, "--body-bytes",
                       4096, "--s3", AK, SK, "--unique-keys")["ops_per_s"]
            durable.append((fsync, put))
        print(json.dumps({"ab": summary(ab), "versioned": summary(versioned),
                          "durable": sorted((p / f, p, f) for f, p in durable)}, indent=1))
    finally:
        old.cleanup()
        new.cleanup()


if __name__ == "__main__":
    main()

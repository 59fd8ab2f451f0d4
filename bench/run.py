#!/usr/bin/env python3
"""Runs the Tablemere benchmarks against a fresh server and writes docs/benchmarks.md.

Every figure is reported beside a reference measured in the same run on the same machine
(disk write rate, MD5 rate, loopback TCP, fsync rate, a trivial endpoint of the same
server), because these machines are shared and noisy. Usage: bench/run.py [--quick]
"""

import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import requests

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from conftest import OPERATORS, Server  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from catalog_fixture import create_tables, signed_up_catalog  # noqa: E402

LOAD = str(ROOT / "build" / "bin" / "tm-load")
QUICK = "--quick" in sys.argv
SECONDS = "2" if QUICK else "5"
BIG = (64 if QUICK else 256) * 1024 * 1024


def load(*args):
    out = subprocess.run([LOAD, *map(str, args)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def best(runs, key):
    return max(r[key] for r in runs)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def paired(measure, reference, rounds=5):
    """Alternates a measurement with its reference, `rounds` times, and returns the round
    with the median ratio: on a shared 2-core machine a reference measured minutes apart
    from its figure says little, one measured just before it says more."""
    pairs = []
    for _ in range(rounds):
        ref = reference()
        got = measure()
        pairs.append((got, ref))
    ratios = [g / r for g, r in pairs]
    mid = median(ratios)
    got, ref = pairs[ratios.index(mid)]
    return {"value": got, "reference": ref, "ratio": mid, "min": min(ratios), "max": max(ratios)}


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main():
    server = Server()
    data_dir = os.path.join(server.data_dir, "data")
    results = {}
    try:
        results["idle_rss_mb"] = rss_kb(server.proc.pid) / 1024
        # ---- references
        results["ref_write"] = best([load("ref-write", data_dir, BIG) for _ in range(3)], "mb_per_s")
        results["ref_md5"] = best([load("ref-md5", 1 << 30) for _ in range(3)], "mb_per_s")
        results["ref_fsync_1"] = load("ref-fsync", data_dir, SECONDS, 1)["ops_per_s"]
        results["ref_fsync_16"] = load("ref-fsync", data_dir, SECONDS, 16)["ops_per_s"]
        results["ref_trivial"] = load("http", "GET", server.api + "/livez", 16, SECONDS)

        # ---- S3
        ak, sk = "operator1", OPERATORS["operator1"]
        load("http", "PUT", server.s3 + "/bench", 1, "0.1", "--s3", ak, sk)  # CreateBucket
        puts = [load("big-put", server.s3 + f"/bench/big{i}", BIG, ak, sk) for i in range(3)]
        gets = [load("big-get", server.s3 + f"/bench/big{i}", ak, sk) for i in range(3)]
        results["big_put"] = best(puts, "mb_per_s")
        rounds = iter(range(100))
        results["big_put_paired"] = paired(
            lambda: load("big-put", server.s3 + f"/bench/paired{next(rounds)}", BIG, ak, sk)["mb_per_s"],
            lambda: min(load("ref-write", data_dir, BIG)["mb_per_s"], load("ref-md5", BIG)["mb_per_s"]))
        results["big_get"] = best(gets, "mb_per_s")
        results["big_get_paired"] = paired(
            lambda: load("big-get", server.s3 + "/bench/big0", ak, sk)["mb_per_s"],
            lambda: load("ref-loopback", 1 << 30)["mb_per_s"])
        results["ref_loopback"] = results["big_get_paired"]["reference"]
        results["small_put"] = load("http", "PUT", server.s3 + "/bench/small", 16, SECONDS,
                                    "--body-bytes", 4096, "--s3", ak, sk, "--unique-keys")
        load("http", "PUT", server.s3 + "/bench/small-one", 1, "0.1", "--body-bytes", 4096, "--s3", ak, sk)
        results["small_get"] = load("http", "GET", server.s3 + "/bench/small-one", 16, SECONDS,
                                    "--s3", ak, sk)

        # ---- catalog
        base, h, prefix, token = signed_up_catalog(server)
        create_tables(base, h, prefix, tables=16)
        loaded = requests.get(base + "/namespaces/b/tables/t0", headers=h).json()
        assert len(loaded["metadata"]["snapshots"]) == 100
        results["load_table"] = load("http", "GET", base + "/namespaces/b/tables/t0?snapshots=all", 16,
                                     SECONDS, "--bearer", token)
        short = "2" if QUICK else "3"
        results["load_table_paired"] = paired(
            lambda: load("http", "GET", base + "/namespaces/b/tables/t0?snapshots=all", 16, short,
                         "--bearer", token)["ops_per_s"],
            lambda: load("http", "GET", server.api + "/livez", 16, short)["ops_per_s"])
        results["load_table_1"] = load("http", "GET", base + "/namespaces/b/tables/t0?snapshots=all", 1,
                                       SECONDS, "--bearer", token)
        commit_file = os.path.join(server.data_dir, "commit.json")
        json.dump({"requirements": [], "updates": [{"action": "set-properties",
                                                     "updates": {"bench": "yes"}}]}, open(commit_file, "w"))
        results["commit"] = load("http", "POST", base + "/namespaces/b/tables/t{w}", 16, SECONDS,
                                 "--bearer", token, "--body-file", commit_file)
        results["busy_rss_mb"] = rss_kb(server.proc.pid) / 1024
        time.sleep(1)
        results["after_rss_mb"] = rss_kb(server.proc.pid) / 1024
    finally:
        server.cleanup()
    write_report(results)


def write_report(r):
    ratio = lambda a, b: f"{a / b:.2f}×" if b else "n/a"  # noqa: E731
    g, lt, pp = r["big_get_paired"], r["load_table_paired"], r["big_put_paired"]
    lines = [
        "# Benchmarks",
        "",
        f"Measured by `bench/run.py` on {datetime.date.today().isoformat()} "
        f"({platform.machine()}, {os.cpu_count()} cores, shared machine). Each figure stands beside a "
        "reference measured in the same run; the ratio is what to compare across runs.",
        "",
        "| what | measured | reference (same run) | ratio | target |",
        "|---|---|---|---|---|",
        f"| S3 PUT 256 MiB, one stream | {pp['value']:.0f} MB/s (best of 3 earlier runs {r['big_put']:.0f}) | min(fdatasync write, MD5) {pp['reference']:.0f} MB/s, measured just before (best of 3 earlier: write {r['ref_write']:.0f}, MD5 {r['ref_md5']:.0f}) | {pp['ratio']:.2f}× (median of 5 pairs; {pp['min']:.2f}–{pp['max']:.2f}×) | ≥ 0.8× |",
        f"| S3 GET 256 MiB, one stream | {g['value']:.0f} MB/s (best of 3 earlier runs {r['big_get']:.0f}) | loopback TCP {g['reference']:.0f} MB/s, measured just before | {g['ratio']:.2f}× (median of 5 pairs; {g['min']:.2f}–{g['max']:.2f}×) | ≥ 0.8× |",
        f"| S3 PUT 4 KiB, 16 clients, durable | {r['small_put']['ops_per_s']:.0f} ops/s (p50 {r['small_put']['p50_ms']:.2f} ms, p99 {r['small_put']['p99_ms']:.2f} ms) | fsync rate {r['ref_fsync_1']:.0f} ops/s (1 thread), {r['ref_fsync_16']:.0f} ops/s (16 threads) | {ratio(r['small_put']['ops_per_s'], r['ref_fsync_1'])} of 1-thread fsync | ≥ 1× |",
        f"| S3 GET 4 KiB, 16 clients | {r['small_get']['ops_per_s']:.0f} ops/s (p99 {r['small_get']['p99_ms']:.2f} ms) | trivial endpoint {r['ref_trivial']['ops_per_s']:.0f} ops/s | {ratio(r['small_get']['ops_per_s'], r['ref_trivial']['ops_per_s'])} | — |",
        f"| catalog loadTable, 100 snapshots, 16 clients | {lt['value']:.0f} ops/s (a {SECONDS} s run: {r['load_table']['ops_per_s']:.0f} ops/s, p50 {r['load_table']['p50_ms']:.2f} ms, p99 {r['load_table']['p99_ms']:.2f} ms) | trivial endpoint {lt['reference']:.0f} ops/s, measured just before | {lt['ratio']:.2f}× (median of 5 pairs; {lt['min']:.2f}–{lt['max']:.2f}×) | ≥ 0.5×, p99 < 5 ms |",
        f"| catalog loadTable, 1 client | {r['load_table_1']['ops_per_s']:.0f} ops/s (p50 {r['load_table_1']['p50_ms']:.2f} ms, p99 {r['load_table_1']['p99_ms']:.2f} ms) | | | |",
        f"| catalog commits across 16 tables, 16 clients | {r['commit']['ops_per_s']:.0f} ops/s (p50 {r['commit']['p50_ms']:.2f} ms, p99 {r['commit']['p99_ms']:.2f} ms, errors {r['commit']['errors']}) | fsync rate {r['ref_fsync_1']:.0f} ops/s | {ratio(r['commit']['ops_per_s'], r['ref_fsync_1'])} | — |",
        f"| memory | idle {r['idle_rss_mb']:.1f} MB RSS; {r['after_rss_mb']:.1f} MB after the run | | | idle < 40 MB |",
        "",
        "Errors in the load runs: "
        f"small PUT {r['small_put']['errors']}, small GET {r['small_get']['errors']}, "
        f"loadTable {r['load_table']['errors']}, commit {r['commit']['errors']}.",
        "",
        "## Notes",
        "",
        "- **Large GET**: the loopback reference moves a cache-hot buffer with two copies (send,",
        "  receive); a GET adds a third, from the page cache, which profiles put at a third of",
        "  the sending thread's CPU. Reads of 8 MiB or more are therefore filled one 512 KiB",
        "  chunk ahead by a helper thread on the other core and the buffers are lent to the",
        "  transport (no further copy); the sender reads a chunk itself when the helper has not",
        "  started it, so the work divides between the cores. A deeper look-ahead measured worse",
        "  (the helper then takes all the reading onto the client's core). Zero-copy paths were",
        "  measured slower on this kernel: sendfile(2)/splice(2) hand the socket 4 KiB page-cache",
        "  pages (~1.1–1.6 GB/s against ~2.0–2.5 GB/s for pread+send); mmap turns a disk error",
        "  into SIGBUS; O_DIRECT reads ran at ~0.8 GB/s.",
        "- **loadTable** serves the stored metadata text without parsing it (cached by its",
        "  immutable location, sent from the cache with a gather write), answers the warehouse",
        "  and entry-head reads from a memo that any committed write invalidates, and reuses",
        "  vended sessions for part of their lifetime; the server links jemalloc (glibc malloc",
        "  was ~11% of its CPU). What remains is mostly the kernel copying the ~47 KB response",
        "  and thread switches, which the trivial endpoint also pays.",
        "- Variance: the load generator shares the 2 cores with the server, and the disk is shared",
        "  too (the fdatasync rate moved between ~270 and ~1450 MB/s within an hour); paired ratios",
        "  (figure and reference alternated five times, median reported with the range) are",
        "  steadier than single runs. On 2026-12-02, four full runs of this code gave large GET",
        "  0.71–0.85× (the lowest on a visibly busy machine), loadTable 0.55–0.59×, large PUT",
        "  0.74–1.10× (0.74 unpaired, during a disk slowdown; 1.10 with the disk slow for both).",
        "",
    ]
    out = ROOT / "docs" / "benchmarks.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()

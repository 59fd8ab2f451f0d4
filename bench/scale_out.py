#!/usr/bin/env python3
"""Replica mode against the embedded node, same client (tm-load), same run, every server
on the S3 backend (one SeaweedFS) so only the metastore and the replica count differ:

- loadTable (100 snapshots, 16 clients) and commits (16 clients, each committing a
  property change to a table of its own) on one SQLite node,
- the same on one replica over PostgreSQL, and on two replicas behind haproxy;
- /healthz (one metastore ping per request: on PostgreSQL one round trip, the floor of
  any request that reads the database exactly) on the PostgreSQL replica.

The SQLite node is the reference; each figure alternates with it five times and the round
with the median ratio is reported. On 2 cores the database, SeaweedFS, haproxy, both
replicas and the load generator share the machine: two replicas cannot show scaling here.

  bench/scale_out.py [--quick] [--one-replica]   (--one-replica: leave out the two)
"""

import json
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
import seaweed  # noqa: E402
from catalog_fixture import create_tables, signed_up_catalog  # noqa: E402
from conftest import Server  # noqa: E402
from measure import load, paired  # noqa: E402
from replicas import Deployment  # noqa: E402

QUICK = "--quick" in sys.argv
ONE_REPLICA = "--one-replica" in sys.argv
SECONDS = "2" if QUICK else "4"
ROUNDS = 3 if QUICK else 5
CLIENTS = 16
COMMIT = json.dumps({"requirements": [], "updates": [
    {"action": "set-properties", "updates": {"bench": "x"}}]})


def targets(server):
    """(loadTable URL, commit URL with {w}, token) of a new account's catalog on `server`."""
    base, headers, prefix, token = signed_up_catalog(server)
    create_tables(base, headers, prefix, tables=CLIENTS)
    return (base + "/namespaces/b/tables/t0?snapshots=all",
            base + "/namespaces/b/tables/t{w}", token)


def main():
    body = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    body.write(COMMIT)
    body.close()
    sqlite_node = Server(object_store="s3", metastore="sqlite")
    servers = {"sqlite": sqlite_node}
    one = servers["postgres_1"] = Server(object_store="s3", metastore="postgres")
    two = None if ONE_REPLICA else Deployment(replicas=2)
    try:
        shapes = {"sqlite": targets(sqlite_node), "postgres_1": targets(one)}
        if two:
            shapes["postgres_2_haproxy"] = targets(two)

        def load_table(shape):
            url, _, token = shapes[shape]
            return lambda _i: load("http", "GET", url, CLIENTS, SECONDS, "--bearer",
                                   token)["ops_per_s"]

        def commits(shape):
            _, url, token = shapes[shape]

            def run(_i):
                r = load("http", "POST", url, CLIENTS, SECONDS, "--bearer", token,
                         "--body-file", body.name)
                assert r["errors"] == 0, r
                return r["ops_per_s"]
            return run

        def healthz(shape):
            url = servers[shape].api + "/healthz"
            return lambda _i: load("http", "GET", url, CLIENTS, SECONDS)["ops_per_s"]

        results = {"healthz_postgres_1": paired(healthz("postgres_1"), healthz("sqlite"),
                                                ROUNDS)}
        for shape in [s for s in shapes if s != "sqlite"]:
            results["load_table_" + shape] = paired(load_table(shape), load_table("sqlite"),
                                                    ROUNDS)
            results["commits_" + shape] = paired(commits(shape), commits("sqlite"), ROUNDS)
        print(json.dumps(results, indent=2))
    finally:
        sqlite_node.cleanup()
        one.cleanup()
        if two:
            two.cleanup()
        seaweed.stop_shared()
        import postgres
        postgres.stop_shared()


if __name__ == "__main__":
    main()

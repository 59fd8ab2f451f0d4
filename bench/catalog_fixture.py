"""The catalog state the loadTable benchmarks share: namespace "b" with tables t0…t{n-1},
and t0 carrying `snapshots` snapshots (each an append), so a loadTable answer is ~47 KB."""

import time

import requests

SCHEMA = {"type": "struct", "schema-id": 0,
          "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}


def create_tables(base, headers, prefix, tables=1, snapshots=100):
    requests.post(base + "/namespaces", json={"namespace": ["b"]}, headers=headers).raise_for_status()
    for i in range(tables):
        requests.post(base + "/namespaces/b/tables", json={"name": f"t{i}", "schema": SCHEMA},
                      headers=headers).raise_for_status()
    parent = None
    for n in range(snapshots):
        sid = 1000 + n
        snap = {"snapshot-id": sid, "sequence-number": n + 1, "timestamp-ms": int(time.time() * 1000),
                "manifest-list": f"s3://{prefix}/b/t0/metadata/snap-{sid}.avro",
                "summary": {"operation": "append"}, "schema-id": 0}
        if parent:
            snap["parent-snapshot-id"] = parent
        body = {"requirements": [], "updates": [
            {"action": "add-snapshot", "snapshot": snap},
            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": sid}]}
        requests.post(base + "/namespaces/b/tables/t0", json=body, headers=headers).raise_for_status()
        parent = sid


def signed_up_catalog(server):
    """A new account's catalog: (base URL of its warehouse, auth headers, prefix, token)."""
    from conftest import catalog_token

    account = server.signup()
    cred = account["connection"]["catalog_credential"]
    token = catalog_token(server, cred["client_id"], cred["client_secret"])
    prefix = account["connection"]["warehouse_name"]
    return (f"{server.catalog}/v1/{prefix}", {"Authorization": "Bearer " + token}, prefix, token)

"""GET /metrics: the Prometheus text format, parsed by the Prometheus project's own
Python parser; requests per listener and route class, latencies, errors, bytes per
bucket, commits, vended sessions and the task queue; and --metrics-addr moving the page
off the API listener."""

import json
import os

import pyarrow as pa
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import Server
from engines import pyiceberg_from_recipe


def scrape(url):
    r = requests.get(url)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0)


def test_metrics_count_requests_commits_sessions_and_bucket_bytes(server):
    before = scrape(server.api + "/metrics")
    account = server.signup(engine="pyiceberg")
    catalog = pyiceberg_from_recipe(account["connection"])
    catalog.create_namespace("m")
    data = pa.table({"id": pa.array(list(range(1000)), pa.int64())})
    table = catalog.create_table(("m", "t"), schema=data.schema)
    table.append(data)
    table.append(data)
    assert table.scan().to_arrow().num_rows == 2000
    requests.get(server.api + "/v1/warehouses/not-a-real-id/grants")  # a 401
    after = scrape(server.api + "/metrics")

    def grew(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("tablemere_requests_total", listener="api", route="v1/signup", code="2xx") == 1
    assert grew("tablemere_requests_total", listener="api", route="v1/warehouses/grants",
                code="4xx") == 1
    assert grew("tablemere_requests_total", listener="catalog", route="tables", code="2xx") >= 2
    assert grew("tablemere_request_duration_seconds_count", listener="api",
                route="v1/signup") == 1
    assert grew("tablemere_commits_total") >= 2  # the two appends
    assert grew("tablemere_vended_sessions_total") >= 1
    bucket = "w-" + account["warehouse_id"]
    assert grew("tablemere_bucket_bytes_in_total", bucket=bucket) > 1000
    assert grew("tablemere_bucket_bytes_out_total", bucket=bucket) > 0
    assert grew("tablemere_bucket_requests_total", bucket=bucket) >= 3
    assert ("tablemere_task_queue_depth", ()) in after
    # No label carries an id or a name: only route classes and bucket names.
    for (name, labels) in after:
        for k, v in labels:
            assert account["warehouse_id"] not in v or k == "bucket", (name, labels)


def test_metrics_addr_moves_the_page_off_the_api():
    s = Server(args=["--metrics-addr", "127.0.0.1:0"])
    try:
        ready = json.load(open(os.path.join(s.data_dir, "ready.json")))
        assert not ready["metrics"].startswith(s.api)
        assert requests.get(s.api + "/metrics").status_code == 404
        requests.get(s.api + "/healthz")
        samples = scrape(ready["metrics"])
        assert value(samples, "tablemere_requests_total", listener="api", route="healthz",
                     code="2xx") >= 1
    finally:
        s.cleanup()

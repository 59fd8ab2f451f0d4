"""Replica mode for tests: any number of tablemere-server processes over one PostgreSQL
database (tests/postgres.py) and one SeaweedFS prefix (tests/seaweed.py), behind a real
haproxy (Debian's) that balances the three listeners round-robin and health-checks each
replica on /healthz (which pings the metastore)."""

import os
import shutil
import subprocess
import tempfile
import time

import requests

import postgres
from ports import reserved_port
from conftest import Server


class Deployment:
    LISTENERS = ("api", "catalog", "s3")

    def __init__(self, replicas=2, extra_env=None):
        self.dir = tempfile.mkdtemp(prefix="tm-replicas-")
        self.ports = {name: reserved_port() for name in self.LISTENERS}
        self.url = {name: f"http://127.0.0.1:{port}" for name, port in self.ports.items()}
        # What engines are told: the balancer, never one replica.
        public = ["--public-api-url", self.url["api"], "--public-catalog-url",
                  self.url["catalog"], "--public-s3-url", self.url["s3"]]
        # A cluster of its own: the fault tests stop and start it.
        self.cluster = postgres.PostgresCluster()
        self.public = public
        first = Server(extra_env=extra_env, args=public, object_store="s3", metastore="postgres",
                       cluster=self.cluster)
        self.replicas = [first]
        self.haproxy = None
        try:
            for _ in range(replicas - 1):
                self.add_replica(extra_env)
            self._start_haproxy()
        except BaseException:
            self.cleanup()  # nothing left running when the deployment cannot start
            raise
        # Through the balancer the way clients see it.
        self.api, self.catalog, self.s3 = (self.url[n] for n in self.LISTENERS)

    def add_replica(self, extra_env=None):
        """Starts one more replica over the same database, objects and master key (the
        balancer, if already running, does not send to it: reach it directly)."""
        first = self.replicas[0]
        replica = Server(extra_env=extra_env, args=self.public, object_store="s3",
                         metastore="postgres", database=first.database,
                         master_key_file=first.master_key_file, store_root=first.store_root,
                         cluster=self.cluster)
        self.replicas.append(replica)
        return replica

    def _config(self):
        lines = ["global", "  maxconn 2000", "defaults", "  mode http",
                 "  timeout connect 5s", "  timeout client 120s", "  timeout server 120s",
                 "  timeout check 3s"]
        for name in self.LISTENERS:
            lines += [f"frontend {name}", f"  bind 127.0.0.1:{self.ports[name]}",
                      f"  default_backend {name}_replicas",
                      f"backend {name}_replicas", "  balance roundrobin"]
            if name == "api":
                lines += ["  option httpchk GET /healthz", "  http-check expect status 200"]
            for i, r in enumerate(self.replicas):
                address = getattr(r, name).removeprefix("http://")
                # The API listener's health stands for its replica's other listeners too.
                check = ("check inter 500ms fall 2 rise 1" if name == "api"
                         else f"track api_replicas/r{i}")
                lines.append(f"  server r{i} {address} {check}")
        return "\n".join(lines) + "\n"

    def _start_haproxy(self):
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not os.path.exists(haproxy):
            raise RuntimeError("haproxy not found: apt install haproxy")
        cfg = os.path.join(self.dir, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(self._config())
        self.haproxy_log = open(os.path.join(self.dir, "haproxy.log"), "w")
        self.haproxy = subprocess.Popen([haproxy, "-f", cfg, "-db"], stdout=self.haproxy_log,
                                        stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while True:
            try:
                if requests.get(self.url["api"] + "/healthz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.haproxy.poll() is not None or time.time() > deadline:
                raise RuntimeError("haproxy did not start: " + open(self.haproxy_log.name).read())
            time.sleep(0.1)

    def signup(self, **kw):
        return self.replicas[0].signup(**kw)

    def connection(self, api_key, engine="duckdb", warehouse_id=None):
        return self.replicas[1].connection(api_key, engine, warehouse_id)

    def cleanup(self):
        if self.haproxy and self.haproxy.poll() is None:
            self.haproxy.terminate()
            self.haproxy.wait(timeout=10)
            self.haproxy_log.close()
        for r in self.replicas:
            r.cleanup()
        self.cluster.destroy()
        shutil.rmtree(self.dir, ignore_errors=True)

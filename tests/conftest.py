"""Black-box test harness: starts a real tablemere-server on port 0 with a temporary
data directory and hands its URLs to the tests. Nothing here is mocked."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import uuid

import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parent.parent
SERVER_BIN = pathlib.Path(os.environ.get("TABLEMERE_SERVER", ROOT / "build" / "bin" / "tablemere-server"))

OPERATORS = {"operator1": "operator1-secret-key", "operator2": "operator2-secret-key"}

# Where the servers the tests start keep their objects: "local" (their data directory) or
# "s3" (a shared SeaweedFS, each server under its own root prefix). `pytest
# --object-store s3` or TABLEMERE_TEST_OBJECT_STORE=s3 runs the suite on the S3 backend.
OBJECT_STORE = {"mode": os.environ.get("TABLEMERE_TEST_OBJECT_STORE", "local")}
# Where they keep their state: "sqlite" (their data directory) or "postgres" (a database
# of their own on a shared throwaway cluster). `pytest --metastore postgres` or
# TABLEMERE_TEST_METASTORE=postgres.
METASTORE = {"mode": os.environ.get("TABLEMERE_TEST_METASTORE", "sqlite")}


def pytest_addoption(parser):
    parser.addoption("--object-store", choices=("local", "s3"), default=None,
                     help="the object store of every test server (default local)")
    parser.addoption("--metastore", choices=("sqlite", "postgres"), default=None,
                     help="the metastore of every test server (default sqlite)")


def pytest_configure(config):
    if config.getoption("--object-store"):
        OBJECT_STORE["mode"] = config.getoption("--object-store")
    if config.getoption("--metastore"):
        METASTORE["mode"] = config.getoption("--metastore")


def pytest_sessionfinish(session):
    import seaweed
    seaweed.stop_shared()
    import postgres
    postgres.stop_shared()


class Server:
    """A running tablemere-server process."""

    def __init__(self, extra_env=None, args=(), object_store=None, backend=None,
                 metastore=None, database=None, master_key_file=None, store_root=None,
                 cluster=None, home=None):
        """`database`, `master_key_file` and `store_root` make this server a replica of
        another: the same PostgreSQL database, master key and S3 prefix. `home` is a directory
        whose `data` the server uses (a restored one, say) instead of a new one."""
        self.data_dir = home or tempfile.mkdtemp(prefix="tm-test-")
        self.ready_file = os.path.join(self.data_dir, "ready.json")
        self.env = dict(os.environ)
        self.env["TABLEMERE_S3_USERS"] = ",".join(f"{k}:{v}" for k, v in OPERATORS.items())
        self.object_store = object_store or OBJECT_STORE["mode"]
        store_args = []
        if self.object_store == "s3":
            import seaweed
            self.backend = backend or seaweed.shared()
            self.store_root = store_root or "srv-" + uuid.uuid4().hex[:12]
            store_args, store_env = self.backend.server_args(self.store_root)
            self.env.update(store_env)
        self.metastore = metastore or METASTORE["mode"]
        if self.metastore == "postgres":
            import postgres
            self.cluster = cluster or postgres.shared()
            self.database = database or self.cluster.create_database()
            self.master_key_file = master_key_file or os.path.join(self.data_dir, "master.key")
            if not os.path.exists(self.master_key_file):
                with open(self.master_key_file, "w") as f:
                    f.write(os.urandom(32).hex() + "\n")
            store_args = [*store_args, "--metastore", self.cluster.conninfo(self.database),
                          "--master-key-file", self.master_key_file]
        self.env.update(extra_env or {})
        self.cmd = [
            str(SERVER_BIN),
            "--data-dir", os.path.join(self.data_dir, "data"),
            "--api-addr", "127.0.0.1:0",
            "--catalog-addr", "127.0.0.1:0",
            "--s3-addr", "127.0.0.1:0",
            "--ready-file", self.ready_file,
            *store_args,
            *args,
        ]
        self.starts = 0
        self._launch()

    def _launch(self):
        self.starts += 1
        self.log_path = os.path.join(self.data_dir, f"server-{self.starts}.log")
        self.log = open(self.log_path, "w")
        if os.path.exists(self.ready_file):
            os.remove(self.ready_file)
        self.proc = subprocess.Popen(self.cmd, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while not os.path.exists(self.ready_file):
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + open(self.log_path).read())
            if time.time() > deadline:
                raise RuntimeError("server did not become ready")
            time.sleep(0.02)
        urls = json.load(open(self.ready_file))
        # This process itself, even when it tells clients a balancer's URLs.
        bound = urls["bound"]
        self.api, self.catalog, self.s3 = bound["api"], bound["catalog"], bound["s3"]

    def max_key_bytes(self, bucket):
        """The longest key this server stores in `bucket`: 1024, less the S3 backend's prefix."""
        if self.object_store != "s3":
            return 1024
        return 1024 - len(f"{self.store_root}/{bucket}/")

    @property
    def keeps_odd_keys(self):
        """Whether keys with empty or dot segments round-trip (not on a filer-backed store)."""
        return self.object_store != "s3"

    def restart(self):
        """Starts a new process over the same data directory (after stop() or a kill)."""
        self.stop()
        self._launch()

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def signup(self, engine="duckdb", email=None, workspace=None):
        email = email or f"user-{uuid.uuid4().hex[:10]}@example.com"
        r = requests.post(self.api + "/v1/signup", json={
            "email": email, "workspace": workspace or "ws-" + uuid.uuid4().hex[:6],
            "engine": engine, "accept_terms": True})
        assert r.status_code == 201, r.text
        return r.json()

    def connection(self, api_key, engine="duckdb", warehouse_id=None):
        params = {"engine": engine}
        if warehouse_id:
            params["warehouse_id"] = warehouse_id
        r = requests.get(self.api + "/v1/connection", params=params,
                         headers={"Authorization": "Bearer " + api_key})
        assert r.status_code == 200, r.text
        return r.json()


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    s.cleanup()


@pytest.fixture(scope="session")
def account(server):
    """One signed-up account with its default warehouse `lake`."""
    return server.signup()


def catalog_token(server, client_id, client_secret):
    r = requests.post(server.catalog + "/v1/oauth/tokens",
                      data={"grant_type": "client_credentials", "client_id": client_id,
                            "client_secret": client_secret, "scope": "catalog"})
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


BOOTSTRAP_SECRET = "test-bootstrap-secret"  # a test server on loopback


@pytest.fixture(scope="module")
def clocked_server():
    """A server of the module's own with the operator routes on (BOOTSTRAP_SECRET) and a
    clock the tests move forward (advance_clock), so expiry and rate-limit windows are
    tested without sleeping and without disturbing the shared server."""
    s = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                          "TABLEMERE_TEST_CLOCK": "1"})
    yield s
    s.cleanup()


def advance_clock(server, seconds):
    r = requests.post(server.api + "/internal/clock",
                      headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"advance_seconds": seconds})
    assert r.status_code == 200, r.text


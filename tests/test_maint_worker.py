"""The maintenance worker's position delete jobs (tablemere-maint rewrite-deletes and
translate-deletes), run on Parquet files pyarrow writes and read back with pyarrow: which
rows are kept, where they are re-aimed, their order, and what a bad plan gets."""

import json
import os
import pathlib
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

MAINT = pathlib.Path(os.environ.get(
    "TABLEMERE_MAINT", pathlib.Path(__file__).resolve().parent.parent / "build" / "bin" / "tablemere-maint"))


def deletes(path, rows):
    pq.write_table(pa.table({"file_path": pa.array([r[0] for r in rows], pa.string()),
                             "pos": pa.array([r[1] for r in rows], pa.int64())}), path)


def run(tmp_path, job, plan):
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    r = subprocess.run([str(MAINT), job, "--plan", str(tmp_path / "plan.json"),
                        "--result", str(tmp_path / "result.json")],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None, r.stderr
    return json.loads((tmp_path / "result.json").read_text()), r.stderr


def rows_of(path):
    return [(r["file_path"], r["pos"]) for r in pq.read_table(path).to_pylist()]


def test_merging_keeps_rows_for_live_files_no_newer_than_their_delete_sorted_once(tmp_path):
    deletes(tmp_path / "d1.parquet", [("s3://b/a.parquet", 5), ("s3://b/a.parquet", 1),
                                      ("s3://b/gone.parquet", 3)])
    deletes(tmp_path / "d2.parquet", [("s3a://b/c.parquet", 2), ("s3://b/a.parquet", 1),
                                      ("s3://b/newer.parquet", 0)])
    out = tmp_path / "out.parquet"
    result, err = run(tmp_path, "rewrite-deletes", {
        "inputs": [{"path": str(tmp_path / "d1.parquet"), "sequence": 3},
                   {"path": str(tmp_path / "d2.parquet"), "sequence": 4}],
        # newer.parquet was added after d2 (sequence 5): d2 never applied to it.
        "live": [{"path": "s3://b/a.parquet", "sequence": 1},
                 {"path": "s3://b/c.parquet", "sequence": 2},
                 {"path": "s3://b/newer.parquet", "sequence": 5}],
        "output": str(out)})
    assert result, err
    assert rows_of(out) == [("s3://b/a.parquet", 1), ("s3://b/a.parquet", 5),
                            ("s3a://b/c.parquet", 2)]
    assert result["record_count"] == 3 and result["rows_read"] == 6
    assert result["rows_dropped"] == 3 and result["referenced_data_files"] == 2
    schema = pq.read_schema(out)
    assert schema.field("file_path").metadata[b"PARQUET:field_id"] == b"2147483546"
    assert schema.field("pos").metadata[b"PARQUET:field_id"] == b"2147483545"
    assert not schema.field("file_path").nullable
    # Exact path bounds (readers match delete files to data files by them).
    assert bytes.fromhex(result["lower_bounds"]["2147483546"]) == b"s3://b/a.parquet"
    assert bytes.fromhex(result["upper_bounds"]["2147483546"]) == b"s3a://b/c.parquet"


def test_translation_re_aims_rows_of_moved_files_and_leaves_out_rows_already_deleted(tmp_path):
    deletes(tmp_path / "in.parquet", [("s3://b/x.parquet", 0), ("s3://b/x.parquet", 3),
                                      ("s3://b/x.parquet", 5), ("s3://b/x.parquet", 9),
                                      ("s3://b/other.parquet", 7)])
    moves = {"s3a://b/x.parquet": {"to": "s3://b/c.parquet", "offset": 100, "rows": 10,
                                   "dropped": [5, 2]}}
    out = tmp_path / "out.parquet"
    result, err = run(tmp_path, "translate-deletes",
                      {"input": str(tmp_path / "in.parquet"), "moves": moves, "output": str(out)})
    assert result, err
    # x's row 0 is c's row 100; row 3 follows one dropped row (2): 102; row 5 was deleted
    # by the compaction already; row 9 follows two: 107.
    assert rows_of(out) == [("s3://b/c.parquet", 100), ("s3://b/c.parquet", 102),
                            ("s3://b/c.parquet", 107), ("s3://b/other.parquet", 7)]
    assert (result["rows_read"], result["rows_moved"], result["rows_dropped"]) == (5, 3, 1)
    assert "referenced_data_file" not in result

    # A copy-on-write removal of x: every row it still had, at its new place.
    result, err = run(tmp_path, "translate-deletes",
                      {"removed_files": ["s3://b/x.parquet"], "moves": moves, "output": str(out)})
    assert result, err
    assert rows_of(out) == [("s3://b/c.parquet", p) for p in range(100, 108)]
    assert result["referenced_data_file"] == "s3://b/c.parquet"


@pytest.mark.parametrize("plan, message", [
    ({"input": "in.parquet", "moves": {"s3://b/x.parquet": {"to": "s3://b/c.parquet", "offset": 0,
                                                            "rows": 4, "dropped": []}}},
     "has no row 9"),
    ({"removed_files": ["s3://b/never-moved.parquet"], "moves": {}}, "was not moved"),
    ({"moves": {}}, "an input or removed files"),
])
def test_a_translation_that_cannot_be_right_fails_and_writes_nothing(tmp_path, plan, message):
    deletes(tmp_path / "in.parquet", [("s3://b/x.parquet", 9)])
    plan = dict(plan, output=str(tmp_path / "out.parquet"))
    if "input" in plan:
        plan["input"] = str(tmp_path / plan["input"])
    result, err = run(tmp_path, "translate-deletes", plan)
    assert result is None and message in err, err
    assert not (tmp_path / "out.parquet").exists()
    assert not (tmp_path / "out.parquet.partial").exists()

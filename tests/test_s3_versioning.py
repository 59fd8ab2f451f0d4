"""S3 versioning on operator users' buckets and warehouses' blob buckets, through boto3 and
raw requests: version ids on every write, reads and deletes by versionId, delete markers,
the null version of unversioned and suspended buckets, ListObjectVersions and its pages,
DeleteObjects with versions, conditional writes, copies and multipart uploads as
versions, bucket deletion, and a server killed between the steps of a versioned write."""

import hashlib

import pytest
import requests

from test_s3 import (MIB, OP1, assert_s3_error, object_url, s3_error, signed_send, uniq,
                     xml_error_code)
from test_s3 import lake, op1, op2  # noqa: F401 (fixtures)


def versioned(s3, status="Enabled"):
    bucket = uniq("ver")
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})
    return bucket


def body(s3, bucket, key, **kw):
    return s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()


def all_versions(s3, bucket, **kw):
    """Every version and delete marker, as (key, version id, latest, marker), page by page
    of two."""
    out, kw = [], dict(kw)
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=2, **kw)
        entries = [(v["Key"], v["VersionId"], v["IsLatest"], False, v["LastModified"])
                   for v in page.get("Versions", [])]
        entries += [(m["Key"], m["VersionId"], m["IsLatest"], True, m["LastModified"])
                    for m in page.get("DeleteMarkers", [])]
        # One page holds versions and markers apart; S3 orders them together by key and age.
        entries.sort(key=lambda e: (e[0], -e[4].timestamp()))
        out += [e[:4] for e in entries]
        if not page["IsTruncated"]:
            return out
        kw["KeyMarker"] = page["NextKeyMarker"]
        kw["VersionIdMarker"] = page.get("NextVersionIdMarker", "")


def test_a_bucket_starts_without_versioning_and_keeps_what_it_is_set_to(op1, server):
    bucket = uniq("ver")
    op1.create_bucket(Bucket=bucket)
    assert "Status" not in op1.get_bucket_versioning(Bucket=bucket)
    op1.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    assert op1.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    op1.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert op1.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    # A status that is neither, or MFA delete, changes nothing.
    status, _, answer = signed_send(
        "PUT", object_url(server, bucket, query="versioning="), OP1,
        b"<VersioningConfiguration><Status>Sometimes</Status></VersioningConfiguration>")
    assert status == 400 and xml_error_code(answer) == "MalformedXML"
    code, status, _ = s3_error(op1.put_bucket_versioning, Bucket=bucket,
                               VersioningConfiguration={"Status": "Enabled", "MFADelete": "Enabled"})
    assert (code, status) == ("NotImplemented", 501)
    assert op1.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"


def test_every_write_is_a_version_and_each_reads_back(op1):
    bucket = versioned(op1)
    v1 = op1.put_object(Bucket=bucket, Key="doc", Body=b"one")["VersionId"]
    v2 = op1.put_object(Bucket=bucket, Key="doc", Body=b"two")["VersionId"]
    assert v1 != v2 and len(v1) == 32
    assert body(op1, bucket, "doc") == b"two"
    head = op1.head_object(Bucket=bucket, Key="doc")
    assert head["VersionId"] == v2
    old = op1.get_object(Bucket=bucket, Key="doc", VersionId=v1)
    assert old["Body"].read() == b"one" and old["VersionId"] == v1
    assert old["ETag"] == '"%s"' % hashlib.md5(b"one").hexdigest()
    assert op1.head_object(Bucket=bucket, Key="doc", VersionId=v1)["ContentLength"] == 3
    assert all_versions(op1, bucket) == [("doc", v2, True, False), ("doc", v1, False, False)]
    # The plain listing shows the current object only, and no kept copy.
    listed = op1.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [("doc", 3)]
    delimited = op1.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [o["Key"] for o in delimited["Contents"]] == ["doc"]
    assert "CommonPrefixes" not in delimited
    # Kept copies cannot be reached by their storage keys.
    code, status, _ = s3_error(op1.list_objects_v2, Bucket=bucket, Prefix=".tablemere-versions/")
    assert (code, status) == ("InvalidArgument", 400)
    # Unknown and malformed version ids.
    assert_s3_error("NoSuchVersion", 404, op1.get_object, Bucket=bucket, Key="doc",
                    VersionId="0" * 32)
    assert_s3_error("InvalidArgument", 400, op1.get_object, Bucket=bucket, Key="doc",
                    VersionId="not-a-version")


def test_a_delete_leaves_a_marker_which_a_versioned_delete_takes_back(op1, server):
    bucket = versioned(op1)
    v1 = op1.put_object(Bucket=bucket, Key="k", Body=b"kept")["VersionId"]
    gone = op1.delete_object(Bucket=bucket, Key="k")
    assert gone["DeleteMarker"] is True
    marker = gone["VersionId"]
    # The key reads as deleted, and says it is a delete marker.
    status, headers, _ = signed_send("GET", object_url(server, bucket, "k"), OP1)
    assert status == 404
    assert headers["x-amz-delete-marker"] == "true" and headers["x-amz-version-id"] == marker
    status, headers, answer = signed_send("GET", object_url(server, bucket, "k",
                                                            query=f"versionId={marker}"), OP1)
    assert status == 405 and xml_error_code(answer) == "MethodNotAllowed"
    assert headers["x-amz-delete-marker"] == "true"
    assert op1.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    assert all_versions(op1, bucket) == [("k", marker, True, True), ("k", v1, False, False)]
    assert body(op1, bucket, "k", VersionId=v1) == b"kept"
    # Deleting the marker brings the object back.
    undone = op1.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert undone["DeleteMarker"] is True and undone["VersionId"] == marker
    assert body(op1, bucket, "k") == b"kept"
    assert op1.head_object(Bucket=bucket, Key="k")["VersionId"] == v1
    assert all_versions(op1, bucket) == [("k", v1, True, False)]


def test_deleting_the_current_version_makes_the_one_before_current(op1):
    bucket = versioned(op1)
    v1 = op1.put_object(Bucket=bucket, Key="k", Body=b"1")["VersionId"]
    v2 = op1.put_object(Bucket=bucket, Key="k", Body=b"22")["VersionId"]
    v3 = op1.put_object(Bucket=bucket, Key="k", Body=b"333")["VersionId"]
    r = op1.delete_object(Bucket=bucket, Key="k", VersionId=v3)
    assert r["VersionId"] == v3 and "DeleteMarker" not in r
    assert body(op1, bucket, "k") == b"22"
    assert op1.head_object(Bucket=bucket, Key="k")["VersionId"] == v2
    # A noncurrent version goes without touching the current one.
    op1.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    assert all_versions(op1, bucket) == [("k", v2, True, False)]
    assert_s3_error("NoSuchVersion", 404, op1.get_object, Bucket=bucket, Key="k", VersionId=v1)
    # Deleting a version that is gone already is not an error.
    op1.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    op1.delete_object(Bucket=bucket, Key="k", VersionId=v2)
    assert all_versions(op1, bucket) == []
    assert_s3_error("NoSuchKey", 404, op1.get_object, Bucket=bucket, Key="k")


def test_the_null_version_of_an_unversioned_and_a_suspended_bucket(op1):
    bucket = uniq("ver")
    op1.create_bucket(Bucket=bucket)
    op1.put_object(Bucket=bucket, Key="k", Body=b"before")
    # Without versioning only the null version exists.
    assert body(op1, bucket, "k", VersionId="null") == b"before"
    assert_s3_error("InvalidArgument", 400, op1.get_object, Bucket=bucket, Key="k",
                    VersionId="0" * 32)
    op1.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = op1.put_object(Bucket=bucket, Key="k", Body=b"enabled")["VersionId"]
    assert all_versions(op1, bucket) == [("k", v1, True, False), ("k", "null", False, False)]
    assert body(op1, bucket, "k", VersionId="null") == b"before"

    op1.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    r = op1.put_object(Bucket=bucket, Key="k", Body=b"suspended")
    assert r["VersionId"] == "null"
    # The write replaced the earlier null version and kept the enabled one.
    assert all_versions(op1, bucket) == [("k", "null", True, False), ("k", v1, False, False)]
    op1.put_object(Bucket=bucket, Key="k", Body=b"again")
    assert all_versions(op1, bucket) == [("k", "null", True, False), ("k", v1, False, False)]
    assert body(op1, bucket, "k", VersionId="null") == b"again"
    # A suspended bucket's delete marker is the null version.
    r = op1.delete_object(Bucket=bucket, Key="k")
    assert r["DeleteMarker"] is True and r["VersionId"] == "null"
    assert all_versions(op1, bucket) == [("k", "null", True, True), ("k", v1, False, False)]
    assert body(op1, bucket, "k", VersionId=v1) == b"enabled"


def test_copies_and_multipart_uploads_are_versions(op1):
    bucket = versioned(op1)
    v1 = op1.put_object(Bucket=bucket, Key="src", Body=b"first",
                        Metadata={"who": "one"})["VersionId"]
    op1.put_object(Bucket=bucket, Key="src", Body=b"second")
    # A copy of an older version, and a copy of it onto its own key restores it.
    r = op1.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src",
                                                              "VersionId": v1})
    assert r["CopySourceVersionId"] == v1 and len(r["VersionId"]) == 32
    assert body(op1, bucket, "dst") == b"first"
    assert op1.head_object(Bucket=bucket, Key="dst")["Metadata"] == {"who": "one"}
    restored = op1.copy_object(Bucket=bucket, Key="src",
                               CopySource={"Bucket": bucket, "Key": "src", "VersionId": v1})
    assert body(op1, bucket, "src") == b"first"
    keys = [(k, latest) for k, _, latest, _ in all_versions(op1, bucket, Prefix="src")]
    assert keys == [("src", True), ("src", False), ("src", False)]

    up = op1.create_multipart_upload(Bucket=bucket, Key="src")
    parts = []
    for n, data in enumerate([b"a" * (5 * MIB), b"tail"], 1):
        e = op1.upload_part(Bucket=bucket, Key="src", UploadId=up["UploadId"], PartNumber=n,
                            Body=data)["ETag"]
        parts.append({"PartNumber": n, "ETag": e})
    done = op1.complete_multipart_upload(Bucket=bucket, Key="src", UploadId=up["UploadId"],
                                         MultipartUpload={"Parts": parts})
    assert len(done["VersionId"]) == 32
    assert op1.head_object(Bucket=bucket, Key="src")["ContentLength"] == 5 * MIB + 4
    assert body(op1, bucket, "src", VersionId=restored["VersionId"]) == b"first"
    assert len(all_versions(op1, bucket, Prefix="src")) == 4


def test_delete_objects_with_versions(op1):
    bucket = versioned(op1)
    a1 = op1.put_object(Bucket=bucket, Key="a", Body=b"a1")["VersionId"]
    a2 = op1.put_object(Bucket=bucket, Key="a", Body=b"a2")["VersionId"]
    op1.put_object(Bucket=bucket, Key="b", Body=b"b")
    r = op1.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "a", "VersionId": a1}, {"Key": "b"}, {"Key": "a", "VersionId": "bogus"}]})
    deleted = {(d["Key"], d.get("VersionId")): d for d in r["Deleted"]}
    assert ("a", a1) in deleted and "DeleteMarker" not in deleted[("a", a1)]
    assert deleted[("b", None)]["DeleteMarker"] is True
    marker = deleted[("b", None)]["DeleteMarkerVersionId"]
    assert [(e["Key"], e["VersionId"], e["Code"]) for e in r["Errors"]] == [
        ("a", "bogus", "InvalidArgument")]
    assert all_versions(op1, bucket) == [("a", a2, True, False), ("b", marker, True, True),
                                         ("b", all_versions(op1, bucket)[2][1], False, False)]
    # Removing the marker in a batch brings b back.
    op1.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b", "VersionId": marker}],
                                              "Quiet": True})
    assert body(op1, bucket, "b") == b"b"


def test_listing_versions_pages_through_prefixes_and_delimiters(op1):
    bucket = versioned(op1)
    expected = []
    for key in ("a/1", "a/2", "b", "c/d/e"):
        ids = [op1.put_object(Bucket=bucket, Key=key, Body=key.encode() * n)["VersionId"]
               for n in (1, 2, 3)]
        expected += [(key, i, n == 0, False) for n, i in enumerate(reversed(ids))]
    marker = op1.delete_object(Bucket=bucket, Key="b")["VersionId"]
    at = expected.index(("b", ids_of(expected, "b")[0], True, False))
    expected[at] = (expected[at][0], expected[at][1], False, False)
    expected.insert(at, ("b", marker, True, True))
    assert all_versions(op1, bucket) == expected
    assert all_versions(op1, bucket, Prefix="a/") == [e for e in expected if e[0].startswith("a/")]
    page = op1.list_object_versions(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["a/", "c/"]
    assert {v["Key"] for v in page["Versions"]} == {"b"}
    # Pages of one, with the delimiter: each common prefix once, every b version once.
    seen, kw = [], {}
    while True:
        page = op1.list_object_versions(Bucket=bucket, Delimiter="/", MaxKeys=1, **kw)
        seen += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        seen += [v["VersionId"] for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        if not page["IsTruncated"]:
            break
        kw = {"KeyMarker": page["NextKeyMarker"],
              "VersionIdMarker": page.get("NextVersionIdMarker", "")}
    assert seen == ["a/", marker, *ids_of(expected, "b")[:3], "c/"][:len(seen)]
    assert seen[0] == "a/" and seen[-1] == "c/" and len(seen) == 6


def ids_of(entries, key):
    return [e[1] for e in entries if e[0] == key and not e[3]]


def test_conditional_writes_hold_against_the_current_version(op1):
    bucket = versioned(op1)
    first = op1.put_object(Bucket=bucket, Key="k", Body=b"1")
    assert_s3_error("PreconditionFailed", 412, op1.put_object, Bucket=bucket, Key="k", Body=b"x",
                    IfNoneMatch="*")
    assert_s3_error("PreconditionFailed", 412, op1.put_object, Bucket=bucket, Key="k", Body=b"x",
                    IfMatch='"%s"' % ("0" * 32))
    # A refused write made no version.
    assert [v[1] for v in all_versions(op1, bucket)] == [first["VersionId"]]
    second = op1.put_object(Bucket=bucket, Key="k", Body=b"2", IfMatch=first["ETag"])
    assert [v[1] for v in all_versions(op1, bucket)] == [second["VersionId"], first["VersionId"]]
    # After a delete marker the key is free for If-None-Match.
    op1.delete_object(Bucket=bucket, Key="k")
    op1.put_object(Bucket=bucket, Key="k", Body=b"3", IfNoneMatch="*")
    assert body(op1, bucket, "k") == b"3"


def test_tags_belong_to_each_version(op1):
    bucket = versioned(op1)
    v1 = op1.put_object(Bucket=bucket, Key="k", Body=b"1", Tagging="v=one")["VersionId"]
    op1.put_object(Bucket=bucket, Key="k", Body=b"2", Tagging="v=two")
    tags = op1.get_object_tagging(Bucket=bucket, Key="k", VersionId=v1)
    assert tags["TagSet"] == [{"Key": "v", "Value": "one"}] and tags["VersionId"] == v1
    op1.put_object_tagging(Bucket=bucket, Key="k", VersionId=v1,
                           Tagging={"TagSet": [{"Key": "v", "Value": "changed"}]})
    assert op1.get_object_tagging(Bucket=bucket, Key="k", VersionId=v1)["TagSet"] == [
        {"Key": "v", "Value": "changed"}]
    assert op1.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [
        {"Key": "v", "Value": "two"}]


def test_a_bucket_with_versions_or_markers_is_not_empty(op1):
    bucket = versioned(op1)
    v1 = op1.put_object(Bucket=bucket, Key="k", Body=b"1")["VersionId"]
    marker = op1.delete_object(Bucket=bucket, Key="k")["VersionId"]
    assert_s3_error("BucketNotEmpty", 409, op1.delete_bucket, Bucket=bucket)
    op1.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    # Only the marker is left, and it still counts.
    assert_s3_error("BucketNotEmpty", 409, op1.delete_bucket, Bucket=bucket)
    op1.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    op1.delete_bucket(Bucket=bucket)
    # A bucket made again under the name starts without the old one's versions.
    op1.create_bucket(Bucket=bucket)
    assert "Status" not in op1.get_bucket_versioning(Bucket=bucket)
    assert all_versions(op1, bucket) == []


def test_versioning_is_for_blob_buckets_not_table_buckets(lake, op2):
    code, status, msg = s3_error(lake.s3.put_bucket_versioning, Bucket=lake.table_bucket,
                                 VersioningConfiguration={"Status": "Enabled"})
    assert (code, status) == ("InvalidRequest", 400) and "Iceberg" in msg
    lake.s3.put_bucket_versioning(Bucket=lake.blob_bucket,
                                  VersioningConfiguration={"Status": "Enabled"})
    v1 = lake.s3.put_object(Bucket=lake.blob_bucket, Key="report.pdf", Body=b"v1")["VersionId"]
    lake.s3.put_object(Bucket=lake.blob_bucket, Key="report.pdf", Body=b"v2")
    assert body(lake.s3, lake.blob_bucket, "report.pdf", VersionId=v1) == b"v1"
    # Someone without a grant can neither change it nor read the versions.
    assert_s3_error("AccessDenied", 403, op2.put_bucket_versioning, Bucket=lake.blob_bucket,
                    VersioningConfiguration={"Status": "Suspended"})
    assert_s3_error("AccessDenied", 403, op2.list_object_versions, Bucket=lake.blob_bucket)


@pytest.mark.parametrize("point", ["s3-version-copied", "s3-version-kept"])
def test_a_server_killed_during_a_versioned_write_loses_no_acknowledged_version(point):
    """SIGKILL (a test crash point) between keeping the current version and publishing the
    new one: after a restart the acknowledged versions all read back, the unacknowledged
    write left nothing visible, and the next write keeps versioning exactly."""
    from conftest import Server
    from test_s3 import OPERATORS, v4_client
    srv = Server()
    try:
        s3 = v4_client(srv, "operator1", OPERATORS["operator1"])
        bucket = versioned(s3)
        v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
        srv.stop()
        srv.env["TABLEMERE_TEST_CRASH_AT"] = point
        srv.restart()
        s3 = v4_client(srv, "operator1", OPERATORS["operator1"])
        with pytest.raises(Exception):
            s3.put_object(Bucket=bucket, Key="k", Body=b"two")
        assert srv.proc.wait(timeout=30) == -9
        del srv.env["TABLEMERE_TEST_CRASH_AT"]
        srv.restart()
        s3 = v4_client(srv, "operator1", OPERATORS["operator1"])
        assert body(s3, bucket, "k") == b"one"
        assert s3.head_object(Bucket=bucket, Key="k")["VersionId"] == v1
        # The version kept before the kill is the current one: listed once, as current.
        assert all_versions(s3, bucket) == [("k", v1, True, False)]
        v3 = s3.put_object(Bucket=bucket, Key="k", Body=b"three")["VersionId"]
        assert body(s3, bucket, "k", VersionId=v1) == b"one"
        assert all_versions(s3, bucket) == [("k", v3, True, False), ("k", v1, False, False)]
        assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 1
    finally:
        srv.cleanup()

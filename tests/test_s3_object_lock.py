"""S3 object lock, tested as a compliance feature: buckets created with it, default
retention, GOVERNANCE and COMPLIANCE retention per version, legal holds, and every path
that removes bytes refusing a locked version — DELETE and DeleteObjects by version (the
bucket's owner included; GOVERNANCE gives way only to its owner's bypass), bucket
deletion, a warehouse's deletion (its blob bucket), versioning suspension, and object
lock refused where maintenance must delete files (table buckets). Time is moved on a
server clock to see each lock end."""

from datetime import datetime, timedelta, timezone

import pytest
import requests

from conftest import BOOTSTRAP_SECRET, Server, advance_clock
from test_s3 import (OP1, OPERATORS, assert_s3_error, object_url, s3_error, signed_send, uniq,
                     v4_client, xml_error_code)

FAR = datetime(2100, 1, 1, tzinfo=timezone.utc)
ADVANCED = [0]  # seconds the module's server clock was moved on


@pytest.fixture(scope="module")
def srv():
    """A server with a clock the tests move (retention ends without waiting). boto3 signs
    with the same moved time, as a client whose clock agrees with the server's would."""
    import botocore.auth
    real_now = botocore.auth.get_current_datetime
    botocore.auth.get_current_datetime = lambda: real_now() + timedelta(seconds=ADVANCED[0])
    s = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET,
                          "TABLEMERE_TEST_CLOCK": "1"})
    yield s
    s.cleanup()
    botocore.auth.get_current_datetime = real_now


@pytest.fixture(scope="module")
def s3(srv):
    return v4_client(srv, *OP1)


@pytest.fixture(scope="module")
def other(srv):
    return v4_client(srv, "operator2", OPERATORS["operator2"])


def locked_bucket(s3, **default):
    bucket = uniq("lock")
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    if default:
        s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": default}})
    return bucket


def advance(srv, seconds):
    advance_clock(srv, seconds)
    ADVANCED[0] += seconds


def soon(seconds=3600):
    """`seconds` from now on the server's clock."""
    return datetime.now(timezone.utc) + timedelta(seconds=ADVANCED[0] + seconds)


def test_a_bucket_created_with_object_lock_is_versioned_for_good(s3):
    bucket = locked_bucket(s3)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    conf = s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
    assert conf == {"ObjectLockEnabled": "Enabled"}
    assert_s3_error("InvalidBucketState", 409, s3.put_bucket_versioning, Bucket=bucket,
                    VersioningConfiguration={"Status": "Suspended"})
    # A bucket without it: no configuration, and it can only be added once versioned.
    plain = uniq("lock")
    s3.create_bucket(Bucket=plain)
    assert_s3_error("ObjectLockConfigurationNotFoundError", 404,
                    s3.get_object_lock_configuration, Bucket=plain)
    rule = {"ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}
    assert_s3_error("InvalidBucketState", 409, s3.put_object_lock_configuration, Bucket=plain,
                    ObjectLockConfiguration=rule)
    s3.put_bucket_versioning(Bucket=plain, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object_lock_configuration(Bucket=plain, ObjectLockConfiguration=rule)
    assert s3.get_object_lock_configuration(Bucket=plain)["ObjectLockConfiguration"] == rule


def test_a_default_retention_is_checked_and_given_to_new_versions(s3):
    bucket = locked_bucket(s3)
    for bad, code in (({"Mode": "GOVERNANCE", "Days": 1, "Years": 1}, "MalformedXML"),
                      ({"Mode": "governance", "Days": 1}, "MalformedXML"),
                      ({"Mode": "GOVERNANCE", "Days": 0}, "InvalidRetentionPeriod"),
                      ({"Mode": "COMPLIANCE", "Years": -1}, "InvalidRetentionPeriod")):
        code_got, status, _ = s3_error(s3.put_object_lock_configuration, Bucket=bucket,
                                       ObjectLockConfiguration={
                                           "ObjectLockEnabled": "Enabled",
                                           "Rule": {"DefaultRetention": bad}})
        assert (code_got, status) == (code, 400), bad
    assert "Rule" not in s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE",
                                                                       "Days": 2}}})
    v = s3.put_object(Bucket=bucket, Key="k", Body=b"x")["VersionId"]
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ObjectLockMode"] == "GOVERNANCE"
    until = head["ObjectLockRetainUntilDate"]
    assert timedelta(days=1, hours=23) < until - datetime.now(timezone.utc) < timedelta(days=2, hours=1)
    # A version may name its own retention instead.
    s3.put_object(Bucket=bucket, Key="k2", Body=b"x", ObjectLockMode="COMPLIANCE",
                  ObjectLockRetainUntilDate=FAR)
    assert s3.get_object_retention(Bucket=bucket, Key="k2")["Retention"] == {
        "Mode": "COMPLIANCE", "RetainUntilDate": FAR}
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", VersionId=v)


def test_retention_and_legal_hold_on_writes_are_checked(s3):
    bucket = locked_bucket(s3)
    for lock, code in (({"ObjectLockMode": "GOVERNANCE"}, "InvalidArgument"),
                       ({"ObjectLockMode": "GOVERNANCE",
                         "ObjectLockRetainUntilDate": datetime(2001, 1, 1, tzinfo=timezone.utc)},
                        "InvalidArgument"),
                       ({"ObjectLockLegalHoldStatus": "MAYBE"}, "InvalidArgument")):
        assert_s3_error(code, 400, s3.put_object, Bucket=bucket, Key="k", Body=b"x", **lock)
    assert s3.list_object_versions(Bucket=bucket).get("Versions", []) == []
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                  ObjectLockRetainUntilDate=FAR, ObjectLockLegalHoldStatus="ON")
    head = s3.head_object(Bucket=bucket, Key="k")
    assert (head["ObjectLockMode"], head["ObjectLockRetainUntilDate"],
            head["ObjectLockLegalHoldStatus"]) == ("GOVERNANCE", FAR, "ON")


def test_governance_gives_way_only_to_its_owners_bypass(s3, other):
    bucket = locked_bucket(s3)
    s3.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    v = s3.put_object(Bucket=bucket, Key="k", Body=b"kept", ObjectLockMode="GOVERNANCE",
                      ObjectLockRetainUntilDate=FAR)["VersionId"]
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", VersionId=v)
    # Someone else who may write the bucket may not bypass it.
    assert_s3_error("AccessDenied", 403, other.delete_object, Bucket=bucket, Key="k",
                    VersionId=v, BypassGovernanceRetention=True)
    # Shortening or changing it needs the bypass too.
    shorter = {"Mode": "GOVERNANCE", "RetainUntilDate": datetime(2099, 1, 1, tzinfo=timezone.utc)}
    assert_s3_error("AccessDenied", 403, s3.put_object_retention, Bucket=bucket, Key="k",
                    Retention=shorter)
    assert_s3_error("AccessDenied", 403, s3.put_object_retention, Bucket=bucket, Key="k",
                    Retention={"Mode": "COMPLIANCE", "RetainUntilDate": FAR})
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v)["Body"].read() == b"kept"
    s3.put_object_retention(Bucket=bucket, Key="k", Retention=shorter,
                            BypassGovernanceRetention=True)
    assert s3.get_object_retention(Bucket=bucket, Key="k")["Retention"] == shorter
    r = s3.delete_object(Bucket=bucket, Key="k", VersionId=v, BypassGovernanceRetention=True)
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert_s3_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="k")


def test_compliance_holds_against_everyone_until_it_ends(srv, s3):
    bucket = locked_bucket(s3)
    until = soon(3600)
    v = s3.put_object(Bucket=bucket, Key="k", Body=b"kept", ObjectLockMode="COMPLIANCE",
                      ObjectLockRetainUntilDate=until)["VersionId"]
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", VersionId=v,
                    BypassGovernanceRetention=True)
    for retention in ({"Mode": "GOVERNANCE", "RetainUntilDate": until + timedelta(days=1)},
                      {"Mode": "COMPLIANCE", "RetainUntilDate": until - timedelta(minutes=1)}):
        assert_s3_error("AccessDenied", 403, s3.put_object_retention, Bucket=bucket, Key="k",
                        Retention=retention, BypassGovernanceRetention=True)
    # It can be extended; a plain delete only hides it behind a marker.
    s3.put_object_retention(Bucket=bucket, Key="k", Retention={
        "Mode": "COMPLIANCE", "RetainUntilDate": until + timedelta(hours=1)})
    marker = s3.delete_object(Bucket=bucket, Key="k")
    assert marker["DeleteMarker"] is True
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v)["Body"].read() == b"kept"
    # A noncurrent version is as locked as a current one; the bucket is not empty.
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", VersionId=v)
    assert_s3_error("BucketNotEmpty", 409, s3.delete_bucket, Bucket=bucket)
    advance(srv, 2 * 3600 + 60)
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v)
    s3.delete_object(Bucket=bucket, Key="k", VersionId=marker["VersionId"])
    s3.delete_bucket(Bucket=bucket)


def test_a_legal_hold_holds_until_it_is_lifted(s3):
    bucket = locked_bucket(s3)
    v = s3.put_object(Bucket=bucket, Key="k", Body=b"x")["VersionId"]
    assert_s3_error("NoSuchObjectLockConfiguration", 404, s3.get_object_legal_hold,
                    Bucket=bucket, Key="k")
    s3.put_object_legal_hold(Bucket=bucket, Key="k", LegalHold={"Status": "ON"})
    assert s3.get_object_legal_hold(Bucket=bucket, Key="k")["LegalHold"] == {"Status": "ON"}
    assert_s3_error("MalformedXML", 400, s3.put_object_legal_hold, Bucket=bucket, Key="k",
                    LegalHold={"Status": "abc"})
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", VersionId=v,
                    BypassGovernanceRetention=True)
    # A new version on top keeps the held one; the hold stays with its version.
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"y")["VersionId"]
    assert s3.get_object_legal_hold(Bucket=bucket, Key="k", VersionId=v)["LegalHold"] == {
        "Status": "ON"}
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="k", VersionId=v)
    s3.put_object_legal_hold(Bucket=bucket, Key="k", VersionId=v, LegalHold={"Status": "OFF"})
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v)
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v2)
    # Without object lock, none of it applies.
    plain = uniq("lock")
    s3.create_bucket(Bucket=plain)
    s3.put_object(Bucket=plain, Key="k", Body=b"x")
    for call, kw in ((s3.put_object_legal_hold, {"LegalHold": {"Status": "ON"}}),
                     (s3.get_object_legal_hold, {}),
                     (s3.put_object_retention, {"Retention": {"Mode": "GOVERNANCE",
                                                              "RetainUntilDate": FAR}}),
                     (s3.get_object_retention, {})):
        assert_s3_error("InvalidRequest", 400, call, Bucket=plain, Key="k", **kw)


def test_delete_objects_refuses_each_locked_version(s3):
    bucket = locked_bucket(s3)
    held = s3.put_object(Bucket=bucket, Key="held", Body=b"x", ObjectLockMode="GOVERNANCE",
                         ObjectLockRetainUntilDate=FAR)["VersionId"]
    free = s3.put_object(Bucket=bucket, Key="free", Body=b"x")["VersionId"]
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "held", "VersionId": held}, {"Key": "free", "VersionId": free}]})
    assert [(d["Key"], d["VersionId"]) for d in r["Deleted"]] == [("free", free)]
    assert [(e["Key"], e["Code"]) for e in r["Errors"]] == [("held", "AccessDenied")]
    assert s3.get_object(Bucket=bucket, Key="held", VersionId=held)["Body"].read() == b"x"
    r = s3.delete_objects(Bucket=bucket, BypassGovernanceRetention=True,
                          Delete={"Objects": [{"Key": "held", "VersionId": held}]})
    assert [d["Key"] for d in r["Deleted"]] == ["held"] and "Errors" not in r


def test_multipart_uploads_and_copies_take_their_own_lock(s3):
    bucket = locked_bucket(s3)
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", ObjectLockLegalHoldStatus="ON")
    e = s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=1,
                       Body=b"abc")["ETag"]
    done = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"],
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
    assert_s3_error("AccessDenied", 403, s3.delete_object, Bucket=bucket, Key="mp",
                    VersionId=done["VersionId"])
    # A copy does not inherit the source's lock.
    copied = s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "mp"})
    assert "ObjectLockLegalHoldStatus" not in s3.head_object(Bucket=bucket, Key="copy")
    s3.delete_object(Bucket=bucket, Key="copy", VersionId=copied["VersionId"])
    s3.put_object_legal_hold(Bucket=bucket, Key="mp", LegalHold={"Status": "OFF"})
    s3.delete_object(Bucket=bucket, Key="mp", VersionId=done["VersionId"])


def test_object_lock_headers_are_refused_where_no_version_is_written(srv, s3):
    bucket = locked_bucket(s3)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    # Tags are not a new version: a lock header there would be dropped, so it is refused.
    status, _, answer = signed_send(
        "PUT", object_url(srv, bucket, "k", query="tagging="), OP1,
        b"<Tagging><TagSet></TagSet></Tagging>", headers={"x-amz-object-lock-legal-hold": "ON"})
    assert status == 400 and xml_error_code(answer) == "InvalidRequest"
    assert "ObjectLockLegalHoldStatus" not in s3.head_object(Bucket=bucket, Key="k")


def test_table_buckets_refuse_object_lock_so_maintenance_can_remove_files(srv):
    acct = srv.signup()
    from helpers import warehouse_s3
    wh = warehouse_s3(srv, acct)
    table_bucket = "w-" + acct["warehouse_id"]
    code, status, msg = s3_error(wh.put_object_lock_configuration, Bucket=table_bucket,
                                 ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
    assert (code, status) == ("InvalidRequest", 400) and "Iceberg" in msg


def locked_blob_bucket(srv, acct):
    """The account's warehouse S3 client and its blob bucket, given versioning and object lock."""
    from helpers import warehouse_s3
    wh = warehouse_s3(srv, acct)
    blob = "b-" + acct["warehouse_id"]
    wh.put_bucket_versioning(Bucket=blob, VersioningConfiguration={"Status": "Enabled"})
    wh.put_object_lock_configuration(Bucket=blob, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled"})
    return wh, blob


def test_a_warehouse_with_locked_blobs_is_kept_until_the_lock_ends(srv):
    acct = srv.signup()
    wh, blob = locked_blob_bucket(srv, acct)
    v = wh.put_object(Bucket=blob, Key="contract.pdf", Body=b"signed",
                      ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=soon(3600))["VersionId"]
    auth = {"Authorization": "Bearer " + acct["api_key"]}
    url = srv.api + f"/v1/warehouses/{acct['warehouse_id']}"
    r = requests.delete(url, headers=auth, json={"confirm": "lake"})
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "objects_locked"
    assert r.json()["error"]["locked_until"].startswith(soon(0).strftime("%Y-"))
    # Nothing was removed: the warehouse, its credential and the version are all there.
    assert wh.get_object(Bucket=blob, Key="contract.pdf", VersionId=v)["Body"].read() == b"signed"
    listed = requests.get(srv.api + "/v1/warehouses", headers=auth).json()["warehouses"]
    assert acct["warehouse_id"] in {w["warehouse_id"] for w in listed}
    advance(srv, 2 * 3600)
    r = requests.delete(url, headers=auth, json={"confirm": "lake"})
    assert r.status_code == 200, r.text
    assert r.json()["storage_complete"] is True


def test_deleting_the_account_leaves_its_locked_versions(srv):
    """Account deletion removes no bytes (its warehouses are listed for erasure, which goes
    through the same guard as a warehouse's deletion): the locked version stays, readable
    and still refused deletion."""
    email = f"lock-{uniq('u')}@example.com"
    acct = srv.signup(email=email)
    wh, blob = locked_blob_bucket(srv, acct)
    v = wh.put_object(Bucket=blob, Key="ledger.csv", Body=b"kept",
                      ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=soon(3600))["VersionId"]
    r = requests.delete(srv.api + "/v1/me", headers={"Authorization": "Bearer " + acct["api_key"]},
                        json={"confirm": email})
    assert r.status_code == 200, r.text
    assert r.json()["warehouses_to_purge"] == [acct["warehouse_id"]]
    assert wh.get_object(Bucket=blob, Key="ledger.csv", VersionId=v)["Body"].read() == b"kept"
    assert_s3_error("AccessDenied", 403, wh.delete_object, Bucket=blob, Key="ledger.csv",
                    VersionId=v, BypassGovernanceRetention=True)

"""The account page at /app/ in a real browser (Debian's chromium through Playwright):
boot under its Content-Security-Policy, login and sessions, catalogs, agent tokens,
members, usage, the CLI's device approval, the password pages the mails link to, and SQL
in DuckDB-WASM over tables DuckDB, PyIceberg and Spark wrote, compared with native
DuckDB. Every test fails on a request to any other address, a console error or an
uncaught exception in the page."""

import itertools
import json
import os
import re
import uuid
from pathlib import Path

import boto3
import pytest
import requests
from requests.adapters import HTTPAdapter

from browser import Browser, GuardedPage
from conftest import BOOTSTRAP_SECRET, Server, advance_clock
from ports import reserved_port
from engines import duckdb_from_recipe, pyiceberg_from_recipe, spark_from_recipe
from test_cli import LoginProcess, base_env
from test_login_sessions import PASSWORD, login_token

SCREENSHOTS = Path(os.environ.get("TABLEMERE_SCREENSHOTS", "/tmp/tablemere-screenshots"))


@pytest.fixture(scope="module")
def srv():
    """The module's server, its operator routes on (mail links read back); real time, as
    the engines and the browser sign their S3 requests with it."""
    s = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET})
    yield s
    s.cleanup()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


@pytest.fixture
def gp(browser, srv):
    g = GuardedPage(browser, [srv.api, srv.catalog, srv.s3])
    yield g
    problems = g.check()
    g.close()
    assert not problems, problems


def bearer(token):
    return {"Authorization": "Bearer " + token}


def api(srv, method, path, token, **kw):
    r = requests.request(method, srv.api + path, headers=bearer(token), **kw)
    assert r.status_code < 300, (method, path, r.status_code, r.text)
    return r.json()


class FromAddress(HTTPAdapter):
    """Requests sent from one loopback address: the signup form allows five mails an hour
    per caller address, so each person of this module signs up from an address of their
    own, as people do."""

    def __init__(self, address):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


_addresses = itertools.count(10)


def caller():
    session = requests.Session()
    n = next(_addresses)
    session.mount("http://", FromAddress(f"127.0.{n // 250}.{n % 250 + 2}"))
    return session


def form_signup(srv, org="Lovelace Analytics", email=None, return_to=None):
    """The signup form, from an address of its own: the address signed up."""
    email = email or f"ada-{uuid.uuid4().hex[:10]}@example.com"
    body = {"email": email, "full_name": "Ada L", "organization_name": org,
            "handle": "lov-" + uuid.uuid4().hex[:8]}
    if return_to:
        body["return_to"] = return_to
    r = caller().post(srv.api + "/v1/auth/signup", json=body)
    assert r.status_code == 202, r.text
    return email


def set_password(srv, email):
    r = requests.post(srv.api + "/v1/auth/password/set",
                      json={"token": login_token(srv, email, "set_password"), "password": PASSWORD})
    assert r.status_code == 200, r.text
    return r.json()


def person(srv, org="Lovelace Analytics"):
    """A person who finished the signup form: (email, session)."""
    email = form_signup(srv, org)
    return email, set_password(srv, email)


def catalog_of(srv, session, name="lake"):
    """The person's catalog `name` (signup made `lake`), created when missing."""
    token = session["access_token"]
    org = session["organization"]["org_id"]
    projects = [p for p in api(srv, "GET", "/v1/projects", token)["projects"]
                if p.get("org_id") == org]
    for p in projects:
        for w in api(srv, "GET", f"/v1/warehouses?project={p['project_id']}", token)["warehouses"]:
            if w["name"] == name:
                return w
    return api(srv, "POST", "/v1/warehouses", token,
               json={"project_id": projects[0]["project_id"], "name": name})


def shot(gp, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    gp.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def log_in(gp, srv, email, password=PASSWORD):
    page = gp.page
    page.goto(srv.api + "/app/")
    page.fill("#login input[name=email]", email)
    page.fill("#login input[name=password]", password)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#nav:not([hidden])")


def notice_text(gp):
    gp.page.wait_for_selector("#notice:not([hidden])")
    return gp.page.inner_text("#notice")


def refresh_token_in_tab(gp):
    return gp.page.evaluate("sessionStorage.getItem('tablemere.refresh')")


# ---------------------------------------------------------------------------- boot


def test_page_is_served_with_its_policy_types_and_compression(srv):
    r = requests.get(srv.api + "/app/")
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/html; charset=utf-8"
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self' 'wasm-unsafe-eval'" in csp
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    connect = re.search(r"connect-src ([^;]+)", csp).group(1).split()
    assert connect == ["'self'", srv.catalog, srv.s3]
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    # Every path under /app/ is the page; a missing asset is not.
    assert requests.get(srv.api + "/app/device?user_code=X").text == r.text
    assert requests.get(srv.api + "/app/assets/missing.js").status_code == 404
    assert requests.post(srv.api + "/app/").status_code == 405
    moved = requests.get(srv.api + "/app", allow_redirects=False)
    assert (moved.status_code, moved.headers["Location"]) == (301, "/app/")
    # The runtime files: hashed, cacheable, WebAssembly typed, gzip when accepted.
    wasm = re.findall(r"/app/assets/[\w.-]+\.js", r.text)
    assert wasm, r.text
    script = requests.get(srv.api + wasm[0]).text
    for module in re.findall(r"/app/assets/[\w.-]+\.wasm", script):
        plain = requests.get(srv.api + module, headers={"Accept-Encoding": "identity"})
        assert plain.headers["Content-Type"] == "application/wasm"
        assert plain.content[:4] == b"\0asm"
        assert "immutable" in plain.headers["Cache-Control"]
        packed = requests.get(srv.api + module, headers={"Accept-Encoding": "gzip"}, stream=True)
        assert packed.headers["Content-Encoding"] == "gzip"
        assert int(packed.headers["Content-Length"]) < len(plain.content) / 2
        packed.close()
    # The pages the API names (GET /v1/terms gives their addresses).
    for page in ("/terms", "/privacy"):
        got = requests.get(srv.api + page)
        assert got.status_code == 200 and "<h1>" in got.text


def test_page_boots_to_the_login_form(gp, srv):
    gp.page.goto(srv.api + "/app/")
    gp.page.wait_for_selector("#login input[name=email]")
    assert gp.page.title() == "Tablemere — your account"
    shot(gp, "login")
    # The Terms and Privacy pages the signup answer names.
    gp.page.click("footer a[href='/terms']")
    gp.page.wait_for_selector("h1:text('Terms of Service')")
    shot(gp, "terms")
    gp.page.goto(srv.api + "/privacy")
    gp.page.wait_for_selector("h1:text('Privacy')")


# ---------------------------------------------------------------------------- sessions


def test_login_wrong_then_right_refresh_rotates_and_logout_ends_it(gp, srv):
    email, _ = person(srv)
    page = gp.page
    gp.expect_failure(401)
    page.goto(srv.api + "/app/")
    page.fill("#login input[name=email]", email)
    page.fill("#login input[name=password]", "not the password at all")
    page.click("#login button[type=submit]")
    assert "invalid_login" in notice_text(gp)
    assert page.is_hidden("#nav")
    page.fill("#login input[name=password]", PASSWORD)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#nav:not([hidden])")
    assert page.inner_text("#who") == email
    first = refresh_token_in_tab(gp)
    assert first and first.startswith("rt_")
    # A reload resumes the tab's session with a rotated refresh token; the access token
    # was only ever in memory.
    page.reload()
    page.wait_for_selector("#nav:not([hidden])")
    second = refresh_token_in_tab(gp)
    assert second.startswith("rt_") and second != first
    stored = page.evaluate("JSON.stringify(Object.assign({}, sessionStorage, localStorage))")
    assert "eyJ" not in stored  # no JWT kept anywhere
    # Log out: the session ends on the server too.
    page.click("#logout")
    page.wait_for_selector("#login input[name=email]")
    assert refresh_token_in_tab(gp) is None
    r = requests.post(srv.api + "/v1/auth/refresh", json={"refresh_token": second})
    assert r.status_code == 401, r.text


# ---------------------------------------------------------------------------- catalogs


def test_create_and_delete_a_catalog_by_typing_its_name(gp, srv):
    email, session = person(srv)
    log_in(gp, srv, email)
    page = gp.page
    page.fill("#create-catalog input[name=name]", "sales")
    page.click("#create-catalog button[type=submit]")
    page.wait_for_selector("[data-name='sales']")
    row = page.locator("tr", has=page.locator("[data-name='sales']"))
    assert row.locator("[data-level]").get_attribute("data-level") == "write"
    shot(gp, "catalogs")
    listed = requests.get(srv.api + "/v1/orgs", headers=bearer(session["access_token"]))
    assert listed.status_code == 200
    row.locator("button:text('Delete…')").click()
    form = page.locator("form.delete[data-catalog='sales']")
    typed = form.locator("input[name=confirm]")
    typed.fill("sale")
    assert form.locator("button").is_disabled()
    typed.fill("sales")
    assert form.locator("button").is_enabled()
    form.locator("button").click()
    assert "Deleted sales" in notice_text(gp)
    page.wait_for_selector("[data-name='sales']", state="detached")
    # Gone on the server.
    token = session["access_token"]
    for p in api(srv, "GET", "/v1/projects", token)["projects"]:
        names = [w["name"] for w in api(srv, "GET", f"/v1/warehouses?project={p['project_id']}", token)["warehouses"]]
        assert "sales" not in names


def test_an_agent_token_is_shown_once_with_its_grants(gp, srv):
    email, session = person(srv)
    w = catalog_of(srv, session, "lake")
    log_in(gp, srv, email)
    page = gp.page
    page.goto(srv.api + "/app/tokens")
    page.fill("#create-token input[name=name]", "nightly-agent")
    page.select_option("#create-token select[data-catalog='lake']", "read")
    page.click("#create-token button[type=submit]")
    key = page.inner_text("#new-key [data-secret]")
    assert key.startswith("al_live_")
    page.wait_for_selector("[data-agent='nightly-agent']")
    shot(gp, "tokens")
    # The key works and holds exactly read on lake.
    conn = api(srv, "GET", f"/v1/connection?warehouse_id={w['warehouse_id']}", key)
    assert conn["level"] == "read"
    # Shown once: after a reload the key is nowhere in the page.
    page.reload()
    page.wait_for_selector("[data-agent='nightly-agent']")
    assert key not in page.content()


def test_invite_change_role_and_remove_a_member(gp, srv):
    email, session = person(srv)
    log_in(gp, srv, email)
    page = gp.page
    page.goto(srv.api + "/app/members")
    invitee = f"grace-{uuid.uuid4().hex[:8]}@example.com"
    page.fill("#invite input[name=email]", invitee)
    page.select_option("#invite select[name=invite-role]", "member")
    page.click("#invite button[type=submit]")
    page.wait_for_selector("#invitation [data-secret]")
    token = page.inner_text("#invitation [data-secret]")
    shot(gp, "members")
    # The invitee signs up with the invited address and joins.
    grace = set_password(srv, form_signup(srv, "Hopper", email=invitee))
    org = session["organization"]["org_id"]
    mine = [o["org_id"] for o in api(srv, "GET", "/v1/orgs", grace["access_token"])["organizations"]]
    if org not in mine:
        api(srv, "POST", "/v1/orgs/invitations/accept", grace["access_token"], json={"token": token})
    page.reload()
    select = page.locator(f"select[data-member='{invitee}']")
    select.wait_for()
    assert select.input_value() == "member"
    select.select_option("admin")
    assert "is now an admin" in notice_text(gp)
    members = api(srv, "GET", f"/v1/orgs/{org}/members", session["access_token"])["members"]
    assert {m["email"]: m["role"] for m in members}[invitee] == "admin"
    page.once("dialog", lambda d: d.accept())
    page.click(f"button[data-remove='{invitee}']")
    assert "Removed" in notice_text(gp)
    members = api(srv, "GET", f"/v1/orgs/{org}/members", session["access_token"])["members"]
    assert invitee not in [m["email"] for m in members]


def test_usage_against_the_limit(gp, srv):
    email, session = person(srv)
    w = catalog_of(srv, session, "lake")
    # 1.5 MB in the blob bucket, measured for real by metering now.
    conn = api(srv, "GET", f"/v1/connection?warehouse_id={w['warehouse_id']}", session["access_token"])
    cred = conn["catalog_credential"]
    s3 = boto3.client("s3", endpoint_url=srv.s3, region_name="us-east-1",
                      aws_access_key_id=cred["client_id"], aws_secret_access_key=cred["client_secret"])
    s3.put_object(Bucket=conn["blob_bucket"], Key="report.bin", Body=b"x" * 1_500_000)
    r = requests.post(srv.api + "/internal/usage", headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"warehouse_id": w["warehouse_id"]})
    assert r.status_code == 200, r.text
    usage = api(srv, "GET", "/v1/usage", session["access_token"])
    log_in(gp, srv, email)
    gp.page.goto(srv.api + "/app/usage")
    gp.page.wait_for_selector("[data-meter='Storage']")
    shot(gp, "usage")
    text = gp.page.inner_text("main")
    org = session["organization"]["org_id"]
    [project] = [p for p in usage["projects"] if p["org_id"] == org]
    assert f"Catalogs: {project['warehouses']['current']} of {project['warehouses']['limit']}" in text
    assert "lake" in text
    storage = project["storage_bytes"]
    assert storage["current"] >= 1_500_000 and storage["limit"] == 5_000_000_000
    assert f"Storage {storage['current'] / 1e6:.2f} MB of 5.00 GB" in text, text
    assert re.search(r"lake\t1\.\d\d MB\t\d+\tprivate", text), text


# ---------------------------------------------------------------------------- mail links


def test_password_set_from_the_mailed_link(gp, srv):
    email = form_signup(srv, return_to="/app/device?user_code=ABCD-EFGH")
    log = Path(srv.log_path).read_text()
    links = re.findall(r"https?://\S+/app/welcome\?token=\S+", log)
    # The link mailed to this address (the log names the recipient first).
    mine = [m for m in re.finditer(r"https?://\S+/app/welcome\?token=(\S+)", log)
            if email in log[max(0, m.start() - 2000):m.start()]]
    assert links and mine, log[-2000:]
    link = mine[-1].group(0)
    page = gp.page
    page.goto(link)
    page.fill("#password input[name=password]", PASSWORD)
    page.fill("#password input[name=password-again]", PASSWORD)
    shot(gp, "welcome")
    # The form asked to continue to a device approval (return_to), whose code is made up
    # here: the page lands there and says the code is unknown.
    gp.expect_failure(404)
    page.click("#password button[type=submit]")
    page.wait_for_selector("#nav:not([hidden])")
    assert page.inner_text("#who") == email
    assert "token=" not in page.url  # the spent link leaves the address bar
    assert page.url.endswith("/app/device?user_code=ABCD-EFGH")
    page.wait_for_selector("#device-missing")
    # The password works for a login.
    r = requests.post(srv.api + "/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text


def test_password_reset_from_the_mailed_link(gp, srv):
    email, _ = person(srv)
    page = gp.page
    page.goto(srv.api + "/app/")
    page.fill("#reset-start input[name=reset-email]", email)
    page.click("#reset-start button[type=submit]")
    assert "reset link" in notice_text(gp)
    link = re.findall(r"https?://\S+/app/reset\?token=\S+", Path(srv.log_path).read_text())[-1]
    page.goto(link)
    fresh = PASSWORD + " again"
    page.fill("#password input[name=password]", fresh)
    page.fill("#password input[name=password-again]", fresh)
    page.click("#password button[type=submit]")
    page.wait_for_selector("#nav:not([hidden])")
    r = requests.post(srv.api + "/v1/auth/login", json={"email": email, "password": fresh})
    assert r.status_code == 200, r.text


# ---------------------------------------------------------------------------- device login


def test_device_login_started_by_the_cli_is_finished_in_the_page(gp, srv, tmp_path):
    email, session = person(srv)
    w = catalog_of(srv, session, "lake")
    home = tmp_path / "home"
    home.mkdir()
    creds = home / "credentials.json"
    env = base_env(home, TABLEMERE_URL=srv.api, TABLEMERE_CREDENTIALS=str(creds))
    login = LoginProcess(env, "--name", "ana-laptop")
    try:
        code = login.user_code()
        url = re.search(r"https?://\S+/app/device\?user_code=\S+", login.err).group(0)
        log_in(gp, srv, email)
        page = gp.page
        page.goto(url)
        page.wait_for_selector("#device-approve")
        text = page.inner_text("#device-approve")
        assert "ana-laptop" in text and code in text and "lake" in text
        page.select_option("#device-approve select[name=level]", "read")
        shot(gp, "device")
        page.click("#device-approve button[name=approve]")
        page.wait_for_selector("#device-result .ok")
        r = login.finish()
    finally:
        login.kill()
    assert r.rc == 0, r
    saved = json.loads(creds.read_text())
    [key] = [v["api_key"] for v in saved.values()] if isinstance(saved, dict) and all(
        isinstance(v, dict) for v in saved.values()) else [saved["api_key"]]
    conn = api(srv, "GET", f"/v1/connection?warehouse_id={w['warehouse_id']}", key)
    assert conn["level"] == "read"


# ---------------------------------------------------------------------------- SQL


def run_sql(gp, srv, catalog, table, sql, snapshot=None):
    """Runs `sql` on the SQL page; answers (rows as text or None, error message)."""
    page = gp.page
    if "/app/sql" not in page.url:
        page.goto(srv.api + "/app/sql")
    page.select_option("#sql select[name=catalog]", label=catalog)
    page.select_option("#sql select[name=table]", label=table)
    page.fill("#sql input[name=snapshot]", "" if snapshot is None else str(snapshot))
    page.fill("#sql textarea[name=sql]", sql)
    page.click("#sql button[name=run]")
    page.wait_for_selector("#sql-results table, #sql-error", timeout=120_000)
    if page.locator("#sql-error").count():
        return None, page.inner_text("#sql-error")
    rows = page.eval_on_selector_all(
        "#sql-results tbody tr",
        "rows => rows.map(r => [...r.children].map(td => td.classList.contains('null') ? null : td.textContent))")
    assert page.get_attribute("#sql-status", "data-rows") == str(len(rows))
    return rows, None


def native(connection, sql):
    con = duckdb_from_recipe(connection)
    con.execute("SET TimeZone = 'UTC'")
    return [[None if v is None else str(v) for v in row]
            for row in con.execute(f"SELECT COLUMNS(*)::VARCHAR FROM ({sql})").fetchall()]


QUERIES = [
    "SELECT count(*) AS n, sum(amount) AS total, sum(big) AS bigs, count(note) AS notes FROM {t}",
    "SELECT id, amount, big, ts, note FROM {t} ORDER BY id",
    "SELECT min(ts), max(ts), max(amount) FROM {t} WHERE note IS NULL",
]


def person_with_tables(srv):
    email, session = person(srv)
    w = catalog_of(srv, session, "lake")
    conn = api(srv, "GET", f"/v1/connection?engine=duckdb&warehouse_id={w['warehouse_id']}",
               session["access_token"])
    return email, session, w, conn


def write_with_duckdb(conn):
    con = duckdb_from_recipe(conn)
    con.execute("CREATE SCHEMA IF NOT EXISTS lake.web")
    con.execute("CREATE TABLE lake.web.from_duckdb (id BIGINT, amount DECIMAL(18,4), big BIGINT, "
                "ts TIMESTAMP, note VARCHAR)")
    con.execute("""INSERT INTO lake.web.from_duckdb VALUES
        (1, 12345678901234.5678, 9223372036854775807, TIMESTAMP '2024-02-29 23:59:59.999999', 'a'),
        (2, -0.0001, -9223372036854775807, TIMESTAMP '1970-01-01 00:00:00', NULL),
        (3, NULL, 4611686018427387904, NULL, 'c')""")
    con.execute("""INSERT INTO lake.web.from_duckdb VALUES
        (4, 0.5000, 1, TIMESTAMP '2026-12-07 12:00:00.000001', NULL)""")


def compare(gp, srv, conn, table_label, table_ref):
    for q in QUERIES:
        page_rows, error = run_sql(gp, srv, "lake (write)", table_label, q.format(t=table_ref.split(".")[-1]))
        assert error is None, error
        assert page_rows == native(conn, q.format(t=table_ref)), q


def test_sql_equals_native_duckdb_on_a_table_duckdb_wrote(gp, srv):
    email, session, w, conn = person_with_tables(srv)
    write_with_duckdb(conn)
    log_in(gp, srv, email)
    compare(gp, srv, conn, "web.from_duckdb", "lake.web.from_duckdb")
    shot(gp, "sql")
    # The exact text of the extremes.
    rows, _ = run_sql(gp, srv, "lake (write)", "web.from_duckdb",
                      "SELECT amount, big, ts FROM from_duckdb WHERE id = 1")
    assert rows == [["12345678901234.5678", "9223372036854775807", "2024-02-29 23:59:59.999999"]]


def test_sql_equals_native_duckdb_on_a_table_pyiceberg_wrote_with_an_old_snapshot(gp, srv):
    import pyarrow as pa
    from decimal import Decimal
    from datetime import datetime

    email, session, w, conn = person_with_tables(srv)
    py = api(srv, "GET", f"/v1/connection?engine=pyiceberg&warehouse_id={w['warehouse_id']}",
             session["access_token"])
    catalog = pyiceberg_from_recipe(py)
    catalog.create_namespace("web")
    schema = pa.schema([("id", pa.int64()), ("amount", pa.decimal128(18, 4)), ("big", pa.int64()),
                        ("ts", pa.timestamp("us")), ("note", pa.string())])
    t = catalog.create_table("web.from_pyiceberg", schema=schema)
    t.append(pa.table({"id": [1, 2], "amount": [Decimal("99999999999999.9999"), None],
                       "big": [-9223372036854775808, 123],
                       "ts": [datetime(2000, 1, 1, 0, 0, 0, 1), None], "note": [None, "x"]},
                      schema=schema))
    first = t.current_snapshot().snapshot_id
    t = catalog.load_table("web.from_pyiceberg")
    t.append(pa.table({"id": [3], "amount": [Decimal("-1.2500")], "big": [0],
                       "ts": [datetime(2030, 6, 1, 12, 30)], "note": ["y"]}, schema=schema))
    log_in(gp, srv, email)
    compare(gp, srv, conn, "web.from_pyiceberg", "lake.web.from_pyiceberg")
    # An older snapshot, named in the page.
    rows, error = run_sql(gp, srv, "lake (write)", "web.from_pyiceberg",
                          "SELECT count(*), min(big) FROM from_pyiceberg", snapshot=first)
    assert error is None, error
    assert rows == [["2", "-9223372036854775808"]]


def test_sql_equals_native_duckdb_on_a_table_spark_wrote_with_deletes(gp, srv):
    email, session, w, conn = person_with_tables(srv)
    sp = api(srv, "GET", f"/v1/connection?engine=spark&warehouse_id={w['warehouse_id']}",
             session["access_token"])
    spark = spark_from_recipe(sp)
    try:
        spark.sql("CREATE NAMESPACE IF NOT EXISTS lake.web")
        spark.sql("CREATE TABLE lake.web.from_spark (id BIGINT, amount DECIMAL(18,4), big BIGINT, "
                  "ts TIMESTAMP_NTZ, note STRING) USING iceberg TBLPROPERTIES ("
                  "'format-version'='2', 'write.delete.mode'='merge-on-read')")
        spark.sql("""INSERT INTO lake.web.from_spark VALUES
            (1, 1.0000, 9223372036854775807, TIMESTAMP_NTZ '2024-01-01 00:00:00', 'keep'),
            (2, 2.5000, 2, TIMESTAMP_NTZ '2024-01-02 00:00:00', 'drop'),
            (3, NULL, NULL, NULL, NULL),
            (4, 12345678901234.0001, -1, TIMESTAMP_NTZ '1999-12-31 23:59:59.123456', 'keep')""")
        spark.sql("DELETE FROM lake.web.from_spark WHERE note = 'drop'")
        files = spark.sql("SELECT content FROM lake.web.from_spark.delete_files").collect()
        assert files, "Spark wrote no delete file"
    finally:
        spark.stop()
    log_in(gp, srv, email)
    compare(gp, srv, conn, "web.from_spark", "lake.web.from_spark")


def test_a_write_is_refused_and_the_page_stays_usable(gp, srv):
    email, session, w, conn = person_with_tables(srv)
    write_with_duckdb(conn)
    log_in(gp, srv, email)
    for sql in ("DELETE FROM from_duckdb", "insert into from_duckdb values (9)",
                "SELECT 1; DROP TABLE from_duckdb", "CREATE TABLE x AS SELECT 1"):
        rows, error = run_sql(gp, srv, "lake (write)", "web.from_duckdb", sql)
        assert rows is None and "only" in error, (sql, error)
    shot(gp, "sql-refused")
    rows, error = run_sql(gp, srv, "lake (write)", "web.from_duckdb", "SELECT count(*) FROM from_duckdb")
    assert error is None and rows == [["4"]]
    # A snapshot the table never had: the catalog's planning error, said plainly.
    gp.expect_failure(400)
    rows, error = run_sql(gp, srv, "lake (write)", "web.from_duckdb",
                          "SELECT count(*) FROM from_duckdb", snapshot=9007199254740993)
    assert rows is None and "no snapshot 9007199254740993" in error, error
    rows, error = run_sql(gp, srv, "lake (write)", "web.from_duckdb", "SELECT count(*) FROM from_duckdb")
    assert error is None and rows == [["4"]]
    # A query DuckDB rejects shows its error and the page goes on.
    rows, error = run_sql(gp, srv, "lake (write)", "web.from_duckdb", "SELECT nope FROM from_duckdb")
    assert rows is None and "nope" in error
    assert native(conn, "SELECT count(*) FROM lake.web.from_duckdb") == [["4"]]


def test_a_read_only_holder_queries_but_holds_read(gp, srv):
    email, session, w, conn = person_with_tables(srv)
    write_with_duckdb(conn)
    org = session["organization"]["org_id"]
    reader = f"rita-{uuid.uuid4().hex[:8]}@example.com"
    invite = api(srv, "POST", f"/v1/orgs/{org}/invitations", session["access_token"],
                 json={"email": reader, "role": "member"})
    rita = set_password(srv, form_signup(srv, "Rita", email=reader))
    orgs = [o["org_id"] for o in api(srv, "GET", "/v1/orgs", rita["access_token"])["organizations"]]
    if org not in orgs:
        api(srv, "POST", "/v1/orgs/invitations/accept", rita["access_token"], json={"token": invite["token"]})
    log_in(gp, srv, reader)
    page = gp.page
    # She is in two organisations: the page shows the one she picks.
    page.select_option("#org", org)
    page.wait_for_selector("[data-name='lake']")
    page.goto(srv.api + "/app/sql")
    page.wait_for_selector("#sql select[name=catalog]")
    labels = page.eval_on_selector_all("#sql select[name=catalog] option", "o => o.map(x => x.textContent)")
    assert "lake (read)" in labels, labels
    rows, error = run_sql(gp, srv, "lake (read)", "web.from_duckdb", "SELECT count(*), sum(big) FROM from_duckdb")
    assert error is None
    assert rows == native(conn, "SELECT count(*), sum(big) FROM lake.web.from_duckdb")
    rows, error = run_sql(gp, srv, "lake (read)", "web.from_duckdb", "UPDATE from_duckdb SET id = 0")
    assert rows is None and "only reads" in error


def test_a_session_that_expires_during_a_query_is_renewed(browser, clocked_server):
    """On a server whose clock the test moves, with the page's clock moved alike (S3
    signatures carry the signer's time): the clocks jump past the catalog token's and the
    vended session's 900 s after the scan is planned and before its first file is read."""
    from datetime import datetime, timedelta, timezone

    srv = clocked_server
    email, session, w, conn = person_with_tables(srv)
    write_with_duckdb(conn)
    g = GuardedPage(browser, [srv.api, srv.catalog, srv.s3])
    try:
        g.page.clock.install(time=datetime.now(timezone.utc))
        log_in(g, srv, email)
        rows, error = run_sql(g, srv, "lake (write)", "web.from_duckdb", "SELECT count(*) FROM from_duckdb")
        assert error is None and rows == [["4"]]
        g.expect_failure(400, 401)
        jumped = []

        def jump_then_send(route):
            if not jumped:
                advance_clock(srv, 1800)
                g.page.clock.set_system_time(datetime.now(timezone.utc) + timedelta(seconds=1800))
                jumped.append(route.request.url)
            route.continue_()

        g.page.route(srv.s3 + "/**", jump_then_send)
        before = len(g.responses)
        rows, error = run_sql(g, srv, "lake (write)", "web.from_duckdb", "SELECT sum(id) FROM from_duckdb")
        assert error is None, error
        assert rows == [["10"]] and jumped
        later = [(s, m, u) for s, m, u in g.responses[before:] if m != "OPTIONS"]
        # The store refuses the expired session (400 ExpiredToken, as AWS answers); the
        # page loads the table again (a new catalog token first) and reads on.
        first_s3 = next(i for i, (_, _, u) in enumerate(later) if u.startswith(srv.s3))
        assert later[first_s3][0] == 400, later
        assert any(s == 401 and u.startswith(srv.catalog) for s, _, u in later[first_s3:]), later
        assert any(s == 200 and u.startswith(srv.s3) for s, _, u in later[first_s3:]), later
        problems = g.check()
    finally:
        g.close()
    assert not problems, problems


def test_public_names_twin_origins_and_a_refused_origin(browser):
    """A deployment known by another name than the address it binds (a gateway's view:
    --public-*-url), with the page opened under that name, under the loopback twin, and
    under a name CORS does not allow, which the page reports instead of failing quietly."""
    ports = [reserved_port() for _ in range(3)]
    public = {name: f"http://localhost:{port}" for name, port in zip(("api", "catalog", "s3"), ports)}
    srv = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET}, args=[
        "--api-addr", f"127.0.0.1:{ports[0]}", "--catalog-addr", f"127.0.0.1:{ports[1]}",
        "--s3-addr", f"127.0.0.1:{ports[2]}", "--public-api-url", public["api"],
        "--public-catalog-url", public["catalog"], "--public-s3-url", public["s3"]])
    try:
        email, session, w, conn = person_with_tables(srv)
        assert conn["catalog_uri"] == public["catalog"]
        write_with_duckdb(conn)
        csp = requests.get(srv.api + "/app/").headers["Content-Security-Policy"]
        assert f"connect-src 'self' {public['catalog']} {public['s3']};" in csp
        expected = native(conn, "SELECT count(*), sum(big) FROM lake.web.from_duckdb")
        for page_origin in (f"http://127.0.0.1:{ports[0]}", public["api"]):
            g = GuardedPage(browser, [page_origin, public["catalog"], public["s3"]])
            try:
                site = type("Site", (), {"api": page_origin})
                log_in(g, site, email)
                rows, error = run_sql(g, site, "lake (write)", "web.from_duckdb",
                                      "SELECT count(*), sum(big) FROM from_duckdb")
                assert error is None, (page_origin, error)
                assert rows == expected
                problems = g.check()
            finally:
                g.close()
            assert not problems, (page_origin, problems)
        # A name the deployment's CORS does not list: the page says so and stays usable.
        gateway = f"http://tablemere.test:{ports[0]}"
        g = GuardedPage(browser, [gateway, public["catalog"], public["s3"]])
        try:
            g.expect_console_error("blocked by CORS policy", "net::ERR_FAILED")
            site = type("Site", (), {"api": gateway})
            log_in(g, site, email)
            g.page.goto(gateway + "/app/sql")
            g.page.select_option("#sql select[name=catalog]", label="lake (write)")
            g.page.wait_for_selector("#sql-error")
            assert "CORS" in g.page.inner_text("#sql-error")
            g.page.click("nav a[data-view='catalogs']")
            g.page.wait_for_selector("[data-name='lake']")
            problems = g.check()
        finally:
            g.close()
        assert not problems, problems
    finally:
        srv.cleanup()

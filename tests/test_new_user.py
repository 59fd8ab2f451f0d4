"""A new user's path (issue 25): what a person following the reference meets on a stack
started as scripts/start.sh starts it (no bootstrap secret, no SMTP server)."""

import json
import re
import time
import uuid

import requests

from engines import duckdb_from_recipe
from test_cli import base_env, fails, ok, tm
from test_mcp import run_session


def auth(key):
    return {"Authorization": "Bearer " + key}


def org_of(server, key):
    return requests.get(server.api + "/v1/orgs", headers=auth(key)).json()["organizations"][0]


def test_signup_code_is_written_to_the_servers_output(server):
    email = f"log-{uuid.uuid4().hex[:8]}@example.com"
    r = requests.post(server.api + "/v1/signup/start", json={"email": email})
    assert r.status_code == 202 and r.json()["delivery"] == "log", r.text
    assert "server's output" in r.json()["note"]
    code = None
    for _ in range(100):
        log = open(server.log_path).read()
        m = re.search(r"To: " + re.escape(email) + r"\n(?:.*\n)*?\s+\|\s+(\d{6})\s*\n", log)
        if m:
            code = m.group(1)
            break
        time.sleep(0.05)
    assert code, "no code for the address in the server's output"
    r = requests.post(server.api + "/v1/signup/verify",
                      json={"email": email, "code": code, "accept_terms": True})
    assert r.status_code == 201, r.text


def test_legacy_agent_warehouses_are_write_grants_with_a_deprecation_note(server, account):
    org = org_of(server, account["api_key"])["org_id"]
    wid = account["warehouse_id"]
    for field in ("warehouses", "warehouse_ids"):
        r = requests.post(server.api + f"/v1/orgs/{org}/agents", headers=auth(account["api_key"]),
                          json={"name": "legacy-" + uuid.uuid4().hex[:6], field: [wid]})
        assert r.status_code == 201, r.text
        body = r.json()
        assert [(g["warehouse_id"], g["level"]) for g in body["grants"]] == [(wid, "write")]
        assert field in body["deprecation"]


def test_revoked_agents_leave_members_and_grants(server, account):
    key, wid = account["api_key"], account["warehouse_id"]
    org = org_of(server, key)["org_id"]
    made = requests.post(server.api + f"/v1/orgs/{org}/agents", headers=auth(key),
                         json={"name": "gone-" + uuid.uuid4().hex[:6],
                               "grants": [{"warehouse_id": wid, "level": "write"}]}).json()
    before = org_of(server, key)["members"]
    grants = requests.get(server.api + f"/v1/warehouses/{wid}/grants", headers=auth(key)).json()
    assert made["agent_id"] in str(grants)
    r = requests.delete(server.api + f"/v1/orgs/{org}/agents/{made['agent_id']}",
                        headers=auth(key))
    assert r.status_code == 200, r.text
    assert org_of(server, key)["members"] == before - 1
    members = requests.get(server.api + f"/v1/orgs/{org}/members", headers=auth(key)).json()
    assert made["agent_id"] not in str(members)
    grants = requests.get(server.api + f"/v1/warehouses/{wid}/grants", headers=auth(key)).json()
    assert made["agent_id"] not in str(grants)


# ------------------------------------------------------------------ the README's Getting started


def code_from_log(server, email):
    """The six-digit code mailed to `email`, read from the server's output (log delivery)."""
    pattern = re.compile(r"To: " + re.escape(email) + r"\n(?:.*\n)*?\s+\|\s+(\d{6})\s*\n")
    for _ in range(200):
        m = pattern.search(open(server.log_path).read())
        if m:
            return m.group(1)
        time.sleep(0.05)
    raise AssertionError(f"no code for {email} in the server's output")


def mail_from_log(server, email, subject):
    """The body of the last logged mail to `email` whose subject holds `subject`."""
    block = re.compile(r"mail \(log delivery[^\n]*\n  To: (.*)\n  Subject: (.*)\n((?:  \|.*\n)*)")
    for _ in range(200):
        found = [m.group(3) for m in block.finditer(open(server.log_path).read())
                 if m.group(1) == email and subject in m.group(2)]
        if found:
            return "\n".join(line[4:] for line in found[-1].splitlines())
        time.sleep(0.05)
    raise AssertionError(f"no mail '{subject}' to {email} in the server's output")


def test_recovery_code_and_password_links_are_written_to_the_servers_output(server):
    email = f"rec-{uuid.uuid4().hex[:8]}@example.com"
    server.signup(email=email)
    r = requests.post(server.api + "/v1/recover/start", json={"email": email})
    assert r.status_code == 202 and "server's output" in r.json()["note"], r.text
    code = re.search(r"\b(\d{6})\b", mail_from_log(server, email, "recovery")).group(1)
    r = requests.post(server.api + "/v1/recover/verify", json={"email": email, "code": code})
    assert r.status_code in (200, 201) and r.json()["api_key"].startswith("al_live_"), r.text

    email = f"form-{uuid.uuid4().hex[:8]}@example.com"
    r = requests.post(server.api + "/v1/auth/signup",
                      json={"email": email, "organization_name": "Log Works",
                            "handle": "lw-" + uuid.uuid4().hex[:6]})
    assert r.status_code == 202 and "server's output" in r.json()["note"], r.text
    token = re.search(r"/app/welcome\?token=(\S+)",
                      mail_from_log(server, email, "Set your Tablemere password")).group(1)
    r = requests.post(server.api + "/v1/auth/password/set",
                      json={"token": token, "password": "a long enough phrase 1"})
    assert r.status_code == 200, r.text
    r = requests.post(server.api + "/v1/auth/password/reset/start", json={"email": email})
    assert r.status_code == 202 and "server's output" in r.json()["note"], r.text
    token = re.search(r"/app/reset\?token=(\S+)",
                      mail_from_log(server, email, "Reset your Tablemere password")).group(1)
    r = requests.post(server.api + "/v1/auth/password/reset",
                      json={"token": token, "password": "another long phrase 2"})
    assert r.status_code == 200, r.text


def saved_entry(home, url):
    return json.loads((home / ".config" / "tablemere" / "credentials.json").read_text())[url]


def test_getting_started_word_for_word(server, tmp_path):
    """signup → the code from the server's output → --save → catalog create → connect
    without --catalog → the recipe in DuckDB → `mcp run` answering whoami with the saved key."""
    # The stack as scripts/start.sh starts it: no operator routes, no SMTP server.
    assert requests.get(server.api + "/internal/signup-codes/x@example.com").status_code == 404
    home = tmp_path / "home"
    home.mkdir()
    env = base_env(home, TABLEMERE_URL=server.api)
    email = f"gs-{uuid.uuid4().hex[:8]}@example.com"

    started = ok("signup", "--email", email, "--workspace", "acme" + uuid.uuid4().hex[:6],
                 env=env)
    assert started["delivery"] == "log" and "server's output" in started["note"], started
    code = code_from_log(server, email)
    done = ok("signup", "--email", email, "--code", code, "--accept-terms", "--save", env=env)
    assert "api_key" not in done and done["api_key_saved_to"], done
    saved = saved_entry(home, server.api)
    key = saved["api_key"]

    made = ok("catalog", "create", "--name", "second", env=env)
    assert made["name"] == "second" and made["project_id"] == done["project_id"], made
    recipe = ok("connect", "--engine", "duckdb", env=env)
    assert recipe["warehouse_id"] == done["warehouse_id"], recipe  # the catalog signup made
    duck = duckdb_from_recipe(recipe)
    duck.execute("CREATE SCHEMA IF NOT EXISTS lake.demo")
    duck.execute("CREATE TABLE lake.demo.cities AS SELECT i AS id, 'c' || i AS name "
                 "FROM range(1000) t(i)")
    assert duck.execute("SELECT count(*), sum(id) FROM lake.demo.cities").fetchall() == [
        (1000, 499500)]

    async def whoami(t):
        return await t.ok("whoami")
    me = run_session(str(home), server.api, key, whoami, env=base_env(home, TABLEMERE_URL=server.api))
    assert me["principal_id"] == saved["principal_id"] == done["principal_id"], me
    # The table the recipe made is there for the API too.
    table = ok("table", "get", "--catalog", "lake", "--namespace", "demo", "--name", "cities",
               env=env)
    assert table["name"] == "cities" or table.get("identifier", {}).get("name") == "cities", table


# ------------------------------------------------------------------ adopting a key, defaults


def test_login_adopts_a_key_from_stdin_or_a_file_and_never_prints_it(server, tmp_path):
    account = server.signup()
    key = account["api_key"]
    for how in ("stdin", "file"):
        home = tmp_path / how
        home.mkdir()
        env = base_env(home, TABLEMERE_URL=server.api)
        key_file = tmp_path / f"{how}.key"
        key_file.write_text("  " + key + "\n")
        if how == "stdin":
            with open(key_file) as stdin:
                r = tm("login", "--with-key", env=env, stdin=stdin)
        else:
            r = tm("login", "--key-file", key_file, env=env)
        assert r.rc == 0, r
        assert key not in r.out and key not in r.err
        assert r.json["principal_id"] == account["principal_id"], r
        saved = saved_entry(home, server.api)
        assert saved["api_key"] == key and saved["principal_id"] == account["principal_id"]
        assert account["principal_id"] in json.dumps(ok("whoami", env=env))
    # A wrong key is refused by the server (exit 3) and nothing is saved.
    home = tmp_path / "wrong"
    home.mkdir()
    env = base_env(home, TABLEMERE_URL=server.api)
    bad = tmp_path / "bad.key"
    bad.write_text(key[:-4] + "xxxx\n")
    fails(3, "login", "--key-file", bad, env=env)
    assert not (home / ".config" / "tablemere" / "credentials.json").exists()
    # Nothing on standard input: exit 3 (key missing), nothing saved.
    r = tm("login", "--with-key", env=env)
    assert r.rc == 3 and "missing_credential" in r.err, r
    assert not (home / ".config" / "tablemere" / "credentials.json").exists()


def test_connect_without_catalog_uses_the_only_one_or_lists_the_candidates(server, tmp_path):
    account = server.signup()
    env = base_env(tmp_path, TABLEMERE_URL=server.api, TABLEMERE_API_KEY=account["api_key"])
    assert ok("connect", "--engine", "duckdb", env=env)["warehouse_id"] == account["warehouse_id"]
    other = ok("catalog", "create", "--name", "other", env=env)
    r = tm("connect", "--engine", "duckdb", env=env)
    assert r.rc == 1, r
    err = json.loads(r.err.strip().splitlines()[-1])["error"]
    assert err["code"] == "catalog_required" and "--catalog" in err["remedy"], err
    assert sorted(c["warehouse_id"] for c in err["candidates"]) == sorted(
        [account["warehouse_id"], other["warehouse_id"]])


def test_a_name_alone_creates_a_catalog_in_the_default_project(server, tmp_path):
    account = server.signup()
    key = account["api_key"]
    env = base_env(tmp_path, TABLEMERE_URL=server.api, TABLEMERE_API_KEY=key)
    [first] = requests.get(server.api + "/v1/projects", headers=auth(key)).json()["projects"]
    second = ok("project", "create", "--name", "second", "--provider", first["provider"],
                "--region", first["region"], env=env)
    assert second["project_id"] != first["project_id"]
    made = ok("catalog", "create", "--name", "by-cli", env=env)
    assert made["project_id"] == first["project_id"], made

    async def create(t):
        return await t.ok("create_warehouse", {"name": "by-mcp"})
    env = base_env(tmp_path, TABLEMERE_URL=server.api, TABLEMERE_API_KEY=key)
    made = run_session(str(tmp_path), server.api, key, create, env=env)
    assert made["project_id"] == first["project_id"], made
    # Named, it goes where it is told.
    made = ok("catalog", "create", "--name", "there", "--project", "second", env=env)
    assert made["project_id"] == second["project_id"], made

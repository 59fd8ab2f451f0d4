"""Black-box tests of the control-plane basics (signup, connection recipes, organisations,
agents, health) against a running tablemere-server. Every failure must use the envelope
{"error": {"code", "message", "request_id", …}} of the API reference."""

import base64
import json
import re
import uuid

import pytest
import requests

from conftest import catalog_token

KEY_RE = r"al_live_([0-9a-f]{16})_([A-Za-z0-9-]{32})"
ENGINES = ["duckdb", "pyiceberg", "spark"]


# ---------------------------------------------------------------------------- helpers

def new_email():
    return f"user-{uuid.uuid4().hex[:12]}@example.com"


def auth(key):
    return {"Authorization": "Bearer " + key}


def signup(server, **body):
    payload = {"email": new_email(), "workspace": "ws-" + uuid.uuid4().hex[:6],
               "engine": "duckdb", "accept_terms": True}
    payload.update(body)
    return requests.post(server.api + "/v1/signup", json=payload)


def assert_api_error(r, status, code, **fields):
    """The control-plane error envelope; request_id matches the x-request-id header."""
    assert r.status_code == status, f"{r.status_code} {r.text}"
    assert r.headers.get("Content-Type", "").startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert err["code"] == code, err
    assert isinstance(err["message"], str) and err["message"], err
    assert isinstance(err["request_id"], str) and err["request_id"], err
    assert err["request_id"] == r.headers.get("x-request-id"), (err, r.headers)
    for k, v in fields.items():
        assert err.get(k) == v, (k, err)
    return err


def get_connection(server, key, **params):
    return requests.get(server.api + "/v1/connection", params=params, headers=auth(key))


def create_agent(server, account, body, key=None):
    return requests.post(f"{server.api}/v1/orgs/{account['organization']['org_id']}/agents",
                         headers=auth(key or account["api_key"]), json=body)


def assert_connection(server, conn, warehouse_id, identity, level):
    bucket = "w-" + warehouse_id
    assert conn["catalog_uri"] == server.catalog
    assert conn["warehouse"] == f"s3://{bucket}/"
    assert conn["warehouse_name"] == bucket
    assert conn["warehouse_id"] == warehouse_id
    assert conn["blob_bucket"] == "b-" + warehouse_id
    assert conn["level"] == level
    assert conn["identity"] == identity
    cred = conn["catalog_credential"]
    assert set(cred) >= {"client_id", "client_secret", "oauth2_server_uri", "grant", "note"}
    assert cred["client_id"] == identity
    assert cred["client_secret"].startswith("tms_") and len(cred["client_secret"]) > 20
    assert cred["oauth2_server_uri"] == server.catalog + "/v1/oauth/tokens"
    assert cred["grant"] == "client_credentials"
    assert isinstance(cred["note"], str) and cred["note"]
    assert conn["storage_endpoint"] == server.s3


def token_claims_ro(server, cred):
    """Mints a catalog token for the credential; returns whether it is read-only."""
    token = catalog_token(server, cred["client_id"], cred["client_secret"])
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["ro"]


@pytest.fixture(scope="module")
def account(server):
    """This module's own account (shadows conftest's): agents made here stay out of the
    shared one."""
    return server.signup()


# ---------------------------------------------------------------------------- signup

def test_signup_creates_an_account_with_a_working_connection(server):
    email = new_email()
    r = signup(server, email=email, workspace="Acme Labs")
    assert r.status_code == 201, r.text
    body = r.json()
    m = re.fullmatch(KEY_RE, body["api_key"])
    assert m, body["api_key"]
    assert re.fullmatch(r"p_[0-9a-f]{16}", body["principal_id"])
    assert re.fullmatch(r"pr_[0-9a-f]{16}", body["project_id"])
    assert re.fullmatch(r"[0-9a-f-]{36}", body["warehouse_id"])
    assert body["organization"]["role"] == "admin"
    assert body["organization"]["joined_via"] == "signup"
    assert body["terms"]["accepted"] is True
    wid = body["warehouse_id"]
    conn = body["connection"]
    assert_connection(server, conn, wid, f"t-{wid}", "write")
    assert conn["engine"] == "duckdb"
    assert f"CLIENT_ID 't-{wid}'" in conn["sql"]
    assert f"ATTACH 'w-{wid}'" in conn["sql"]
    assert "python" not in conn and "conf" not in conn

    # The key authenticates, and the credential mints read/write catalog tokens.
    assert get_connection(server, body["api_key"]).status_code == 200
    assert token_claims_ro(server, conn["catalog_credential"]) is False
    r = requests.get(server.catalog + "/v1/config", params={"warehouse": f"w-{wid}"},
                     headers=auth(catalog_token(server, conn["identity"],
                                                conn["catalog_credential"]["client_secret"])))
    assert r.status_code == 200 and r.json()["overrides"]["prefix"] == f"w-{wid}"


@pytest.mark.parametrize("engine", ENGINES)
def test_signup_recipe_follows_the_engine(server, engine):
    r = signup(server, engine=engine)
    assert r.status_code == 201, r.text
    conn = r.json()["connection"]
    assert conn["engine"] == engine
    assert {"duckdb": "sql", "pyiceberg": "python", "spark": "conf"}[engine] in conn
    assert sum(k in conn for k in ("sql", "python", "conf")) == 1


@pytest.mark.parametrize("terms", [None, False, "true", 1])
def test_signup_requires_accepting_the_terms(server, terms):
    body = {"email": new_email(), "workspace": "x", "engine": "duckdb"}
    if terms is not None:
        body["accept_terms"] = terms
    r = requests.post(server.api + "/v1/signup", json=body)
    assert_api_error(r, 400, "terms_required", field="accept_terms")
    # Nothing was created: the address is still free.
    assert signup(server, email=body["email"]).status_code == 201


@pytest.mark.parametrize("email", ["", "not-an-email", "a@b", "a b@example.com"])
def test_signup_rejects_invalid_emails(server, email):
    assert_api_error(signup(server, email=email), 400, "invalid_value", field="email")


def test_signup_with_an_unknown_engine_creates_nothing(server):
    email = new_email()
    r = signup(server, email=email, engine="cobol")
    err = assert_api_error(r, 400, "unsupported_engine")
    assert err["available"] == ENGINES
    # The address was not burned by the failed attempt.
    r = signup(server, email=email)
    assert r.status_code == 201, r.text


def test_signup_duplicate_email_conflicts(server):
    email = new_email()
    first = signup(server, email=email)
    assert first.status_code == 201, first.text
    assert_api_error(signup(server, email=email), 409, "already_exists")
    assert_api_error(signup(server, email=email.upper()), 409, "already_exists")
    # The first account is untouched.
    assert get_connection(server, first.json()["api_key"]).json()["warehouse_id"] == \
        first.json()["warehouse_id"]


@pytest.mark.parametrize("body", ["{not json", "[1, 2]", '"text"'])
def test_signup_malformed_body(server, body):
    r = requests.post(server.api + "/v1/signup", data=body,
                      headers={"Content-Type": "application/json"})
    assert_api_error(r, 400, "invalid_json")


# ---------------------------------------------------------------------------- connection

@pytest.mark.parametrize("engine", ENGINES)
def test_connection_recipe_per_engine(server, account, engine):
    wid = account["warehouse_id"]
    r = get_connection(server, account["api_key"], engine=engine)
    assert r.status_code == 200, r.text
    conn = r.json()
    assert_connection(server, conn, wid, f"t-{wid}", "write")
    secret = conn["catalog_credential"]["client_secret"]
    assert secret == account["connection"]["catalog_credential"]["client_secret"]
    assert conn["engine"] == engine
    if engine == "duckdb":
        assert "python" not in conn and "conf" not in conn
        assert f"CLIENT_SECRET '{secret}'" in conn["sql"]
        assert f"OAUTH2_SERVER_URI '{server.catalog}/v1/oauth/tokens'" in conn["sql"]
    elif engine == "pyiceberg":
        assert "sql" not in conn and "conf" not in conn
        assert f"uri='{server.catalog}'" in conn["python"]
        assert f"warehouse='s3://w-{wid}/'" in conn["python"]
        assert f"credential='t-{wid}:{secret}'" in conn["python"]
        assert f"'oauth2-server-uri': '{server.catalog}/v1/oauth/tokens'" in conn["python"]
    else:
        assert "sql" not in conn and "python" not in conn
        conf = conn["conf"]
        assert all(k == "spark.sql.extensions" or k.startswith("spark.sql.catalog.lake")
                   for k in conf), conf
        p = "spark.sql.catalog.lake"
        assert conf[p] == "org.apache.iceberg.spark.SparkCatalog"
        assert conf[p + ".type"] == "rest"
        assert conf[p + ".uri"] == server.catalog
        assert conf[p + ".warehouse"] == f"s3://w-{wid}/"
        assert conf[p + ".credential"] == f"t-{wid}:{secret}"
        assert conf[p + ".s3.endpoint"] == server.s3
        assert conf[p + ".header.X-Iceberg-Access-Delegation"] == "vended-credentials"
        assert all(isinstance(v, str) for v in conf.values())


def test_connection_defaults_to_duckdb_and_rejects_unknown_engines(server, account):
    r = get_connection(server, account["api_key"])
    assert r.status_code == 200 and r.json()["engine"] == "duckdb" and "sql" in r.json()
    for engine in ("trino", ""):
        err = assert_api_error(get_connection(server, account["api_key"], engine=engine), 400,
                               "unsupported_engine")
        assert err["available"] == ENGINES + ["snowflake"]


def test_snowflake_recipe_is_always_read_only(server, account):
    """GET /v1/connection?engine=snowflake: a catalog integration and an external volume
    with the read-only identity, whatever the caller's level."""
    r = get_connection(server, account["api_key"], engine="snowflake")
    assert r.status_code == 200, r.text
    c = r.json()
    assert c["level"] == "write" and c["identity"].endswith("-ro"), c
    assert c["catalog_credential"]["client_id"] == c["identity"]
    assert "CATALOG_SOURCE = ICEBERG_REST" in c["sql"] and "ALLOW_WRITES = FALSE" in c["sql"]
    assert c["identity"] in c["sql"] and "w-" + account["warehouse_id"] in c["sql"]


def test_connection_selects_the_warehouse_by_id_or_name(server, account):
    wid = account["warehouse_id"]
    for ref in (wid, "lake", f"w-{wid}"):
        r = get_connection(server, account["api_key"], warehouse_id=ref)
        assert r.status_code == 200, r.text
        assert r.json()["warehouse_id"] == wid
    assert_api_error(get_connection(server, account["api_key"], warehouse_id="nope"), 404,
                     "warehouse_not_found", field="warehouse_id")
    other = server.signup()
    assert_api_error(get_connection(server, account["api_key"],
                                    warehouse_id=other["warehouse_id"]),
                     404, "warehouse_not_found")


def test_bad_or_missing_api_keys_are_401(server, account):
    key_id = re.fullmatch(KEY_RE, account["api_key"]).group(1)
    cred = account["connection"]["catalog_credential"]
    headers = [
        {},
        {"Authorization": "Bearer "},
        {"Authorization": "Bearer garbage"},
        {"Authorization": f"Bearer al_live_{key_id}_" + "x" * 32},  # right id, wrong secret
        {"Authorization": "Bearer al_live_0000000000000000_" + "x" * 32},
        {"Authorization": "Bearer " + catalog_token(server, cred["client_id"],
                                                    cred["client_secret"])},
        {"Authorization": "Basic " + account["api_key"]},
        {"Authorization": account["api_key"]},
    ]
    for h in headers:
        for path in ("/v1/connection", "/v1/orgs"):
            r = requests.get(server.api + path, headers=h)
            assert_api_error(r, 401, "invalid_api_key")
        r = requests.post(f"{server.api}/v1/orgs/{account['organization']['org_id']}/agents",
                          headers=h, json={"name": "x"})
        assert_api_error(r, 401, "invalid_api_key")


# ---------------------------------------------------------------------------- organisations

def test_orgs_lists_the_signup_organisation(server):
    workspace = "Team " + uuid.uuid4().hex[:6]
    r = signup(server, workspace=workspace)
    assert r.status_code == 201, r.text
    account = r.json()
    r = requests.get(server.api + "/v1/orgs", headers=auth(account["api_key"]))
    assert r.status_code == 200, r.text
    orgs = r.json()["organizations"]
    assert len(orgs) == 1
    org = orgs[0]
    assert org["org_id"] == account["organization"]["org_id"]
    assert org["name"] == workspace
    assert org["role"] == "admin"
    assert org["status"] == "active"
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{0,38}[a-z0-9]", org["handle"]), org["handle"]
    assert org["handle"].startswith("team-")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", org["created_at"])


# ---------------------------------------------------------------------------- agents

@pytest.mark.parametrize("level,suffix", [("read", "-ro"), ("write", "")])
def test_agent_connection_carries_the_matching_identity(server, account, level, suffix):
    wid = account["warehouse_id"]
    name = f"agent-{level}-{uuid.uuid4().hex[:6]}"
    r = create_agent(server, account, {"name": name,
                                       "grants": [{"warehouse_id": wid, "level": level}]})
    assert r.status_code == 201, r.text
    agent = r.json()
    assert re.fullmatch(KEY_RE, agent["api_key"])
    assert agent["key_id"] == re.fullmatch(KEY_RE, agent["api_key"]).group(1)
    assert re.fullmatch(r"a_[0-9a-f]{16}", agent["agent_id"])
    assert agent["name"] == name
    assert agent["org_id"] == account["organization"]["org_id"]
    assert agent["role"] == "member"
    assert agent["grants"] == [{"warehouse_id": wid, "name": "lake", "level": level}]
    assert agent["created_by"] == account["principal_id"]
    assert agent["suspended"] is False and agent["last_used_at"] is None

    r = get_connection(server, agent["api_key"], engine="pyiceberg")
    assert r.status_code == 200, r.text
    conn = r.json()
    assert_connection(server, conn, wid, f"t-{wid}{suffix}", level)
    assert conn["level_via"] == "grant"
    assert token_claims_ro(server, conn["catalog_credential"]) is (level == "read")
    # The agent's credential is the warehouse's identity, not a new one per agent.
    owner_secret = account["connection"]["catalog_credential"]["client_secret"]
    assert (conn["catalog_credential"]["client_secret"] == owner_secret) is (level == "write")

    r = requests.get(server.api + "/v1/orgs", headers=auth(agent["api_key"]))
    assert r.status_code == 200
    assert [(o["org_id"], o["role"]) for o in r.json()["organizations"]] == \
        [(account["organization"]["org_id"], "member")]


def test_agent_without_grants_has_no_warehouse(server, account):
    r = create_agent(server, account, {"name": "idle-" + uuid.uuid4().hex[:6]})
    assert r.status_code == 201, r.text
    assert r.json()["grants"] == []
    assert_api_error(get_connection(server, r.json()["api_key"]), 404, "warehouse_not_found")


def test_agent_creation_errors(server, account):
    wid = account["warehouse_id"]
    name = "dup-" + uuid.uuid4().hex[:6]
    assert create_agent(server, account, {"name": name}).status_code == 201
    assert_api_error(create_agent(server, account, {"name": name}), 409, "already_exists")
    assert_api_error(create_agent(server, account, {}), 400, "invalid_value", field="name")
    assert_api_error(create_agent(server, account, {"name": "x" * 101}), 400, "invalid_value")
    assert_api_error(create_agent(server, account, {"name": "r1", "role": "owner"}), 400,
                     "invalid_value", field="role")
    assert_api_error(create_agent(server, account, {
        "name": "l1", "grants": [{"warehouse_id": wid, "level": "admin"}]}), 400,
        "invalid_value", field="grants")
    assert_api_error(create_agent(server, account, {"name": "g1", "grants": "all"}), 400,
                     "invalid_value", field="grants")
    assert_api_error(create_agent(server, account, {"name": "g2", "grants": ["x"]}), 400,
                     "invalid_value", field="grants")
    other = server.signup()
    assert_api_error(create_agent(server, account, {
        "name": "w1", "grants": [{"warehouse_id": other["warehouse_id"], "level": "read"}]}),
        404, "warehouse_not_found")
    r = requests.post(f"{server.api}/v1/orgs/{other['organization']['org_id']}/agents",
                      headers=auth(account["api_key"]), json={"name": "intruder"})
    assert_api_error(r, 404, "org_not_found")
    r = requests.post(f"{server.api}/v1/orgs/{account['organization']['org_id']}/agents",
                      headers=auth(account["api_key"]), data="{oops")
    assert_api_error(r, 400, "invalid_json")


def test_a_read_agent_cannot_escalate(server, account):
    wid = account["warehouse_id"]
    r = create_agent(server, account, {"name": "ro-" + uuid.uuid4().hex[:6],
                                       "grants": [{"warehouse_id": wid, "level": "read"}]})
    reader_key = r.json()["api_key"]
    err = assert_api_error(create_agent(server, account, {
        "name": "esc-" + uuid.uuid4().hex[:6], "grants": [{"warehouse_id": wid, "level": "write"}]},
        key=reader_key), 403, "forbidden")
    assert err["your_level"] == "read" and err["requested"] == "write"
    assert_api_error(create_agent(server, account, {"name": "adm-" + uuid.uuid4().hex[:6],
                                                    "role": "admin"}, key=reader_key),
                     403, "insufficient_role")
    # Within its own level it may delegate.
    r = create_agent(server, account, {"name": "sub-" + uuid.uuid4().hex[:6],
                                       "grants": [{"warehouse_id": wid, "level": "read"}]},
                     key=reader_key)
    assert r.status_code == 201, r.text
    assert get_connection(server, r.json()["api_key"]).json()["identity"] == f"t-{wid}-ro"


# ---------------------------------------------------------------------------- health and routing

def test_healthz(server):
    r = requests.get(server.api + "/healthz")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True and body["catalog_ok"] is True and body["state_ok"] is True
    assert body["issuer"] == server.api


def test_unknown_routes_and_methods_use_the_error_envelope(server, account):
    assert_api_error(requests.get(server.api + "/v1/nothing-here"), 404, "route_not_found")
    assert_api_error(requests.get(server.api + "/v1/signup"), 405, "method_not_allowed")
    assert_api_error(requests.delete(server.api + "/v1/connection",
                                     headers=auth(account["api_key"])), 405, "method_not_allowed")

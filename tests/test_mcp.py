"""Black-box tests of the MCP server built into the CLI (`tablemere mcp run`) and of its
host installer (`tablemere mcp install`), against a real tablemere-server.

The server is driven through the official MCP Python SDK (ClientSession over
stdio_client) and, for protocol negotiation and JSON-RPC errors, through raw JSON-RPC
on a subprocess pipe. Every tool is called for real; error results must carry the API's
envelope unchanged plus http_status; the API key must never appear in a tool result, in
stderr or in --list-tools output."""

import contextlib
import http.server
import json
import os
import pathlib
import queue
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import uuid

import anyio
import pytest
import requests
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from conftest import ROOT, Server
from test_control_tables import SCHEMA

CLI = pathlib.Path(os.environ.get("TABLEMERE_CLI", ROOT / "build" / "bin" / "tablemere"))

LATEST = "2026-07-28"
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

# name -> (properties, required); every property is a string unless TYPES says otherwise.
TOOLS = {
    "whoami": ([], []),
    "usage": (["warehouse"], []),
    "list_warehouses": (["project"], []),
    "create_warehouse": (["name", "project", "idempotency_key"], ["name"]),
    "delete_warehouse": (["warehouse", "confirm"], ["warehouse", "confirm"]),
    "connection": (["warehouse", "engine"], ["warehouse"]),
    "table_credentials": (["warehouse", "namespace", "table"], ["warehouse", "namespace", "table"]),
    "grants_list": (["warehouse"], ["warehouse"]),
    "grants_set": (["warehouse", "principal", "level"], ["warehouse", "principal", "level"]),
    "grants_revoke": (["warehouse", "principal"], ["warehouse", "principal"]),
    "tokens_list": (["org"], []),
    "tokens_create": (["name", "grants", "role", "org"], ["name", "grants"]),
    "tokens_update": (["token", "name", "grants", "role", "org"], ["token"]),
    "tokens_revoke": (["token", "org"], ["token"]),
    "members_list": (["org"], []),
    "members_invite": (["email", "role", "org"], ["email"]),
    "members_set_role": (["principal", "role", "org"], ["principal", "role"]),
    "members_remove": (["principal", "org"], ["principal"]),
    "org_get": (["org"], []),
    "org_rename": (["name", "org"], ["name"]),
    "audit": (["org", "since", "action", "limit"], []),
    "terms_status": ([], []),
    "terms_accept": ([], []),
}
TYPES = {("tokens_create", "grants"): "array", ("tokens_update", "grants"): "array",
         ("audit", "limit"): "integer"}
ENUMS = {("connection", "engine"): {"duckdb", "pyiceberg", "spark", "snowflake"},
         ("grants_set", "level"): {"read", "write"},
         ("tokens_create", "role"): {"admin", "member"},
         ("members_invite", "role"): {"admin", "member"}}
READ_ONLY = {"whoami", "usage", "list_warehouses", "connection", "table_credentials",
             "grants_list", "tokens_list", "members_list", "org_get", "audit", "terms_status"}
DESTRUCTIVE = {"delete_warehouse", "grants_revoke", "tokens_revoke", "members_remove"}

CALL_TIMEOUT = 60


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def srv():
    s = Server()
    yield s
    s.cleanup()


@pytest.fixture(scope="module")
def home():
    d = tempfile.mkdtemp(prefix="tm-mcp-home-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def auth(key):
    return {"Authorization": "Bearer " + key}


def new_account(srv, email=None):
    a = srv.signup(email=email)
    [org] = requests.get(srv.api + "/v1/orgs", headers=auth(a["api_key"])).json()["organizations"]
    a["org_id"], a["handle"], a["org_name"] = org["org_id"], org["handle"], org["name"]
    return a


@pytest.fixture(scope="module")
def admin(srv):
    """An admin human (the signup principal) with its default warehouse `lake`."""
    return new_account(srv)


def secret_of(key):
    """The secret part of al_live_<key id>_<secret>."""
    parts = key.split("_")
    assert len(parts) == 4 and parts[:2] == ["al", "live"] and len(parts[3]) >= 16, key
    return parts[3]


def masked(key):
    return "al_live_" + key.split("_")[2] + "_********"


def assert_no_key(key, *texts):
    for t in texts:
        assert key not in t, "the API key leaked: " + t[:2000]
        assert secret_of(key) not in t, "the API key's secret leaked: " + t[:2000]


def free_url():
    """A loopback URL where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def mcp_env(home, url=None, key=None, **extra):
    """The server's environment: no key or URL unless given, and a HOME/credentials file
    with nothing in it so a saved key cannot stand in for a missing one."""
    env = {"HOME": home, "TABLEMERE_CREDENTIALS": os.path.join(home, "no-credentials.json")}
    if url is not None:
        env["TABLEMERE_URL"] = url
    if key is not None:
        env["TABLEMERE_API_KEY"] = key
    env.update(extra)
    return env


# ---------------------------------------------------------------------------- SDK client

class Tools:
    """A ClientSession with helpers; every text it receives is checked for the key."""

    def __init__(self, session, key):
        self.session, self.key, self.texts = session, key, []

    async def call(self, name, args=None):
        with anyio.fail_after(CALL_TIMEOUT):
            result = await self.session.call_tool(name, args or {})
        assert result.content, (name, result)
        first = result.content[0]
        assert first.type == "text", (name, result)
        self.texts.append(first.text)
        if self.key:
            assert_no_key(self.key, *[c.text for c in result.content if c.type == "text"])
            if result.structured_content is not None:
                assert_no_key(self.key, json.dumps(result.structured_content))
        return result, json.loads(first.text)

    async def ok(self, name, args=None):
        result, body = await self.call(name, args)
        assert not result.is_error, f"{name}({args}) failed: {result.content[0].text}"
        return body

    async def err(self, name, args=None):
        result, body = await self.call(name, args)
        assert result.is_error is True, f"{name}({args}) should fail: {result.content[0].text}"
        assert isinstance(body, dict) and isinstance(body.get("error"), dict), body
        assert isinstance(body["error"].get("code"), str) and body["error"]["code"], body
        assert isinstance(body["error"].get("message"), str) and body["error"]["message"], body
        return body


async def _session(home, url, key, fn, args=(), env=None):
    errlog = tempfile.TemporaryFile(mode="w+")
    params = StdioServerParameters(command=str(CLI), args=["mcp", "run", *args],
                                   env=env if env is not None else mcp_env(home, url, key))
    try:
        with anyio.fail_after(240):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                    with anyio.fail_after(CALL_TIMEOUT):
                        init = await session.initialize()
                    tools = Tools(session, key)
                    tools.init = init
                    out = await fn(tools)
    finally:
        errlog.seek(0)
        stderr = errlog.read()
        errlog.close()
    if key:
        assert_no_key(key, stderr)
    return out


def run_session(home, url, key, fn, args=(), env=None):
    """Starts `tablemere mcp run`, initialises through the SDK and runs fn(tools)."""
    try:
        return anyio.run(_session, home, url, key, fn, args, env)
    except BaseExceptionGroup as group:  # the task groups of the SDK wrap the real failure
        leaf = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None


# ---------------------------------------------------------------------------- raw JSON-RPC

class Raw:
    """`tablemere mcp run` on a pipe, spoken to in newline-delimited JSON-RPC."""

    def __init__(self, home, url, key, args=()):
        env = dict(os.environ)
        env.pop("TABLEMERE_API_KEY", None)
        env.update(mcp_env(home, url, key))
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([str(CLI), "mcp", "run", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def recv(self, timeout=20):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no answer from tablemere mcp run within %ss" % timeout)
        assert line is not None, "tablemere mcp run closed stdout: " + self.err_text()
        return json.loads(line)

    def request(self, id_, method, params=None):
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        answer = self.recv()
        assert answer.get("jsonrpc") == "2.0" and answer.get("id") == id_, answer
        return answer

    def initialize(self, version):
        return self.request(1, "initialize", {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}})

    def err_text(self):
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self):
        """Closes stdin (the MCP stdio shutdown) and returns the exit code."""
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "did not exit within 5 s of stdin closing"


# ---------------------------------------------------------------------------- listing

def check_tool_listing(tools):
    """tools: list of dicts {name, description, inputSchema, annotations}."""
    names = [t["name"] for t in tools]
    assert len(names) == 23 and set(names) == set(TOOLS), sorted(names)
    for t in tools:
        name = t["name"]
        assert isinstance(t.get("description"), str) and t["description"].strip(), t
        schema = t["inputSchema"]
        assert schema.get("type") == "object", (name, schema)
        props, required = TOOLS[name]
        got_props = schema.get("properties") or {}
        assert set(got_props) == set(props), (name, sorted(got_props))
        assert set(schema.get("required") or []) == set(required), (name, schema.get("required"))
        for p in props:
            assert got_props[p].get("type") == TYPES.get((name, p), "string"), (name, p, got_props[p])
            if (name, p) in ENUMS:
                assert set(got_props[p].get("enum") or []) == ENUMS[(name, p)], (name, p, got_props[p])
        if name in ("tokens_create", "tokens_update"):
            item = got_props["grants"].get("items") or {}
            assert item.get("type") == "object", (name, item)
            assert {"warehouse", "level"} <= set(item.get("properties") or {}), (name, item)
        ann = t.get("annotations") or {}
        if name in READ_ONLY:
            assert ann.get("readOnlyHint") is True, (name, ann)
            assert ann.get("destructiveHint") is not True, (name, ann)
        else:
            assert ann.get("readOnlyHint") is not True, (name, ann)
        if name in DESTRUCTIVE:
            assert ann.get("destructiveHint") is True, (name, ann)
        elif name not in READ_ONLY:
            assert ann.get("destructiveHint") is not True, (name, ann)


def test_initialise_and_list_tools_through_the_sdk(srv, admin, home):
    async def body(t):
        assert t.init.protocol_version == "2025-11-25"  # the SDK's newest handshake, echoed
        assert t.init.capabilities.tools is not None
        assert t.init.server_info.name
        listed = await t.session.list_tools()
        assert listed.next_cursor is None
        return [tool.model_dump(by_alias=True, exclude_none=True, mode="json")
                for tool in listed.tools]
    tools = run_session(home, srv.api, admin["api_key"], body)
    check_tool_listing(tools)
    assert_no_key(admin["api_key"], json.dumps(tools))


def test_list_tools_flag_prints_every_tool_and_exits(srv, admin, home):
    env = dict(os.environ, **mcp_env(home, srv.api, admin["api_key"]))
    r = subprocess.run([str(CLI), "mcp", "run", "--", "--list-tools"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    tools = json.loads(r.stdout)
    assert isinstance(tools, list)
    for t in tools:
        assert {"name", "description", "inputSchema", "annotations"} <= set(t), t
    check_tool_listing(tools)
    assert_no_key(admin["api_key"], r.stdout, r.stderr)
    # The same tools and schemas as tools/list.
    async def body(t):
        return (await t.session.list_tools()).tools
    sdk = {tool.name: tool.input_schema for tool in run_session(home, srv.api, admin["api_key"], body)}
    assert {t["name"]: t["inputSchema"] for t in tools} == sdk
    # Without any key it still lists (nothing is called).
    env = dict(os.environ, **mcp_env(home))
    env.pop("TABLEMERE_API_KEY", None)
    r = subprocess.run([str(CLI), "mcp", "run", "--", "--list-tools"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 23


# ---------------------------------------------------------------------------- raw protocol

@pytest.mark.parametrize("requested,answered", [(v, v) for v in VERSIONS] +
                         [("1999-01-01", LATEST), ("2025-13-45", LATEST)])
def test_protocol_version_negotiation(srv, admin, home, requested, answered):
    raw = Raw(home, srv.api, admin["api_key"])
    try:
        answer = raw.initialize(requested)
        assert "error" not in answer, answer
        result = answer["result"]
        assert result["protocolVersion"] == answered, result
        assert "tools" in result["capabilities"], result
        assert result["serverInfo"]["name"], result
    finally:
        assert raw.close() == 0
    assert_no_key(admin["api_key"], raw.err_text())


def test_raw_json_rpc_methods_and_errors(srv, admin, home):
    key = admin["api_key"]
    raw = Raw(home, srv.api, key)
    try:
        assert raw.initialize("2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
        # A notification is never answered: the next line is the ping's answer.
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert raw.request(2, "ping")["result"] == {}
        # Unknown method: -32601, with the request's id (a string id is echoed as such).
        answer = raw.request("x-3", "no/such/method", {})
        assert answer["error"]["code"] == -32601, answer
        assert "result" not in answer
        listed = raw.request(4, "tools/list", {})["result"]["tools"]
        assert sorted(t["name"] for t in listed) == sorted(TOOLS)
        # A real call over the raw pipe.
        answer = raw.request(5, "tools/call", {"name": "whoami", "arguments": {}})
        result = answer["result"]
        assert result.get("isError") in (False, None), result
        assert admin["principal_id"] in result["content"][0]["text"]
        # Unknown tool: an error (JSON-RPC error or an isError result), never a success.
        answer = raw.request(6, "tools/call", {"name": "drop_everything", "arguments": {}})
        assert "error" in answer or answer["result"].get("isError") is True, answer
        if "error" in answer:
            assert answer["error"]["code"] in (-32602, -32601), answer
        # A required argument missing: an error too, and the server keeps serving.
        missing = raw.request(7, "tools/call", {"name": "connection", "arguments": {}})
        assert "error" in missing or missing["result"].get("isError") is True, missing
        assert raw.request(8, "ping")["result"] == {}
        # Pipelined requests: both answered, each with its own id.
        raw.send({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                  "params": {"name": "terms_status", "arguments": {}}})
        raw.send({"jsonrpc": "2.0", "id": 21, "method": "ping"})
        got = {m["id"]: m for m in (raw.recv(), raw.recv())}
        assert set(got) == {20, 21} and got[21]["result"] == {}, got
        assert got[20]["result"].get("isError") in (False, None), got
        outputs = json.dumps(listed) + json.dumps(result) + json.dumps(answer)
    finally:
        rc = raw.close()
    assert rc == 0, rc
    assert_no_key(key, outputs, raw.err_text())


@pytest.mark.parametrize("bad,code", [
    ("not json at all", -32700),
    ('{"jsonrpc": 2, "id": 1, "method": "ping"}', -32600),
    ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "whoami"}', -32602),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": [1]}}', -32602),
], ids=["parse", "jsonrpc-number", "jsonrpc-1.0", "method-number", "params-string", "arguments-array"])
def test_malformed_messages_are_answered_and_the_server_survives(srv, admin, home, bad, code):
    raw = Raw(home, srv.api, admin["api_key"])
    try:
        raw.initialize("2025-11-25")
        raw.proc.stdin.write(bad.encode() + b"\n")
        raw.proc.stdin.flush()
        answer = raw.recv()
        assert answer.get("jsonrpc") == "2.0" and answer["error"]["code"] == code, answer
        assert raw.request(99, "ping")["result"] == {}
    finally:
        rc = raw.close()
    assert rc == 0, (rc, raw.err_text()[-2000:])


def nested(depth, inner="0"):
    """`inner` inside `depth` nested arrays, as JSON text."""
    return "[" * depth + inner + "]" * depth


def ping_with_params(id_, params_text):
    return '{"jsonrpc": "2.0", "id": %s, "method": "ping", "params": %s}' % (id_, params_text)


@pytest.mark.parametrize("line", [
    '{"jsonrpc": "2.0", "id": %s, "method": "ping"}' % nested(100_000),
    ping_with_params(1, '{"x": %s}' % nested(100_000)),
    ping_with_params(1, '{"x": %s}' % nested(63)),  # 65 levels with the message and params
    "[" + ping_with_params(1, nested(63)) + "]",    # in a batch
    '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"s": "%s", "x": %s}}'
    % ("]" * 100 + "\\\"" + "}" * 100, nested(150)),  # brackets in a string close nothing
], ids=["id-100000", "params-100000", "depth-65", "batch-depth-65", "brackets-in-strings"])
def test_a_message_nested_too_deep_is_refused_and_the_server_survives(srv, admin, home, line):
    # nlohmann::json copies and dumps recursively: 100,000 nested arrays would overflow the
    # stack. Anything deeper than 64 levels is refused before it is parsed.
    raw = Raw(home, srv.api, admin["api_key"])
    try:
        raw.initialize("2025-11-25")
        raw.proc.stdin.write(line.encode() + b"\n")
        raw.proc.stdin.flush()
        answer = raw.recv()
        assert answer.get("jsonrpc") == "2.0" and "result" not in answer, answer
        assert answer["error"]["code"] in (-32700, -32600) and answer["id"] is None, answer
        assert raw.request(99, "ping")["result"] == {}
    finally:
        rc = raw.close()
    assert rc == 0, (rc, raw.err_text()[-2000:])


def test_a_message_64_levels_deep_is_served(srv, admin, home):
    raw = Raw(home, srv.api, admin["api_key"])
    try:
        raw.initialize("2025-11-25")
        # The message (1), params (2), then 62 arrays: 64 levels, and brackets in strings
        # (escaped quotes too) do not count.
        raw.proc.stdin.write(ping_with_params(7, '{"x": %s}' % nested(62, '"[[[\\"{{"')).encode() + b"\n")
        raw.proc.stdin.flush()
        answer = raw.recv()
        assert answer == {"jsonrpc": "2.0", "id": 7, "result": {}}, answer
    finally:
        rc = raw.close()
    assert rc == 0, (rc, raw.err_text()[-2000:])


@pytest.mark.parametrize("bad_id", ['{"a": 1}', "[1]", "true", "false", "[]", "{}"])
def test_an_id_that_is_not_a_string_number_or_null_is_an_invalid_request(srv, admin, home, bad_id):
    raw = Raw(home, srv.api, admin["api_key"])
    try:
        raw.initialize("2025-11-25")
        for method in ("ping", "tools/list", "no/such/method"):
            raw.proc.stdin.write(('{"jsonrpc": "2.0", "id": %s, "method": "%s"}' % (bad_id, method)).encode() + b"\n")
            raw.proc.stdin.flush()
            answer = raw.recv()
            assert answer == {"jsonrpc": "2.0", "id": None,
                              "error": {"code": -32600, "message": answer["error"]["message"]}}, answer
        # A string, a number (even a fraction) and null are ids, echoed as sent.
        for good in ("x-1", 5, 2.5, None):
            assert raw.request(good, "ping")["result"] == {}
    finally:
        rc = raw.close()
    assert rc == 0, (rc, raw.err_text()[-2000:])


def test_unknown_tool_through_the_sdk(srv, admin, home):
    async def body(t):
        try:
            result = await t.session.call_tool("drop_everything", {})
        except MCPError as e:
            return ("jsonrpc", e.code)
        return ("result", result.is_error)
    kind, value = run_session(home, srv.api, admin["api_key"], body)
    assert (kind == "jsonrpc" and value in (-32602, -32601)) or (kind, value) == ("result", True)


# ---------------------------------------------------------------------------- every tool

def test_read_tools(srv, admin, home):
    key, wid, pid, org = admin["api_key"], admin["warehouse_id"], admin["principal_id"], admin["org_id"]

    async def body(t):
        who = await t.ok("whoami")
        text = json.dumps(who)
        assert pid in text and org in text and admin["project_id"] in text, who
        assert "admin" in text, who  # the role in the organisation

        usage = await t.ok("usage")
        assert usage["principal_id"] == pid and usage["limits"]["warehouses"] == 3, usage
        one = await t.ok("usage", {"warehouse": "lake"})
        assert wid in json.dumps(one), one

        listed = await t.ok("list_warehouses")
        assert wid in json.dumps(listed) and "lake" in json.dumps(listed), listed
        by_project = await t.ok("list_warehouses", {"project": admin["project_id"]})
        assert wid in json.dumps(by_project), by_project

        for ref in (wid, "lake"):
            c = await t.ok("connection", {"warehouse": ref})
            assert c["warehouse_id"] == wid and c["engine"] == "duckdb" and "sql" in c, c
            assert c["level"] == "write", c
        c = await t.ok("connection", {"warehouse": "lake", "engine": "pyiceberg"})
        assert c["engine"] == "pyiceberg" and "python" in c, c
        c = await t.ok("connection", {"warehouse": "lake", "engine": "spark"})
        assert c["engine"] == "spark" and "conf" in c, c

        grants = await t.ok("grants_list", {"warehouse": "lake"})
        assert pid in json.dumps(grants), grants

        for args in ({}, {"org": org}, {"org": admin["handle"]}):
            o = await t.ok("org_get", args)
            assert org in json.dumps(o) and admin["handle"] in json.dumps(o), (args, o)
        members = await t.ok("members_list")
        assert pid in json.dumps(members), members
        assert org in json.dumps(await t.ok("members_list", {"org": admin["handle"]}))

        tokens = await t.ok("tokens_list")
        assert tokens["agents"] == [] and tokens["org_id"] == org, tokens

        terms = await t.ok("terms_status")
        assert terms["accepted_current"] is True and terms["current_version"], terms

        events = await t.ok("audit")
        assert events["scope"] == "own" and events["count"] >= 1, events
        assert all(e["principal_id"] == pid and e["action"] for e in events["events"]), events
        return True
    assert run_session(home, srv.api, key, body)


def test_connection_for_snowflake(srv, admin, home):
    """The tool's engine enum (and GET /v1/connection in the API reference) include snowflake:
    the read-only recipe with static keys."""
    async def body(t):
        return await t.ok("connection", {"warehouse": "lake", "engine": "snowflake"})
    c = run_session(home, srv.api, admin["api_key"], body)
    assert c["engine"] == "snowflake" and "sql" in c and c["identity"].endswith("-ro"), c


def test_create_warehouse_idempotency_and_table_credentials(srv, home):
    a = new_account(srv)
    key = a["api_key"]
    name = "wh-" + uuid.uuid4().hex[:6]
    idem = uuid.uuid4().hex

    async def body(t):
        first = await t.ok("create_warehouse", {"name": name, "idempotency_key": idem})
        again = await t.ok("create_warehouse", {"name": name, "idempotency_key": idem})
        assert first["warehouse_id"] == again["warehouse_id"], (first, again)
        assert first["name"] == name and first["project_id"] == a["project_id"], first
        # Without an idempotency key each call is a new request: the name is taken now.
        dup = await t.err("create_warehouse", {"name": name})
        assert dup["http_status"] == 409 and dup["error"]["code"] == "already_exists", dup
        # A named project works too (the default project, by id).
        other = await t.ok("create_warehouse", {"name": name + "-b", "project": a["project_id"],
                                                "idempotency_key": uuid.uuid4().hex})
        assert other["warehouse_id"] != first["warehouse_id"] and other["project_id"] == a["project_id"]
        # Over the limit (3 per project): the API's envelope, unchanged.
        over = await t.err("create_warehouse", {"name": name + "-c"})
        assert over["http_status"] == 409 and over["error"]["code"] == "limit_exceeded", over
        return first["warehouse_id"]
    wid = run_session(home, srv.api, key, body)

    r = requests.get(srv.api + "/v1/warehouses", headers=auth(key), params={"project": a["project_id"]})
    listed = {w["name"]: w["warehouse_id"] for w in r.json()["warehouses"]}
    assert set(listed) == {"lake", name, name + "-b"} and listed[name] == wid, listed

    r = requests.post(srv.api + "/v1/tables", headers=auth(key), json={
        "warehouse_id": wid, "namespace": "sales", "name": "orders", "schema": SCHEMA})
    assert r.status_code == 201, r.text

    async def creds(t):
        for ref in (name, wid):
            c = await t.ok("table_credentials", {"warehouse": ref, "namespace": "sales", "table": "orders"})
            assert c["table"] == "sales.orders" and c["level"] == "write", c
            assert c["storage"]["s3.access-key-id"] and c["storage"]["s3.session-token"], c
            assert c["location"].startswith(f"s3://w-{wid}/"), c
        missing = await t.err("table_credentials", {"warehouse": name, "namespace": "sales", "table": "nope"})
        assert missing["http_status"] == 404 and missing["error"]["code"] == "table_not_found", missing
        c = await t.ok("connection", {"warehouse": name})
        assert c["warehouse_id"] == wid, c
        return True
    assert run_session(home, srv.api, key, creds)
    # The vend is on record.
    events = requests.get(srv.api + "/v1/audit", headers=auth(key),
                          params={"action": "credentials.vend"}).json()["events"]
    assert len(events) == 2, events


def test_grants_and_tokens(srv, home):
    a = new_account(srv)
    key, org, lake = a["api_key"], a["org_id"], a["warehouse_id"]
    tok_name = "claude-" + uuid.uuid4().hex[:6]

    async def body(t):
        second = await t.ok("create_warehouse", {"name": "second"})
        wid2 = second["warehouse_id"]
        created = await t.ok("tokens_create", {"name": tok_name,
                                               "grants": [{"warehouse": "lake", "level": "read"}]})
        agent_id, token_key = created["agent_id"], created["api_key"]
        assert token_key.startswith("al_live_") and created["name"] == tok_name, created
        assert created["role"] == "member", created
        assert created["grants"] == [{"warehouse_id": lake, "name": "lake", "level": "read"}], created

        tokens = await t.ok("tokens_list", {"org": org})
        [listed] = [x for x in tokens["agents"] if x["agent_id"] == agent_id]
        assert listed["name"] == tok_name and "api_key" not in listed, listed

        # grants_set / grants_list / grants_revoke, with the warehouse by id and by name.
        g = await t.ok("grants_set", {"warehouse": wid2, "principal": agent_id, "level": "write"})
        assert (g["principal_id"], g["level"], g["warehouse_id"]) == (agent_id, "write", wid2), g
        grants = await t.ok("grants_list", {"warehouse": "second"})
        rows = grants if isinstance(grants, list) else grants.get("grants")
        assert isinstance(rows, list), grants
        [row] = [x for x in rows if x["principal_id"] == agent_id]
        assert row["level"] == "write" and row["via"] == "grant", row
        revoked = await t.ok("grants_revoke", {"warehouse": "second", "principal": agent_id})
        assert revoked["principal_id"] == agent_id and revoked["revoked"]["level"] == "write", revoked
        grants = await t.ok("grants_list", {"warehouse": wid2})
        rows = grants if isinstance(grants, list) else grants.get("grants")
        assert agent_id not in json.dumps(rows), grants
        gone = await t.err("grants_revoke", {"warehouse": wid2, "principal": agent_id})
        assert gone["http_status"] == 404 and gone["error"]["code"] == "grant_not_found", gone

        # tokens_update: name, grants and role at once.
        updated = await t.ok("tokens_update", {
            "token": agent_id, "name": tok_name + "-2", "role": "admin",
            "grants": [{"warehouse": wid2, "level": "write"}, {"warehouse": "lake", "level": "read"}]})
        assert updated["name"] == tok_name + "-2" and updated["role"] == "admin", updated
        assert sorted((x["warehouse_id"], x["level"]) for x in updated["grants"]) == \
            sorted([(wid2, "write"), (lake, "read")]), updated
        # Only the name: the grants stay.
        renamed = await t.ok("tokens_update", {"token": agent_id, "name": tok_name + "-3", "org": a["handle"]})
        assert renamed["name"] == tok_name + "-3" and len(renamed["grants"]) == 2, renamed

        # The token's key works until tokens_revoke.
        r = requests.get(srv.api + "/v1/connection", headers=auth(token_key),
                         params={"warehouse_id": wid2})
        assert r.status_code == 200 and r.json()["level"] == "write", r.text
        out = await t.ok("tokens_revoke", {"token": agent_id})
        assert out["agent_id"] == agent_id and out["revoked"] is True, out
        return agent_id, token_key, wid2
    agent_id, token_key, wid2 = run_session(home, srv.api, key, body)
    r = requests.get(srv.api + "/v1/connection", headers=auth(token_key), params={"warehouse_id": wid2})
    assert r.status_code == 401, r.text
    agents = requests.get(f"{srv.api}/v1/orgs/{org}/agents", headers=auth(key)).json()["agents"]
    [agent] = [x for x in agents if x["agent_id"] == agent_id]
    assert agent["suspended"] is True and agent["name"] == tok_name + "-3", agent


def test_members_invite_set_role_and_remove(srv, home):
    a = new_account(srv)
    key, org = a["api_key"], a["org_id"]
    email = f"bo-{uuid.uuid4().hex[:8]}@example.com"

    async def invite(t):
        inv = await t.ok("members_invite", {"email": email})
        assert inv["token"].startswith("inv_") and inv["email"] == email and inv["role"] == "member", inv
        inv2 = await t.ok("members_invite", {"email": "x-" + email, "role": "admin", "org": a["handle"]})
        assert inv2["role"] == "admin" and inv2["org_id"] == org, inv2
        return inv
    run_session(home, srv.api, key, invite)
    member = srv.signup(email=email)  # the invitation applies on signup
    mid = member["principal_id"]

    async def manage(t):
        listed = await t.ok("members_list")
        rows = {m["principal_id"]: m for m in listed["members"]}
        assert rows[mid]["role"] == "member" and rows[a["principal_id"]]["role"] == "admin", listed
        r = await t.ok("members_set_role", {"principal": mid, "role": "admin"})
        assert (r["principal_id"], r["role"]) == (mid, "admin"), r
        rows = {m["principal_id"]: m for m in (await t.ok("members_list", {"org": org}))["members"]}
        assert rows[mid]["role"] == "admin"
        r = await t.ok("members_set_role", {"principal": mid, "role": "member", "org": a["handle"]})
        assert r["role"] == "member", r
        r = await t.ok("members_remove", {"principal": mid})
        assert r["principal_id"] == mid and r["removed"] is True, r
        rows = {m["principal_id"] for m in (await t.ok("members_list"))["members"]}
        assert rows == {a["principal_id"]}, rows
        # The last admin cannot be demoted: the API's 409, unchanged.
        last = await t.err("members_set_role", {"principal": a["principal_id"], "role": "member"})
        assert last["http_status"] == 409 and last["error"]["code"] == "last_admin", last
        gone = await t.err("members_remove", {"principal": mid})
        assert gone["http_status"] == 404 and gone["error"]["code"] == "member_not_found", gone
        return True
    assert run_session(home, srv.api, key, manage)


def test_org_rename_terms_and_audit(srv, home):
    a = new_account(srv)
    key, org = a["api_key"], a["org_id"]
    new_name = "Renamed " + uuid.uuid4().hex[:6]

    async def body(t):
        r = await t.ok("org_rename", {"name": new_name})
        assert r["name"] == new_name and r["org_id"] == org, r
        r = await t.ok("org_rename", {"name": new_name + "!", "org": a["handle"]})
        assert r["name"] == new_name + "!", r
        assert new_name + "!" in json.dumps(await t.ok("org_get"))

        acc = await t.ok("terms_accept")
        status = await t.ok("terms_status")
        assert acc == {"accepted": True, "version": status["current_version"]}, acc

        ev = await t.ok("audit", {"org": org, "action": "org.update", "since": "24h", "limit": 1})
        assert ev["scope"] == "organization" and ev["limit"] == 1, ev
        assert len(ev["events"]) == 1 and ev["events"][0]["action"] == "org.update", ev
        ev = await t.ok("audit", {"action": "terms.*", "limit": 50})
        assert ev["events"] and {e["action"] for e in ev["events"]} == {"terms.accept"}, ev
        ev = await t.ok("audit", {"org": a["handle"]})
        assert ev["scope"] == "organization" and ev["count"] >= 2, ev
        bad = await t.err("audit", {"org": "o_doesnotexist"})
        assert bad["error"]["code"] in ("org_not_found", "not_found") and \
            bad.get("http_status", 404) == 404, bad
        return True
    assert run_session(home, srv.api, key, body)
    [listed] = requests.get(srv.api + "/v1/orgs", headers=auth(key)).json()["organizations"]
    assert listed["name"] == new_name + "!"


# ---------------------------------------------------------------------------- delete_warehouse

def warehouse_names(srv, key, project):
    r = requests.get(srv.api + "/v1/warehouses", headers=auth(key), params={"project": project})
    assert r.status_code == 200, r.text
    return {w["name"]: w["warehouse_id"] for w in r.json()["warehouses"]}


def test_delete_warehouse_needs_the_exact_name(srv, home):
    a = new_account(srv)
    key = a["api_key"]
    name = "doomed-" + uuid.uuid4().hex[:6]

    async def body(t):
        wid = (await t.ok("create_warehouse", {"name": name}))["warehouse_id"]
        for wrong in ("lake", name.upper(), name + " ", name[:-1]):
            for ref in (wid, name):
                e = await t.err("delete_warehouse", {"warehouse": ref, "confirm": wrong})
                assert e["error"]["code"] == "confirmation_required", e
                assert e["error"]["confirm_with"] == name and e["error"]["field"] == "confirm", e
                assert "http_status" not in e, e
        # An empty confirmation is refused before anything is sent as well.
        e = await t.err("delete_warehouse", {"warehouse": wid, "confirm": ""})
        assert e["error"]["code"] in ("confirmation_required", "invalid_value") and "http_status" not in e, e
        return wid
    wid = run_session(home, srv.api, key, body)
    assert warehouse_names(srv, key, a["project_id"]).get(name) == wid
    events = requests.get(srv.api + "/v1/audit", headers=auth(key),
                          params={"action": "warehouse.delete"}).json()["events"]
    assert events == [], events  # nothing was sent

    # A member (not an admin) with the right confirmation is refused by the API itself.
    email = f"mem-{uuid.uuid4().hex[:8]}@example.com"
    r = requests.post(f"{srv.api}/v1/orgs/{a['org_id']}/invitations", headers=auth(key),
                      json={"email": email, "role": "member"})
    assert r.status_code == 201, r.text
    member = srv.signup(email=email)

    async def as_member(t):
        return await t.err("delete_warehouse", {"warehouse": wid, "confirm": name})
    e = run_session(home, srv.api, member["api_key"], as_member)
    assert e["http_status"] == 403 and e["error"]["code"] in ("forbidden", "insufficient_role"), e
    assert warehouse_names(srv, key, a["project_id"]).get(name) == wid

    async def delete(t):
        out = await t.ok("delete_warehouse", {"warehouse": name, "confirm": name})
        assert out["deleted"] is True and out["warehouse_id"] == wid and out["name"] == name, out
        return await t.err("delete_warehouse", {"warehouse": wid, "confirm": name})
    again = run_session(home, srv.api, key, delete)
    assert name not in warehouse_names(srv, key, a["project_id"])
    assert warehouse_names(srv, key, a["project_id"])["lake"] == a["warehouse_id"]
    # Deleted: the id is unknown now, the API's 404.
    assert again["error"]["code"] == "warehouse_not_found" and again.get("http_status") == 404, again


def test_ambiguous_warehouse_name(srv, home):
    a = new_account(srv)
    key = a["api_key"]
    r = requests.post(srv.api + "/v1/projects", headers=auth(key), json={"name": "p2-" + uuid.uuid4().hex[:6]})
    assert r.status_code == 201, r.text
    p2 = r.json()["project_id"]
    r = requests.post(srv.api + "/v1/warehouses", headers=auth(key), json={"project_id": p2, "name": "lake"})
    assert r.status_code == 201, r.text
    wid2 = r.json()["warehouse_id"]

    async def body(t):
        for tool, args in (("delete_warehouse", {"warehouse": "lake", "confirm": "lake"}),
                           ("connection", {"warehouse": "lake"})):
            e = await t.err(tool, args)
            assert e["error"]["code"] == "ambiguous_name", e
            cands = e["error"].get("candidates", e.get("candidates"))
            assert isinstance(cands, list) and len(cands) == 2, e
            assert a["warehouse_id"] in json.dumps(cands) and wid2 in json.dumps(cands), e
            if tool == "delete_warehouse":
                assert "http_status" not in e, e
        # By id there is no ambiguity.
        c = await t.ok("connection", {"warehouse": wid2})
        assert c["warehouse_id"] == wid2
        return True
    assert run_session(home, srv.api, key, body)
    assert warehouse_names(srv, key, a["project_id"])["lake"] == a["warehouse_id"]
    assert warehouse_names(srv, key, p2)["lake"] == wid2


# ---------------------------------------------------------------------------- errors

ADMIN_ERRORS = [
    # (tool, arguments ({pid} = the admin's principal_id, {wid} = lake's id), http_status, code)
    ("connection", {"warehouse": "nowhere"}, 404, "warehouse_not_found"),
    ("connection", {"warehouse": "00000000-0000-4000-8000-000000000000"}, 404, "warehouse_not_found"),
    ("grants_list", {"warehouse": "nowhere"}, 404, "warehouse_not_found"),
    ("usage", {"warehouse": "nowhere"}, 404, "warehouse_not_found"),
    ("table_credentials", {"warehouse": "nowhere", "namespace": "a", "table": "b"}, 404, "warehouse_not_found"),
    ("table_credentials", {"warehouse": "lake", "namespace": "nons", "table": "b"}, 404, "namespace_not_found"),
    ("delete_warehouse", {"warehouse": "nowhere", "confirm": "nowhere"}, 404, "warehouse_not_found"),
    ("grants_set", {"warehouse": "lake", "principal": "{pid}", "level": "admin"}, 400, "invalid_value"),
    ("grants_set", {"warehouse": "{wid}", "principal": "p_doesnotexist", "level": "read"}, 404, "principal_not_found"),
    ("grants_revoke", {"warehouse": "{wid}", "principal": "{pid}"}, 409, "implicit_grant"),
    ("connection", {"warehouse": "lake", "engine": "oracle"}, 400, "unsupported_engine"),
    ("tokens_revoke", {"token": "a_doesnotexist"}, 404, "agent_not_found"),
    ("tokens_update", {"token": "a_doesnotexist", "name": "x"}, 404, "agent_not_found"),
    ("members_remove", {"principal": "p_doesnotexist"}, 404, "member_not_found"),
    ("members_set_role", {"principal": "p_doesnotexist", "role": "admin"}, 404, "member_not_found"),
    ("members_invite", {"email": "not-an-address"}, 400, "invalid_value"),
    ("create_warehouse", {"name": "x", "project": "no-such-project"}, 404, "project_not_found"),
    ("tokens_create", {"name": "bad-level", "grants": [{"warehouse": "{wid}", "level": "owner"}]}, 400, "invalid_value"),
    ("tokens_create", {"name": "bad-wh", "grants": [{"warehouse": "nowhere", "level": "read"}]}, 404,
     "warehouse_not_found"),
    ("audit", {"since": "yesterday-ish"}, 400, "invalid_value"),
]


@pytest.mark.parametrize("tool,args,status,code", ADMIN_ERRORS,
                         ids=[f"{t}-{c}-{i}" for i, (t, _, _, c) in enumerate(ADMIN_ERRORS)])
def test_api_errors_carry_the_envelope_and_http_status(srv, admin, home, tool, args, status, code):
    args = json.loads(json.dumps(args).replace("{pid}", admin["principal_id"])
                      .replace("{wid}", admin["warehouse_id"]))

    async def body(t):
        return await t.err(tool, args)
    e = run_session(home, srv.api, admin["api_key"], body)
    assert (e["error"]["code"], e.get("http_status")) == (code, status), e
    assert set(e) == {"error", "http_status"}, e
    assert isinstance(e["error"].get("request_id"), str) and e["error"]["request_id"], e


@pytest.mark.parametrize("case", ["connection", "grants_set", "tokens_revoke"])
def test_error_envelope_is_the_api_answer_unchanged(srv, admin, home, case):
    key, wid, pid, org = admin["api_key"], admin["warehouse_id"], admin["principal_id"], admin["org_id"]
    tool, args, direct = {
        "connection": ("connection", {"warehouse": "nowhere"},
                       lambda: requests.get(srv.api + "/v1/connection", headers=auth(key),
                                            params={"warehouse_id": "nowhere"})),
        "grants_set": ("grants_set", {"warehouse": wid, "principal": pid, "level": "admin"},
                       lambda: requests.put(f"{srv.api}/v1/warehouses/{wid}/grants/{pid}",
                                            headers=auth(key), json={"level": "admin"})),
        "tokens_revoke": ("tokens_revoke", {"token": "a_doesnotexist"},
                          lambda: requests.delete(f"{srv.api}/v1/orgs/{org}/agents/a_doesnotexist",
                                                  headers=auth(key))),
    }[case]

    async def body(t):
        return await t.err(tool, args)
    e = run_session(home, srv.api, key, body)
    r = direct()
    want, got = dict(r.json()["error"]), dict(e["error"])
    assert want.pop("request_id")
    assert got.pop("request_id", None), e
    assert (got, e.get("http_status")) == (want, r.status_code), (e, r.text)


@pytest.fixture(scope="module")
def confined_token(srv):
    """A member token with read on `lake` only; its organisation also has `second`."""
    a = new_account(srv)
    r = requests.post(srv.api + "/v1/warehouses", headers=auth(a["api_key"]),
                      json={"project_id": a["project_id"], "name": "second"})
    assert r.status_code == 201, r.text
    second = r.json()["warehouse_id"]
    r = requests.post(f"{srv.api}/v1/orgs/{a['org_id']}/agents", headers=auth(a["api_key"]),
                      json={"name": "confined", "grants": [{"warehouse_id": "lake", "level": "read"}]})
    assert r.status_code == 201, r.text
    return {"account": a, "second": second, "agent_id": r.json()["agent_id"], "key": r.json()["api_key"]}


def test_a_token_key_gets_what_its_grants_allow(srv, home, confined_token):
    ct, a = confined_token, confined_token["account"]

    async def body(t):
        c = await t.ok("connection", {"warehouse": "lake"})
        assert c["level"] == "read" and c["warehouse_id"] == a["warehouse_id"], c
        listed = json.dumps(await t.ok("list_warehouses"))
        assert a["warehouse_id"] in listed and ct["second"] not in listed, listed
        usage = await t.ok("usage")
        assert usage["principal_id"] == ct["agent_id"], usage
        return True
    assert run_session(home, srv.api, ct["key"], body)


TOKEN_ERRORS = [
    ("grants_set", {"warehouse": "lake", "principal": "{agent}", "level": "write"}, 403, "forbidden"),
    ("table_credentials", {"warehouse": "lake", "namespace": "a", "table": "b"}, 403, "forbidden"),
    ("connection", {"warehouse": "{second}"}, 404, "warehouse_not_found"),
]


@pytest.mark.parametrize("tool,args,status,code", TOKEN_ERRORS, ids=[c[0] for c in TOKEN_ERRORS])
def test_a_token_key_is_refused_by_the_api_beyond_its_grants(srv, home, confined_token, tool, args, status, code):
    ct = confined_token
    args = json.loads(json.dumps(args).replace("{agent}", ct["agent_id"]).replace("{second}", ct["second"]))

    async def body(t):
        return await t.err(tool, args)
    e = run_session(home, srv.api, ct["key"], body)
    assert (e["error"]["code"], e.get("http_status")) == (code, status), e
    assert e["error"].get("request_id"), e


def test_wrong_key_is_the_api_401_and_is_not_echoed(srv, admin, home):
    bad = admin["api_key"][:-4] + ("AAAA" if not admin["api_key"].endswith("AAAA") else "BBBB")

    async def body(t):
        e = await t.err("whoami")
        e2 = await t.err("connection", {"warehouse": admin["warehouse_id"]})
        return e, e2
    e, e2 = run_session(home, srv.api, bad, body)
    assert e2["http_status"] == 401 and e2["error"]["code"] == "invalid_api_key", e2
    assert e.get("http_status") == 401, e


def test_missing_credential(srv, home):
    async def body(t):
        assert len((await t.session.list_tools()).tools) == 23
        out = []
        for tool, args in (("whoami", {}), ("connection", {"warehouse": "lake"}),
                           ("delete_warehouse", {"warehouse": "lake", "confirm": "lake"}),
                           ("terms_accept", {})):
            out.append(await t.err(tool, args))
        return out
    for e in run_session(home, srv.api, None, body):
        assert e["error"]["code"] == "missing_credential" and "http_status" not in e, e


def test_unreachable(admin, home):
    url = free_url()

    async def body(t):
        return [await t.err("whoami"), await t.err("connection", {"warehouse": "lake"}),
                await t.err("delete_warehouse", {"warehouse": "lake", "confirm": "lake"})]
    for e in run_session(home, url, admin["api_key"], body):
        assert e["error"]["code"] == "unreachable" and "http_status" not in e, e


class _RouteNotFound(http.server.BaseHTTPRequestHandler):
    """An API that predates every route: 404 route_not_found for everything."""
    seen = []

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        type(self).seen.append((self.command, self.path, self.headers.get("Authorization")))
        body = json.dumps({"error": {"code": "route_not_found", "message": f"No route for {self.command} {self.path}",
                                     "request_id": "rid-1"}}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, *a):
        pass


def test_route_missing(admin, home):
    _RouteNotFound.seen = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RouteNotFound)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    key = admin["api_key"]
    try:
        async def body(t):
            return [await t.err("grants_list", {"warehouse": admin["warehouse_id"]}),
                    await t.err("tokens_update", {"token": "a_1", "name": "x"}),
                    await t.err("whoami")]
        errors = run_session(home, url, key, body)
    finally:
        httpd.shutdown()
        httpd.server_close()
    for e in errors:
        assert e["error"]["code"] == "route_missing" and "http_status" not in e, e
    assert _RouteNotFound.seen, "nothing reached the API"
    # The key leaves the process only as the Authorization header.
    assert {h for _, _, h in _RouteNotFound.seen} == {"Bearer " + key}, _RouteNotFound.seen
    for method, path, _ in _RouteNotFound.seen:
        assert_no_key(key, path)


def test_run_with_url_flag(srv, admin, home):
    async def body(t):
        return await t.ok("connection", {"warehouse": "lake"})
    env = mcp_env(home, None, admin["api_key"])
    c = run_session(home, None, admin["api_key"], body, args=["--url", srv.api], env=env)
    assert c["warehouse_id"] == admin["warehouse_id"], c


def test_the_key_never_leaks(srv, admin, home):
    """Every tool, successes and failures, with stderr captured: the key is nowhere."""
    key = admin["api_key"]
    seen = []

    async def body(t):
        for tool, args in (("whoami", {}), ("usage", {}), ("list_warehouses", {}),
                           ("connection", {"warehouse": "lake", "engine": "pyiceberg"}),
                           ("tokens_list", {}), ("members_list", {}), ("org_get", {}),
                           ("audit", {"limit": 1000}), ("terms_status", {}),
                           ("grants_list", {"warehouse": "lake"})):
            await t.ok(tool, args)
        for tool, args in (("connection", {"warehouse": "nowhere"}),
                           ("grants_set", {"warehouse": "lake", "principal": "p_x", "level": "zzz"}),
                           ("delete_warehouse", {"warehouse": "lake", "confirm": "nope"}),
                           ("tokens_update", {"token": "a_none", "name": "n"})):
            result, _ = await t.call(tool, args)
            assert result.is_error is True, (tool, result)
        seen.extend(t.texts)
        return True
    assert run_session(home, srv.api, key, body)
    assert len(seen) == 14
    assert_no_key(key, *seen)


# ---------------------------------------------------------------------------- mcp install

def install(home, args, key_env=None, path="/usr/bin:/bin", extra_env=None):
    env = {"HOME": home, "PATH": path, "LANG": "C.UTF-8",
           "TABLEMERE_CREDENTIALS": os.path.join(home, "no-credentials.json")}
    if key_env:
        env["TABLEMERE_API_KEY"] = key_env
    env.update(extra_env or {})
    return subprocess.run([str(CLI), "mcp", "install", *args], env=env, capture_output=True,
                          text=True, timeout=30)


@pytest.fixture
def tmp_home():
    d = tempfile.mkdtemp(prefix="tm-mcp-install-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def fake_claude(tmp_home):
    """A `claude` first on PATH that records its argv (NUL-separated) and exits 0."""
    bindir = os.path.join(tmp_home, "fakebin")
    os.makedirs(bindir, exist_ok=True)
    argv_file = os.path.join(tmp_home, "claude-argv")
    script = os.path.join(bindir, "claude")
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s\\0' \"$@\" > '{argv_file}'\nexit 0\n")
    os.chmod(script, 0o755)
    return bindir + ":/usr/bin:/bin", argv_file


def read_argv(argv_file):
    with open(argv_file) as f:
        return f.read().split("\0")[:-1]


def check_entry(entry, url, key):
    assert os.path.isabs(entry["command"]), entry
    assert os.path.realpath(entry["command"]) == os.path.realpath(CLI), entry
    assert entry["args"] == ["mcp", "run"], entry
    assert entry["env"] == {"TABLEMERE_URL": url, "TABLEMERE_API_KEY": key}, entry
    assert set(entry) == {"command", "args", "env"}, entry


def check_key_file_entry(entry, url, key, home):
    """Claude Code's user/local entry: the key is not in it (it goes on claude's command
    line), only the path of a private file beside the credentials file that holds it."""
    assert os.path.realpath(entry["command"]) == os.path.realpath(CLI), entry
    assert entry["args"] == ["mcp", "run"] and set(entry) == {"command", "args", "env"}, entry
    assert set(entry["env"]) == {"TABLEMERE_URL", "TABLEMERE_API_KEY_FILE"}, entry
    assert entry["env"]["TABLEMERE_URL"] == url, entry
    assert_no_key(key, json.dumps(entry))
    path = entry["env"]["TABLEMERE_API_KEY_FILE"]
    assert os.path.dirname(path) == os.path.join(home, "mcp-keys"), path
    assert open(path).read().strip() == key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, oct(os.stat(path).st_mode)
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    return path


def check_project_entry(entry, url):
    """Claude Code's project entry (the shared .mcp.json): no secret, a ${} reference."""
    assert os.path.realpath(entry["command"]) == os.path.realpath(CLI), entry
    assert entry["args"] == ["mcp", "run"] and set(entry) == {"command", "args", "env"}, entry
    assert entry["env"] == {"TABLEMERE_URL": url, "TABLEMERE_API_KEY": "${TABLEMERE_API_KEY}"}, entry


def test_install_claude_code_without_claude_prints_a_command_without_the_key(srv, admin, tmp_home):
    key = admin["api_key"]
    assert shutil.which("claude", path="/usr/bin:/bin") is None
    r = install(tmp_home, ["--client", "claude-code", "--url", srv.api, "--api-key", key])
    assert r.returncode == 0, r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    assert masked(key) in r.stdout, r.stdout
    assert "claude mcp add-json" in r.stdout, r.stdout
    assert srv.api in r.stdout, r.stdout
    # The printed command runs as it is: its entry names the private key file.
    [line] = [l for l in r.stdout.splitlines() if l.startswith("claude mcp add-json")]
    entry = json.loads(line[line.index("'{") + 1:-1])
    check_key_file_entry(entry, srv.api, key, tmp_home)
    # Nothing was written for Claude Desktop.
    assert not os.path.exists(os.path.join(tmp_home, ".config", "Claude"))


@pytest.mark.parametrize("extra,scope,name", [([], "user", "tablemere"),
                                              (["--scope", "local", "--name", "lakehouse"], "local", "lakehouse")])
def test_install_claude_code_never_puts_the_key_on_claudes_command_line(srv, admin, tmp_home, extra, scope, name):
    # claude's argv is readable by every local user (/proc/<pid>/cmdline): the key goes
    # into a 0600 file the entry names, and `tablemere mcp run` reads it from there.
    key = admin["api_key"]
    path, argv_file = fake_claude(tmp_home)
    r = install(tmp_home, ["--client", "claude-code", "--url", srv.api, "--api-key", key, *extra], path=path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    argv = read_argv(argv_file)
    assert_no_key(key, *argv)
    assert argv[:5] == ["mcp", "add-json", "--scope", scope, name] and len(argv) == 6, argv
    check_key_file_entry(json.loads(argv[5]), srv.api, key, tmp_home)


def test_install_claude_code_project_scope_writes_no_secret(srv, admin, tmp_home):
    # .mcp.json is shared and usually committed: it gets ${TABLEMERE_API_KEY}, which
    # Claude Code expands from its environment, and the user is told to set it.
    key = admin["api_key"]
    path, argv_file = fake_claude(tmp_home)
    r = install(tmp_home, ["--url", srv.api, "--api-key", key, "--scope", "project"], path=path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    argv = read_argv(argv_file)
    assert_no_key(key, *argv)
    assert argv[:5] == ["mcp", "add-json", "--scope", "project", "tablemere"] and len(argv) == 6, argv
    check_project_entry(json.loads(argv[5]), srv.api)
    assert "TABLEMERE_API_KEY" in r.stderr and "${TABLEMERE_API_KEY}" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(tmp_home, "mcp-keys")), "a key file was written"
    # No key is needed for it, and --print shows the same entry.
    os.remove(argv_file)
    r = install(tmp_home, ["--url", srv.api, "--scope", "project"], path=path)
    assert r.returncode == 0, r.stdout + r.stderr
    check_project_entry(json.loads(read_argv(argv_file)[5]), srv.api)
    r = install(tmp_home, ["--url", srv.api, "--api-key", key, "--scope", "project", "--print"], path=path)
    assert r.returncode == 0, r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    check_project_entry(json.loads(r.stdout)["mcpServers"]["tablemere"], srv.api)


def test_installed_entry_serves_with_the_key_from_its_file(srv, admin, tmp_home):
    # What Claude Code starts: exactly the installed entry's command, args and env.
    key = admin["api_key"]
    path, argv_file = fake_claude(tmp_home)
    r = install(tmp_home, ["--url", srv.api, "--api-key", key], path=path)
    assert r.returncode == 0, r.stdout + r.stderr
    entry = json.loads(read_argv(argv_file)[5])
    key_file = check_key_file_entry(entry, srv.api, key, tmp_home)
    env = {"HOME": tmp_home, "TABLEMERE_CREDENTIALS": os.path.join(tmp_home, "nothing.json"),
           **entry["env"]}

    async def body(t):
        return await t.ok("whoami")
    out = run_session(tmp_home, None, key, body, env=env)
    assert out["principal_id"] == admin["principal_id"], out
    # A key file that is gone: the server still serves, every call is missing_credential.
    os.remove(key_file)

    async def missing(t):
        return await t.err("whoami")
    e = run_session(tmp_home, None, None, missing, env=env)
    assert e["error"]["code"] == "missing_credential", e


def test_install_default_client_is_claude_code(srv, admin, tmp_home):
    key = admin["api_key"]
    path, argv_file = fake_claude(tmp_home)
    r = install(tmp_home, ["--url", srv.api, "--api-key", key], path=path)
    assert r.returncode == 0, r.stderr
    argv = read_argv(argv_file)
    assert argv[:5] == ["mcp", "add-json", "--scope", "user", "tablemere"], argv
    check_key_file_entry(json.loads(argv[5]), srv.api, key, tmp_home)


def desktop_config(home):
    return os.path.join(home, ".config", "Claude", "claude_desktop_config.json")


def test_install_claude_desktop_merges_backs_up_and_writes_0600(srv, admin, tmp_home):
    key = admin["api_key"]
    cfg = desktop_config(tmp_home)
    os.makedirs(os.path.dirname(cfg))
    original = {"mcpServers": {"other": {"command": "other-server", "args": ["x"]}},
                "globalShortcut": "Ctrl+Space"}
    with open(cfg, "w") as f:
        json.dump(original, f)
    os.chmod(cfg, 0o644)
    original_text = open(cfg).read()
    r = install(tmp_home, ["--client", "claude-desktop", "--url", srv.api, "--api-key", key])
    assert r.returncode == 0, r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    written = json.load(open(cfg))
    assert written["globalShortcut"] == "Ctrl+Space", written
    assert written["mcpServers"]["other"] == original["mcpServers"]["other"], written
    assert set(written["mcpServers"]) == {"other", "tablemere"}, written
    check_entry(written["mcpServers"]["tablemere"], srv.api, key)
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600, oct(os.stat(cfg).st_mode)
    backups = [p for p in os.listdir(os.path.dirname(cfg)) if p.startswith("claude_desktop_config.json.bak-")]
    assert len(backups) == 1, os.listdir(os.path.dirname(cfg))
    assert open(os.path.join(os.path.dirname(cfg), backups[0])).read() == original_text
    # Again, under another name: both entries, the other server still kept.
    r = install(tmp_home, ["--client", "claude-desktop", "--url", srv.api, "--api-key", key,
                           "--name", "tm2"])
    assert r.returncode == 0, r.stderr
    written = json.load(open(cfg))
    assert set(written["mcpServers"]) == {"other", "tablemere", "tm2"}, written
    check_entry(written["mcpServers"]["tm2"], srv.api, key)
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600


def test_install_claude_desktop_creates_the_file(srv, admin, tmp_home):
    key = admin["api_key"]
    r = install(tmp_home, ["--client", "claude-desktop", "--url", srv.api], key_env=key)
    assert r.returncode == 0, r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    cfg = desktop_config(tmp_home)
    written = json.load(open(cfg))
    assert list(written) == ["mcpServers"] and list(written["mcpServers"]) == ["tablemere"], written
    check_entry(written["mcpServers"]["tablemere"], srv.api, key)
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600


@pytest.mark.parametrize("client", ["claude-code", "claude-desktop"])
def test_install_print_masks_the_key_and_writes_nothing(srv, admin, tmp_home, client):
    key = admin["api_key"]
    path, argv_file = fake_claude(tmp_home)
    r = install(tmp_home, ["--client", client, "--url", srv.api, "--api-key", key, "--print",
                           "--name", "lk"], path=path)
    assert r.returncode == 0, r.stderr
    assert_no_key(key, r.stdout, r.stderr)
    snippet = json.loads(r.stdout)  # the snippet alone, ready to paste
    assert list(snippet) == ["mcpServers"] and list(snippet["mcpServers"]) == ["lk"], snippet
    check_entry(snippet["mcpServers"]["lk"], srv.api, masked(key))
    assert not os.path.exists(argv_file), "claude was run"
    assert not os.path.exists(os.path.join(tmp_home, ".config", "Claude")), "a desktop config was written"


def test_install_without_a_key_fails_and_writes_nothing(srv, tmp_home):
    path, argv_file = fake_claude(tmp_home)
    for client in ("claude-code", "claude-desktop"):
        r = install(tmp_home, ["--client", client, "--url", srv.api], path=path)
        assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
        assert "missing_credential" in r.stdout + r.stderr, r.stdout + r.stderr
    assert not os.path.exists(argv_file), "claude was run without a key"
    assert not os.path.exists(os.path.join(tmp_home, ".config", "Claude"))


def test_install_reports_a_failing_claude(srv, admin, tmp_home):
    key = admin["api_key"]
    bindir = os.path.join(tmp_home, "failbin")
    os.makedirs(bindir)
    with open(os.path.join(bindir, "claude"), "w") as f:
        f.write("#!/bin/sh\nexit 3\n")
    os.chmod(os.path.join(bindir, "claude"), 0o755)
    r = install(tmp_home, ["--url", srv.api, "--api-key", key], path=bindir + ":/usr/bin:/bin")
    assert r.returncode != 0, r.stdout + r.stderr
    assert_no_key(key, r.stdout, r.stderr)


def test_install_key_sources_and_precedence(srv, admin, tmp_home):
    keys = []
    for label in ("k1", "k2", "k3", "k4"):
        r = requests.post(srv.api + "/v1/api-keys", headers=auth(admin["api_key"]), json={"label": label})
        assert r.status_code == 201, r.text
        keys.append(r.json()["api_key"])
    k1, k2, k3, k4 = keys
    other_url = "https://api.example.invalid"
    creds = os.path.join(tmp_home, "credentials.json")
    with open(creds, "w") as f:
        json.dump({other_url: {"api_key": k4}, srv.api: {"api_key": k3}}, f)
    os.chmod(creds, 0o600)
    path, argv_file = fake_claude(tmp_home)

    def installed(args, key_env=None):
        if os.path.exists(argv_file):
            os.remove(argv_file)
        r = install(tmp_home, args, key_env=key_env, path=path, extra_env={"TABLEMERE_CREDENTIALS": creds})
        assert r.returncode == 0, r.stdout + r.stderr
        assert_no_key(k1, r.stdout, r.stderr)
        for k in keys:
            assert_no_key(k, r.stdout, r.stderr)
        argv = read_argv(argv_file)
        for k in keys:
            assert_no_key(k, *argv)
        env = json.loads(argv[5])["env"]
        return env["TABLEMERE_URL"], open(env["TABLEMERE_API_KEY_FILE"]).read().strip()

    assert installed(["--url", srv.api, "--api-key", k1], key_env=k2) == (srv.api, k1)
    assert installed(["--url", srv.api], key_env=k2) == (srv.api, k2)
    assert installed(["--url", srv.api]) == (srv.api, k3)
    assert installed(["--url", other_url]) == (other_url, k4)
    # The URL from TABLEMERE_URL when --url is absent.
    if os.path.exists(argv_file):
        os.remove(argv_file)
    r = install(tmp_home, [], path=path, extra_env={"TABLEMERE_CREDENTIALS": creds, "TABLEMERE_URL": srv.api})
    assert r.returncode == 0, r.stderr
    entry = json.loads(read_argv(argv_file)[5])
    check_key_file_entry(entry, srv.api, k3, tmp_home)
    # --print with the key from the credentials file: masked, that key's id.
    r = install(tmp_home, ["--print", "--url", srv.api], path=path, extra_env={"TABLEMERE_CREDENTIALS": creds})
    assert r.returncode == 0, r.stderr
    assert_no_key(k3, r.stdout, r.stderr)
    assert json.loads(r.stdout)["mcpServers"]["tablemere"]["env"]["TABLEMERE_API_KEY"] == masked(k3)

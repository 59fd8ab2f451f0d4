"""Black-box tests of the `tablemere` command-line client: the real binary run as a
subprocess (or inside a pseudo-terminal) against a real server, plus a small fake API
server where the test must control the HTTP status or see the request the CLI sent.

Every run gets its own HOME (and usually its own TABLEMERE_CREDENTIALS), so nothing here
reads or writes the real home directory."""

import http.server
import json
import os
import pathlib
import re
import select
import socket
import stat
import struct
import subprocess
import threading
import time
import uuid

import pytest
import requests

from conftest import BOOTSTRAP_SECRET, ROOT, Server, advance_clock
from helpers import wait_for

CLI = pathlib.Path(os.environ.get("TABLEMERE_CLI", ROOT / "build" / "bin" / "tablemere"))

USER_CODE = re.compile(r"\b[B-DF-HJ-NP-TV-Z]{4}-[B-DF-HJ-NP-TV-Z]{4}\b")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# ----------------------------------------------------------------------------- helpers


def uid(prefix="n"):
    return prefix + uuid.uuid4().hex[:8]


def new_email(domain="example.com"):
    return f"cli-{uuid.uuid4().hex[:10]}@{domain}"


def auth(key):
    return {"Authorization": "Bearer " + key}


def closed_port_url():
    """A loopback URL nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def base_env(home, **extra):
    """The caller's environment without any Tablemere/AgentLake setting, with HOME moved to
    a temporary directory; `extra` adds variables (a value of None removes one)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TABLEMERE_", "AGENTLAKE_")) and k != "XDG_CONFIG_HOME"}
    env["HOME"] = str(home)
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


class Run:
    """The outcome of one CLI invocation."""

    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err

    def __repr__(self):
        return (f"tablemere {' '.join(self.args)}\n  exit {self.rc}\n  stdout: {self.out[:2000]}"
                f"\n  stderr: {self.err[:2000]}")

    @property
    def json(self):
        try:
            return json.loads(self.out)
        except ValueError as e:
            raise AssertionError(f"stdout is not JSON ({e}): {self!r}")

    @property
    def error(self):
        """The server's typed error body, which the CLI writes to stderr verbatim."""
        return error_body(self.err, self)


def error_body(text, run=None):
    candidates = [text.strip()] + [line.strip() for line in text.splitlines()]
    for c in candidates:
        if c.startswith("{"):
            try:
                body = json.loads(c)
            except ValueError:
                continue
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                return body["error"]
    raise AssertionError(f"no typed error JSON on stderr: {run!r}" if run else text)


def tm(*args, env, timeout=60, stdin=subprocess.DEVNULL):
    args = [str(a) for a in args]
    p = subprocess.run([str(CLI), *args], env=env, stdin=stdin, capture_output=True,
                       timeout=timeout, text=True)
    return Run(args, p.returncode, p.stdout, p.stderr)


def ok(*args, env, **kw):
    r = tm(*args, env=env, **kw)
    assert r.rc == 0, r
    return r.json


def fails(rc, *args, env, code=None, client_side_ok=False, **kw):
    """Runs a command that must exit `rc`; with `code`, stderr must carry the server's
    error body with that code (and its request_id and message). With client_side_ok the
    CLI may refuse before asking the server, but with the API's error code all the same."""
    r = tm(*args, env=env, **kw)
    assert r.rc == rc, r
    if code is not None:
        err = r.error
        assert err["code"] == code, r
        assert err.get("message"), r
        assert client_side_ok or err.get("request_id"), r
        return err
    return r


def run_in_pty(args, env, timeout=30):
    """Runs the CLI with stdout on a pseudo-terminal (200 columns); returns (rc, stdout
    text with CRLF folded and colour codes removed, stderr text)."""
    import fcntl
    import termios
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    p = subprocess.Popen([str(CLI), *map(str, args)], env=env, stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                p.kill()
                raise AssertionError(f"tablemere {args} did not finish in a terminal")
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        rc = p.wait(timeout=timeout)
        err = p.stderr.read().decode(errors="replace")
    finally:
        os.close(master)
        p.stderr.close()
    out = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return rc, ANSI.sub("", out), err


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def values_of(obj, key):
    """Every value stored under `key` anywhere in a JSON document."""
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                found.append(v)
            found.extend(values_of(v, key))
    elif isinstance(obj, list):
        for v in obj:
            found.extend(values_of(v, key))
    return found


def assert_aligned_table(text, rows, header_word):
    """`rows` lists, per expected item, the cell values that must appear on its own line.
    Checks a header line (the nearest line above the items naming `header_word`) precedes
    the item lines, one line per item, each value starting at the same column on every
    item line and under a header label, and that the text is not JSON."""
    with pytest.raises(ValueError):
        json.loads(text)
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    item_lines = []
    for cells in rows:
        hits = [i for i, line in enumerate(lines)
                if all(re.search(r"(?<!\S)" + re.escape(c) + r"(?!\S)", line) for c in cells)]
        assert len(hits) == 1, (cells, text)
        item_lines.append(hits[0])
    first = min(item_lines)
    above = [line for line in lines[:first] if header_word.lower() in line.lower()]
    assert above, f"no header row naming {header_word!r} before the items:\n{text}"
    header = above[-1]
    assert not any(c in header for cells in rows for c in cells), f"header:\n{text}"
    for col in range(len(rows[0])):
        starts = {re.search(r"(?<!\S)" + re.escape(cells[col]) + r"(?!\S)",
                            lines[i]).start() for cells, i in zip(rows, item_lines)}
        assert len(starts) == 1, f"column {col} not aligned ({starts}):\n{text}"
        start = starts.pop()
        # A left-aligned header label starts where its column starts.
        assert start < len(header) and header[start] != " " and \
            (start == 0 or header[start - 1] == " "), f"header not over column {col}:\n{text}"


class FakeApi:
    """A loopback HTTP server answering every request with a configured status and JSON
    body, recording what the CLI sent."""

    def __init__(self, host="127.0.0.1", port=0, family=socket.AF_INET):
        fake = self
        self.requests = []
        self.status, self.body = 200, {"projects": []}

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                fake.requests.append({"method": self.command, "path": self.path,
                                      "headers": {k.lower(): v for k, v in self.headers.items()},
                                      "body": body})
                payload = json.dumps(fake.body).encode()
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("x-request-id", "fake-request-1")
                if fake.status == 429:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

            def log_message(self, *a):
                pass

        class Srv(http.server.ThreadingHTTPServer):
            address_family = family
            daemon_threads = True

        self.httpd = Srv((host, port), Handler)
        p = self.httpd.server_address[1]
        self.url = f"http://{host}:{p}" if family == socket.AF_INET else f"http://[{host}]:{p}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def reset(self, status=200, body=None):
        self.requests.clear()
        self.status, self.body = status, ({"projects": []} if body is None else body)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def srv(clocked_server):
    """One real server for the module, with the operator routes (signup codes) on."""
    return clocked_server


@pytest.fixture(scope="module")
def fake():
    f = FakeApi()
    yield f
    f.close()


@pytest.fixture
def home(tmp_path):
    h = tmp_path / "home"
    h.mkdir()
    return h


def account_env(srv, home, account=None, **extra):
    """A fresh dev account (POST /v1/signup) and an environment whose key is in
    TABLEMERE_API_KEY."""
    account = account or srv.signup()
    env = base_env(home, TABLEMERE_URL=srv.api, TABLEMERE_API_KEY=account["api_key"], **extra)
    return account, env


def internal_code(srv, email, kind="signup_code"):
    r = requests.get(f"{srv.api}/internal/signup-codes/{email}",
                     headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET})
    assert r.status_code == 200, r.text
    return r.json()[kind]


def api(srv, method, path, key, **kw):
    r = requests.request(method, srv.api + path, headers=auth(key), **kw)
    assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
    return r.json()


# ----------------------------------------------------------------------------- version, help, command line


def test_version_prints_the_name_and_version(home):
    r = tm("--version", env=base_env(home))
    assert r.rc == 0, r
    assert re.fullmatch(r"tablemere \d+\.\d+\.\d+\S*", r.out.strip()), r


TOP_COMMANDS = ["signup", "terms", "account", "login", "recover", "api-key", "org", "agent",
                "whoami", "usage", "audit", "project", "catalog", "namespace", "table",
                "credentials", "connect"]
CATALOG_SUBS = ["create", "list", "rotate", "grants", "grant", "revoke", "delete", "publish",
                "unpublish", "public-url"]

# Every command path of the CLI reference and the flags its help must name.
HELP = {
    (): ["--version", "--url", "--api-key", "--json", "--human", *TOP_COMMANDS],
    ("signup",): ["--email", "--workspace", "--full-name", "--organization", "--handle",
                  "--code", "--engine", "--save", "--show-key", "--accept-terms"],
    ("terms",): ["--accept"],
    ("account",): ["delete"],
    ("account", "delete"): ["--confirm"],
    ("login",): ["--name", "--level", "--catalog", "--new", "--show-key"],
    ("recover",): ["--email", "--code", "--save", "--show-key"],
    ("api-key",): ["create", "list", "revoke"],
    ("api-key", "create"): ["--label"],
    ("api-key", "list"): [],
    ("api-key", "revoke"): ["--key-id"],
    ("org",): ["list", "members", "invite", "accept", "domain", "set", "role"],
    ("org", "list"): [],
    ("org", "members"): ["--org"],
    ("org", "invite"): ["--email", "--role", "--org"],
    ("org", "accept"): ["--token"],
    ("org", "domain"): ["--domain", "--remove", "--org"],
    ("org", "set"): ["--name", "--domain-join", "--org"],
    ("org", "role"): ["--principal", "--role", "--org"],
    ("agent",): ["create", "update", "list", "revoke"],
    ("agent", "create"): ["--name", "--role", "--grant", "--warehouse", "--org"],
    ("agent", "update"): ["--agent-id", "--name", "--role", "--grant"],
    ("agent", "list"): ["--org"],
    ("agent", "revoke"): ["--agent-id", "--org"],
    ("whoami",): [],
    ("usage",): ["--catalog", "--days"],
    ("audit",): ["--org", "--since", "--action", "--limit"],
    ("project",): ["create", "list"],
    ("project", "create"): ["--name", "--provider", "--region", "--idempotency-key"],
    ("project", "list"): [],
    ("catalog",): CATALOG_SUBS,
    ("warehouse",): CATALOG_SUBS,
    ("catalog", "create"): ["--name", "--project", "--idempotency-key"],
    ("catalog", "list"): ["--project"],
    ("catalog", "rotate"): ["--catalog"],
    ("catalog", "grants"): ["--catalog"],
    ("catalog", "grant"): ["--catalog", "--principal", "--level"],
    ("catalog", "revoke"): ["--catalog", "--principal"],
    ("catalog", "delete"): ["--catalog", "--confirm"],
    ("catalog", "publish"): ["--catalog", "--confirm"],
    ("catalog", "unpublish"): ["--catalog"],
    ("catalog", "public-url"): ["--catalog", "--table"],
    ("warehouse", "create"): ["--name", "--project", "--idempotency-key"],
    ("namespace",): ["list"],
    ("namespace", "list"): ["--catalog"],
    ("table",): ["list", "get", "create"],
    ("table", "list"): ["--catalog", "--namespace"],
    ("table", "get"): ["--catalog", "--namespace", "--name"],
    ("table", "create"): ["--catalog", "--namespace", "--name", "--column", "--schema-file",
                          "--format-version", "--idempotency-key"],
    ("credentials",): ["--catalog", "--namespace", "--table"],
    ("connect",): ["--catalog", "--engine"],
}


@pytest.mark.parametrize("path", list(HELP), ids=lambda p: " ".join(p) or "tablemere")
def test_help_on_every_level_names_its_flags(path, home):
    # A URL nothing listens on: help must not need the server.
    env = base_env(home, TABLEMERE_URL=closed_port_url())
    for flag in ("--help", "-h"):
        r = tm(*path, flag, env=env)
        assert r.rc == 0, r
        text = r.out + r.err
        assert "usage" in text.lower(), r
        for word in HELP[path]:
            assert re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text), (word, r)


@pytest.mark.parametrize("args", [
    ["frobnicate"],                                          # unknown command
    ["catalog", "frobnicate"],                               # unknown subcommand
    ["catalog", "list", "--no-such-flag"],                   # unknown flag
    ["--no-such-global", "catalog", "list"],                 # unknown global flag
    ["catalog", "create"],                                   # missing required --name
    ["catalog", "delete", "--catalog", "lake"],              # missing required --confirm
    ["table", "get", "--catalog", "lake", "--namespace", "demo"],  # missing --name
    ["connect", "--catalog", "lake", "--engine", "excel"],   # bad choice
    ["signup", "--email", "a@example.com", "--engine", "excel"],
    ["table", "create", "--catalog", "lake", "--namespace", "d", "--name", "t",
     "--format-version", "4"],
    ["agent", "create", "--name", "x", "--role", "owner"],
    ["org", "set", "--domain-join", "maybe"],
    ["login", "--level", "admin"],
    ["usage", "--days", "seven"],
], ids=lambda a: " ".join(a))
def test_malformed_command_lines_exit_6_without_calling_the_server(args, home, fake):
    fake.reset()
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_API_KEY="al_live_x_y")
    r = tm(*args, env=env)
    assert r.rc == 6, r
    assert fake.requests == [], (fake.requests, r)


# ----------------------------------------------------------------------------- exit codes from HTTP answers


def err_body(code, **extra):
    return {"error": {"code": code, "message": f"{code} happened", "request_id": "rq-" + code,
                      **extra}}


@pytest.mark.parametrize("status,code,rc", [
    (400, "invalid_value", 1),
    (410, "code_expired", 1),
    (413, "body_too_large", 1),
    (422, "unprocessable", 1),
    (401, "invalid_code", 1),
    (409, "already_exists", 2),
    (409, "limit_exceeded", 2),
    (429, "rate_limited", 5),
    (403, "quota_exceeded", 2),
    (403, "limit_exceeded", 2),
    (401, "invalid_api_key", 3),
    (401, "api_key_revoked", 3),
    (403, "forbidden", 2),
    (403, "principal_suspended", 3),
    (404, "warehouse_not_found", 4),
    (500, "internal", 5),
    (502, "storage_error", 5),
    (503, "unavailable", 5),
])
def test_each_http_answer_maps_to_its_exit_code_and_its_body_goes_to_stderr(
        status, code, rc, home, fake):
    body = err_body(code, remedy="do the other thing", limit_value=3, current=3)
    fake.reset(status, body)
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_API_KEY="al_live_k1_s1")
    r = tm("project", "list", env=env)
    assert r.rc == rc, r
    expected = dict(body["error"])
    if status == 429:
        # The Retry-After header's wait is copied into the envelope when the body lacks it.
        expected.setdefault("retry_after_seconds", 1)
    assert r.error == expected, r  # verbatim, every field kept
    assert fake.requests and {q["path"] for q in fake.requests} == {"/v1/projects"}, \
        fake.requests


def test_requests_carry_the_key_and_the_idempotency_key(home, fake):
    fake.reset(201, {"project_id": "pr_1", "name": "p1"})
    env = base_env(home, TABLEMERE_URL=fake.url + "/", TABLEMERE_API_KEY="al_live_k2_s2")
    out = ok("project", "create", "--name", "p1", "--idempotency-key", "idem-123", env=env)
    assert out == {"project_id": "pr_1", "name": "p1"}
    [q] = fake.requests
    assert (q["method"], q["path"]) == ("POST", "/v1/projects")  # no double slash
    assert q["headers"]["authorization"] == "Bearer al_live_k2_s2"
    assert q["headers"]["idempotency-key"] == "idem-123"
    assert json.loads(q["body"])["name"] == "p1"


def test_global_flags_work_before_and_after_the_subcommand(home, fake):
    env = base_env(home, TABLEMERE_URL=closed_port_url())
    for args in (["--url", fake.url, "--api-key", "al_live_g_1", "--json", "project", "list"],
                 ["project", "list", "--url", fake.url, "--api-key", "al_live_g_1", "--json"],
                 ["--url", fake.url, "project", "list", "--api-key", "al_live_g_1"]):
        fake.reset()
        assert ok(*args, env=env) == {"projects": []}
        assert fake.requests[0]["headers"]["authorization"] == "Bearer al_live_g_1", args
    fake.reset()
    r = tm("project", "list", "--human", "--url", fake.url, "--api-key", "k", env=env)
    assert r.rc == 0 and fake.requests, r
    with pytest.raises(ValueError):
        json.loads(r.out)


def test_url_precedence(home, fake):
    closed = closed_port_url()
    key = {"TABLEMERE_API_KEY": "al_live_u_1"}
    cases = [  # (extra env, extra args, reaches the fake server)
        ({"TABLEMERE_URL": closed}, ["--url", fake.url], True),
        ({"TABLEMERE_URL": fake.url}, ["--url", closed], False),
        ({"TABLEMERE_URL": fake.url, "AGENTLAKE_URL": closed}, [], True),
        ({"TABLEMERE_URL": closed, "AGENTLAKE_URL": fake.url}, [], False),
        ({"AGENTLAKE_URL": fake.url}, [], True),
    ]
    for extra, args, reaches in cases:
        fake.reset()
        r = tm("project", "list", *args, env=base_env(home, **key, **extra))
        assert (r.rc, bool(fake.requests)) == ((0, True) if reaches else (5, False)), (extra, r)


def test_default_url_is_localhost_8080(home):
    # Without any URL configured, the MCP entry the CLI would install names the default;
    # this needs no network, so it holds whatever listens on port 8080 here.
    r = tm("mcp", "install", "--print", "--api-key", "al_live_d_1", env=base_env(home))
    assert r.rc == 0, r
    [entry] = json.loads(r.out)["mcpServers"].values()
    assert entry["env"]["TABLEMERE_URL"] == "http://localhost:8080", entry
    fakes = []
    for host, family in (("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)):
        try:
            fakes.append(FakeApi(host, 8080, family))
        except OSError:
            pass
    if not fakes:
        return  # something else listens on 8080: the request path is not observable here
    try:
        r = tm("project", "list", env=base_env(home, TABLEMERE_API_KEY="al_live_d_1"))
        assert r.rc == 0, r
        [q] = [q for f in fakes for q in f.requests]
        assert q["path"] == "/v1/projects" and q["headers"]["authorization"].endswith("al_live_d_1")
    finally:
        for f in fakes:
            f.close()


def test_api_key_precedence_and_the_credentials_file_keyed_by_url(home, fake):
    creds = home / "creds.json"
    creds.write_text(json.dumps({fake.url: {"api_key": "al_live_file_1", "principal_id": "p_f"},
                                 "http://127.0.0.1:9": {"api_key": "al_live_other_1"}}))
    os.chmod(creds, 0o600)
    common = {"TABLEMERE_URL": fake.url, "TABLEMERE_CREDENTIALS": str(creds)}
    cases = [
        ({"TABLEMERE_API_KEY": "al_live_env_1", "AGENTLAKE_API_KEY": "al_live_old_1"},
         ["--api-key", "al_live_flag_1"], "al_live_flag_1"),
        ({"TABLEMERE_API_KEY": "al_live_env_1", "AGENTLAKE_API_KEY": "al_live_old_1"}, [],
         "al_live_env_1"),
        ({"AGENTLAKE_API_KEY": "al_live_old_1"}, [], "al_live_old_1"),
        ({}, [], "al_live_file_1"),
    ]
    for extra, args, expected in cases:
        fake.reset()
        r = tm("project", "list", *args, env=base_env(home, **common, **extra))
        assert r.rc == 0, r
        assert fake.requests[0]["headers"]["authorization"] == "Bearer " + expected, (extra, r)
    # A key saved for another URL is not sent here: no key at all is an auth failure.
    creds.write_text(json.dumps({"http://127.0.0.1:9": {"api_key": "al_live_other_1"}}))
    fake.reset()
    r = tm("project", "list", env=base_env(home, **common))
    assert r.rc == 3, r
    assert not any("al_live_other_1" in q["headers"].get("authorization", "")
                   for q in fake.requests), fake.requests


def test_agentlake_fallbacks_are_read(home, fake):
    # AGENTLAKE_CREDENTIALS is read when TABLEMERE_CREDENTIALS is not set...
    old = home / "old-creds.json"
    old.write_text(json.dumps({fake.url: {"api_key": "al_live_oldfile_1"}}))
    fake.reset()
    r = tm("project", "list", env=base_env(home, TABLEMERE_URL=fake.url,
                                           AGENTLAKE_CREDENTIALS=str(old)))
    assert r.rc == 0, r
    assert fake.requests[0]["headers"]["authorization"] == "Bearer al_live_oldfile_1"
    # ...and so is ~/.config/agentlake/credentials.json.
    legacy = home / ".config" / "agentlake"
    legacy.mkdir(parents=True)
    (legacy / "credentials.json").write_text(
        json.dumps({fake.url: {"api_key": "al_live_legacy_1"}}))
    fake.reset()
    r = tm("project", "list", env=base_env(home, TABLEMERE_URL=fake.url))
    assert r.rc == 0, r
    assert fake.requests[0]["headers"]["authorization"] == "Bearer al_live_legacy_1"
    # ~/.config/tablemere/credentials.json wins over the legacy file.
    new = home / ".config" / "tablemere"
    new.mkdir(parents=True)
    (new / "credentials.json").write_text(json.dumps({fake.url: {"api_key": "al_live_new_1"}}))
    fake.reset()
    r = tm("project", "list", env=base_env(home, TABLEMERE_URL=fake.url))
    assert r.rc == 0, r
    assert fake.requests[0]["headers"]["authorization"] == "Bearer al_live_new_1"


# ----------------------------------------------------------------------------- exit codes against the real server


def test_exit_1_invalid_input(srv, home):
    account, env = account_env(srv, home)
    # A malformed --grant or --column is invalid input and creates nothing.
    for bad in ("lake", "lake:admin", "lake:", "lake:write:extra"):
        fails(1, "agent", "create", "--name", uid("a"), "--grant", bad, env=env)
    for bad in ("id", "id:", ":long", "id:long:mandatory"):
        fails(1, "table", "create", "--catalog", "lake", "--namespace", "demo", "--name",
              uid("t"), "--column", bad, env=env)
    agents = api(srv, "GET", f"/v1/orgs/{account['organization']['org_id']}/agents",
                 account["api_key"])["agents"]
    assert agents == []
    assert api(srv, "GET", "/v1/tables", account["api_key"], params={"warehouse": "lake"})[
        "tables"] == []
    # 400 from the server.
    fails(1, "org", "set", "--domain-join", "on", env=env, code="no_domain")
    # 413: a request body over 1 MB.
    big = home / "big-schema.json"
    big.write_text(json.dumps({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True, "doc": "x" * 1_200_000}]}))
    fails(1, "table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "big",
          "--schema-file", big, env=env, code="body_too_large")
    # A name typed wrong (the API's code, whether or not the CLI checks it first).
    err = fails(1, "catalog", "delete", "--catalog", "lake", "--confirm", "not-lake", env=env,
                code="confirmation_required", client_side_ok=True)
    assert err.get("confirm_with") == "lake"
    err = fails(1, "catalog", "publish", "--catalog", "lake", "--confirm", "LAKE", env=env,
                code="confirmation_required", client_side_ok=True)
    assert err.get("confirm_with") == "lake"


def test_exit_1_for_a_wrong_or_expired_signup_code(srv, home):
    env = base_env(home, TABLEMERE_URL=srv.api)
    email = new_email()
    ok("signup", "--email", email, env=env)
    code = internal_code(srv, email)
    wrong = "000000" if code != "000000" else "111111"
    err = fails(1, "signup", "--email", email, "--code", wrong, "--accept-terms", env=env,
                code="invalid_code")
    assert err["attempts_left"] == 4
    advance_clock(srv, 601)
    fails(1, "signup", "--email", email, "--code", code, "--accept-terms", env=env,
          code="code_expired")
    assert not (home / ".config" / "tablemere" / "credentials.json").exists()


def test_exit_2_conflicts_and_limits(srv, home):
    account, env = account_env(srv, home)
    name = uid("c")
    ok("catalog", "create", "--name", name, env=env)
    err = fails(2, "catalog", "create", "--name", name, env=env, code="already_exists")
    assert err.get("field") == "name"
    # Three catalogs per project: lake, name, and one more; the fourth is a limit.
    ok("catalog", "create", "--name", uid("c"), env=env)
    fails(2, "catalog", "create", "--name", uid("c"), env=env, code="limit_exceeded")
    # The last admin cannot step down.
    fails(2, "org", "role", "--principal", account["principal_id"], "--role", "member", env=env,
          code="last_admin")
    # A second signup code within a minute is rate limited (429).
    email = new_email()
    signup_env = base_env(home, TABLEMERE_URL=srv.api)
    ok("signup", "--email", email, env=signup_env)
    err = fails(5, "signup", "--email", email, env=signup_env, code="rate_limited")
    assert err["retry_after_seconds"] >= 1


def test_exit_1_for_an_ambiguous_catalog_name(srv, home):
    # Two catalogs named lake in two projects: the CLI refuses the name before sending
    # anything, with the candidates; the fix is the caller's (pass a warehouse_id).
    account, env = account_env(srv, home)
    ok("project", "create", "--name", "other", env=env)
    other = ok("catalog", "create", "--name", "lake", "--project", "other", env=env)
    err = fails(1, "connect", "--catalog", "lake", env=env, code="ambiguous_name",
                client_side_ok=True)
    assert account["warehouse_id"] in json.dumps(err)
    assert {c["warehouse_id"] for c in err["candidates"]} == {account["warehouse_id"],
                                                              other["warehouse_id"]}, err
    ok("connect", "--catalog", account["warehouse_id"], env=env)


def test_exit_1_for_a_route_this_server_does_not_have(home, fake):
    # Retrying cannot help (exit 5 would say it does): the server predates the call.
    fake.reset(404, {"error": {"code": "route_not_found", "message": "No route GET /v1/projects",
                               "request_id": "rq-1"}})
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_API_KEY="al_live_r_1")
    err = fails(1, "project", "list", env=env, code="route_missing", client_side_ok=True)
    assert "GET /v1/projects" in err["message"] and err.get("remedy"), err


def test_iceberg_style_error_with_an_integer_code(home, fake):
    # The Iceberg REST error model: {"error": {"message", "type", "code": 404}}. The CLI
    # classifies it by status and passes the body through verbatim.
    body = {"error": {"message": "Table does not exist: demo.t", "type": "NoSuchTableException",
                      "code": 404}}
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_API_KEY="al_live_i_1")
    for status, rc in ((404, 4), (400, 1), (409, 2), (500, 5)):
        fake.reset(status, {"error": {**body["error"], "code": status}})
        r = tm("project", "list", env=env)
        assert r.rc == rc, (status, r)
        assert r.error == {**body["error"], "code": status}, r


def test_an_answer_of_an_unexpected_shape_is_one_line_and_exit_1(home, fake):
    # terms --accept reads current_version as a string; a number there is not handled
    # specifically. Whatever is thrown inside a command ends the same way: one JSON line
    # on stderr, exit 1, never an abort.
    fake.reset(200, {"current_version": 1, "accepted_current": False})
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_API_KEY="al_live_t_1")
    r = tm("terms", "--accept", env=env)
    assert r.rc == 1, r
    assert len(r.err.strip().splitlines()) == 1, r
    assert r.error["code"] == "client_error" and r.error["message"], r


def test_a_saved_api_key_that_is_not_a_string_is_no_key(home, fake):
    creds = home / "creds.json"
    creds.write_text(json.dumps({fake.url: {"api_key": 12345, "key_id": 7}}))
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_CREDENTIALS=str(creds))
    fake.reset()
    r = tm("project", "list", env=env)
    assert r.rc == 3 and r.error["code"] == "missing_credential" and not fake.requests, r
    # login checks whether the saved key still works: with no key, it starts a new login.
    fake.reset(400, err_body("invalid_value"))
    fails(1, "login", env=env, code="invalid_value")
    assert [q["path"] for q in fake.requests] == ["/v1/auth/device"], fake.requests
    assert json.loads(creds.read_text()) == {fake.url: {"api_key": 12345, "key_id": 7}}


def test_operations_read_answers_missing_or_mistyping_fields(home, fake):
    # One body for every request: projects, warehouses and organisations with fields
    # missing or of another type. Nothing is undefined behaviour or a throw: entries
    # that cannot be used are skipped, missing fields are null.
    fake.reset(200, {
        "projects": [{"project_id": "pr_1", "name": "main"}, {"project_id": 7}, "junk"],
        "warehouses": [{"warehouse_id": "w_1", "name": "lake"}, {"name": 5}, 3],
        "organizations": [{"org_id": "o_1"}, 2],
        "principal_id": 9, "limits": "none", "current_version": 1, "accepted_current": "yes"})
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_API_KEY="al_live_o_1")
    me = ok("whoami", env=env)
    assert me["catalogs"] == [
        {"name": "lake", "warehouse_id": "w_1", "project": "main", "level": None, "via": None},
        {"name": 5, "warehouse_id": None, "project": "main", "level": None, "via": None}], me
    assert me["principal_id"] == "" and me["limits"] == {} and me["terms"] == {
        "current_version": "", "accepted_current": False}, me
    listed = ok("catalog", "list", env=env)
    assert [w.get("warehouse_id") for w in listed["warehouses"]] == ["w_1", None], listed
    # The only usable organisation is the caller's.
    fake.requests.clear()
    ok("org", "members", env=env)
    assert fake.requests[-1]["path"] == "/v1/orgs/o_1/members", fake.requests
    # A catalog named by its name resolves through the same listing.
    fake.requests.clear()
    ok("catalog", "grants", "--catalog", "lake", env=env)
    assert fake.requests[-1]["path"] == "/v1/warehouses/w_1/grants", fake.requests


def test_a_corrupt_credentials_file_is_never_replaced(home, fake):
    # It holds the keys of other URLs: saving refuses, names the file and the fix, sends
    # nothing (no key is minted that could not be saved) and leaves the file as it was.
    creds = home / "creds.json"
    corrupt = '{"https://other.example": {"api_key": "al_live_other_1"}, '
    creds.write_text(corrupt)
    env = base_env(home, TABLEMERE_URL=fake.url, TABLEMERE_CREDENTIALS=str(creds))
    fake.reset(200, {"api_key": "al_live_new_1", "principal_id": "p_1", "key_id": "new"})
    for args in (["signup", "--email", new_email(), "--code", "123456", "--accept-terms", "--save"],
                 ["recover", "--email", new_email(), "--code", "123456", "--save"],
                 ["login"]):
        err = fails(1, *args, env=env, code="credentials_file_invalid", client_side_ok=True)
        assert str(creds) in err["message"] and "move it aside" in err["remedy"], err
        assert fake.requests == [], (args, fake.requests)
        assert creds.read_text() == corrupt
    # Not a JSON object either.
    creds.write_text("[]")
    fails(1, "signup", "--email", new_email(), "--code", "123456", "--accept-terms", "--save",
          env=env, code="credentials_file_invalid", client_side_ok=True)
    assert creds.read_text() == "[]" and fake.requests == []
    # Moved aside, as the remedy says: the key is saved in a new file.
    creds.rename(home / "creds.json.broken")
    ok("signup", "--email", new_email(), "--code", "123456", "--accept-terms", "--save", env=env)
    assert json.loads(creds.read_text())[fake.url]["api_key"] == "al_live_new_1"


def test_exit_2_over_the_storage_quota(srv, home):
    account, env = account_env(srv, home)
    ok("table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "t",
       "--column", "id:long", env=env)
    r = requests.post(srv.api + "/internal/usage", headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET},
                      json={"warehouse_id": account["warehouse_id"], "bytes": 6_000_000_000,
                            "objects": 10})
    assert r.status_code == 200, r.text
    err = fails(2, "catalog", "create", "--name", uid("c"), env=env, code="quota_exceeded")
    assert err["current"] == 6_000_000_000
    fails(2, "table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "t2",
          "--column", "id:long", env=env, code="quota_exceeded")
    fails(2, "credentials", "--catalog", "lake", "--namespace", "demo", "--table", "t", env=env,
          code="quota_exceeded")
    # Reading still works, and usage says why.
    usage = ok("usage", env=env)
    assert True in values_of(usage, "over_limit"), usage
    ok("table", "get", "--catalog", "lake", "--namespace", "demo", "--name", "t", env=env)


def test_exit_3_auth(srv, home):
    account, env = account_env(srv, home)
    fails(3, "catalog", "list", env={**env, "TABLEMERE_API_KEY": "al_live_0000000000000000_nope"},
          code="invalid_api_key")
    # No key anywhere (empty HOME, no variables): exit 3 before any request.
    fails(3, "catalog", "list", env=base_env(home, TABLEMERE_URL=srv.api))
    # A revoked key.
    made = ok("api-key", "create", "--label", "doomed", env=env)
    ok("api-key", "revoke", "--key-id", made["key_id"], env=env)
    fails(3, "whoami", env={**env, "TABLEMERE_API_KEY": made["api_key"]}, code="api_key_revoked")
    # 403: a member token inviting people, and a read-only one asking for write credentials.
    agent = ok("agent", "create", "--name", uid("ro"), "--grant", "lake:read", env=env)
    assert agent["api_key"].startswith("al_live_")
    agent_env = {**env, "TABLEMERE_API_KEY": agent["api_key"]}
    fails(2, "org", "invite", "--email", new_email(), env=agent_env, code="insufficient_role")
    api(srv, "POST", "/v1/tables", account["api_key"],
        json={"warehouse_id": "lake", "namespace": "demo", "name": "t3", "schema": {
            "type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": True}]}})
    fails(2, "credentials", "--catalog", "lake", "--namespace", "demo", "--table", "t3",
          env=agent_env, code="forbidden")


def test_exit_4_not_found(srv, home):
    _, env = account_env(srv, home)
    fails(4, "connect", "--catalog", "no-such-catalog", env=env, code="warehouse_not_found")
    fails(4, "catalog", "rotate", "--catalog", str(uuid.uuid4()), env=env,
          code="warehouse_not_found")
    fails(4, "table", "get", "--catalog", "lake", "--namespace", "nowhere", "--name", "nothing",
          env=env)
    fails(4, "usage", "--catalog", "no-such-catalog", env=env)
    fails(4, "catalog", "list", "--project", "no-such-project", env=env)


def test_exit_5_server_down_or_unreachable(home):
    # Nothing listens on the port.
    fails(5, "catalog", "list", env=base_env(home, TABLEMERE_URL=closed_port_url(),
                                             TABLEMERE_API_KEY="al_live_x_y"))
    # A server that answered a moment ago and has stopped.
    s = Server()
    try:
        account = s.signup()
        env = base_env(home, TABLEMERE_URL=s.api, TABLEMERE_API_KEY=account["api_key"])
        ok("catalog", "list", env=env)
        s.stop()
        fails(5, "catalog", "list", env=env)
        fails(5, "whoami", env=env)
    finally:
        s.cleanup()


# ----------------------------------------------------------------------------- output


def test_piped_output_is_the_servers_json(srv, home):
    account, env = account_env(srv, home)
    key = account["api_key"]
    assert ok("project", "list", env=env) == api(srv, "GET", "/v1/projects", key)
    assert ok("org", "list", env=env) == api(srv, "GET", "/v1/orgs", key)
    assert ok("terms", env=env) == api(srv, "GET", "/v1/terms", key)
    listed = ok("catalog", "list", env=env)
    assert account["warehouse_id"] in values_of(listed, "warehouse_id")
    assert "lake" in values_of(listed, "name")
    # `warehouse` is the same command group.
    assert account["warehouse_id"] in values_of(ok("warehouse", "list", env=env), "warehouse_id")
    # --json on a pipe changes nothing; --human turns it into text.
    assert ok("--json", "project", "list", env=env) == api(srv, "GET", "/v1/projects", key)
    whoami = ok("whoami", env=env)
    assert account["principal_id"] in json.dumps(whoami)
    usage = ok("usage", env=env)
    assert usage["limits"]["warehouses"] >= 1 and usage["principal_id"] == account["principal_id"]
    keys = ok("api-key", "list", env=env)
    assert [k["key_id"] for k in keys["api_keys"]] == [account["api_key"].split("_")[2]]
    assert account["api_key"] not in json.dumps(keys)
    members = ok("org", "members", env=env)
    assert [m["principal_id"] for m in members["members"]] == [account["principal_id"]]
    assert ok("agent", "list", env=env)["agents"] == []
    audit = ok("audit", "--since", "24h", "--action", "signup.*", "--limit", "5", env=env)
    assert audit["count"] == len(audit["events"]) >= 1
    assert all(e["action"].startswith("signup.") for e in audit["events"])
    assert audit["limit"] == 5
    org = account["organization"]["org_id"]
    audit = ok("audit", "--org", org, "--since", "2020-01-01T00:00:00Z", env=env)
    assert audit["scope"] == "organization" and audit["org_id"] == org and audit["events"]
    assert ok("org", "members", env=env) == api(srv, "GET", f"/v1/orgs/{org}/members", key)


def test_terminal_output_is_an_aligned_table(srv, home):
    account, env = account_env(srv, home)
    long_name = "a-considerably-longer-catalog-name"
    made = ok("catalog", "create", "--name", long_name, env=env)
    rows = [["lake", account["warehouse_id"]], [long_name, made["warehouse_id"]]]
    rc, out, err = run_in_pty(["catalog", "list"], env)
    assert rc == 0, (out, err)
    assert_aligned_table(out, rows, "name")
    # --human gives the same table on a pipe.
    r = tm("catalog", "list", "--human", env=env)
    assert r.rc == 0, r
    assert_aligned_table(r.out, rows, "name")
    # Errors stay typed JSON on stderr in a terminal.
    rc, out, err = run_in_pty(["connect", "--catalog", "no-such-catalog"], env)
    assert rc == 4, (out, err)
    assert error_body(err)["code"] == "warehouse_not_found", (out, err)
    # --json gives JSON on a terminal.
    rc, out, err = run_in_pty(["catalog", "list", "--json"], env)
    assert rc == 0, (out, err)
    assert made["warehouse_id"] in values_of(json.loads(out), "warehouse_id")
    # A second list: API keys with labels of different lengths.
    k1 = ok("api-key", "create", "--label", "ci", env=env)
    k2 = ok("api-key", "create", "--label", "a-long-label-for-the-laptop", env=env)
    rc, out, err = run_in_pty(["api-key", "list"], env)
    assert rc == 0, (out, err)
    assert_aligned_table(out, [[k1["key_id"], "ci"], [k2["key_id"], "a-long-label-for-the-laptop"]],
                         "label")
    assert k1["api_key"] not in out and k2["api_key"] not in out


def test_every_list_command_has_a_terminal_table(srv, home):
    account, env = account_env(srv, home)
    key, org = account["api_key"], account["organization"]["org_id"]
    agent = ok("agent", "create", "--name", "lister-bot", "--grant", "lake:read", env=env)
    ok("table", "create", "--catalog", "lake", "--namespace", "sales", "--name", "orders",
       "--column", "id:long", env=env)
    project = api(srv, "GET", "/v1/projects", key)["projects"][0]
    email = api(srv, "GET", f"/v1/orgs/{org}/members", key)["members"][0]["email"]
    handle = api(srv, "GET", "/v1/orgs", key)["organizations"][0]["handle"]
    for args, shown in [
        (["project", "list"], [project["name"], project["project_id"]]),
        (["org", "list"], [handle, org]),
        (["org", "members"], [email, account["principal_id"]]),
        (["agent", "list"], ["lister-bot", agent["agent_id"]]),
        (["namespace", "list", "--catalog", "lake"], ["sales"]),
        (["table", "list", "--catalog", "lake"], ["orders"]),
        (["catalog", "grants", "--catalog", "lake"], [agent["agent_id"], "read"]),
        (["audit", "--action", "agent.*"], ["agent.create"]),
    ]:
        rc, out, err = run_in_pty(args, env)
        assert rc == 0, (args, out, err)
        with pytest.raises(ValueError):
            json.loads(out)
        lines = [line for line in out.splitlines() if line.strip()]
        assert len(lines) >= 2, (args, out)  # a header and at least one row
        for value in shown:
            assert re.search(r"(?<!\S)" + re.escape(value) + r"(?!\S)", out), (args, value, out)


# ----------------------------------------------------------------------------- signup, recover and the credentials file


def cli_signup(srv, env, *extra, email=None, save=True):
    """signup --email (starts), then signup --code (verifies); returns (run, email)."""
    email = email or new_email()
    started = ok("signup", "--email", email, "--workspace", uid("ws"), env=env)
    assert started["email"] == email and started["code_length"] == 6, started
    code = internal_code(srv, email)
    args = ["signup", "--email", email, "--code", code, "--accept-terms", *extra]
    if save:
        args.append("--save")
    r = tm(*args, env=env)
    assert r.rc == 0, r
    return r, email


def test_signup_save_writes_a_private_file_keyed_by_url_and_prints_no_key(srv, home):
    env = base_env(home, TABLEMERE_URL=srv.api)
    r, email = cli_signup(srv, env)
    path = home / ".config" / "tablemere" / "credentials.json"
    saved = json.loads(path.read_text())
    assert list(saved) == [srv.api]
    entry = saved[srv.api]
    key = entry["api_key"]
    assert key.startswith("al_live_") and entry["principal_id"].startswith("p_")
    assert mode_of(path) == 0o600
    assert mode_of(path.parent) == 0o700
    # The key is not printed; the answer says where it went.
    assert key not in r.out and key not in r.err
    out = r.json
    assert "api_key" not in out
    assert out["api_key_saved_to"] == str(path)
    assert out["principal_id"] == entry["principal_id"]
    # Later commands find it by URL...
    assert entry["principal_id"] in json.dumps(ok("whoami", env=env))
    # The URL is the key without a trailing slash.
    slash = base_env(home, TABLEMERE_URL=srv.api + "/")
    assert entry["principal_id"] in json.dumps(ok("whoami", env=slash))
    # ...but not for another URL naming the same server.
    other = srv.api.replace("127.0.0.1", "localhost")
    fails(3, "catalog", "list", env=base_env(home, TABLEMERE_URL=other))
    # A save keeps the other URLs' entries.
    saved["http://127.0.0.1:9"] = {"api_key": "al_live_keep_me"}
    path.write_text(json.dumps(saved))
    os.chmod(path, 0o644)  # loosened by hand: the next save tightens it again
    env2 = base_env(home, TABLEMERE_URL=srv.api.replace("127.0.0.1", "localhost"))
    cli_signup(srv, env2)
    saved = json.loads(path.read_text())
    assert saved["http://127.0.0.1:9"] == {"api_key": "al_live_keep_me"}
    assert saved[srv.api]["api_key"] == key
    assert saved[other]["api_key"] != key
    assert mode_of(path) == 0o600


def test_signup_show_key_and_without_save(srv, home):
    creds = home / "somewhere" / "creds.json"
    env = base_env(home, TABLEMERE_URL=srv.api, TABLEMERE_CREDENTIALS=str(creds))
    r, _ = cli_signup(srv, env, "--show-key")
    key = json.loads(creds.read_text())[srv.api]["api_key"]
    assert key in r.out, r
    assert mode_of(creds) == 0o600 and mode_of(creds.parent) == 0o700
    # Without --save: the API's answer as is, key included, nothing written.
    creds2 = home / "other" / "creds.json"
    env2 = base_env(home, TABLEMERE_URL=srv.api, TABLEMERE_CREDENTIALS=str(creds2))
    r, _ = cli_signup(srv, env2, "--engine", "pyiceberg", save=False)
    out = r.json
    assert out["api_key"].startswith("al_live_")
    assert out["connection"]["engine"] == "pyiceberg"
    assert out["warehouse_id"] and out["organization"]["role"] == "admin"
    assert not creds2.exists()
    assert not (home / ".config" / "tablemere" / "credentials.json").exists()


def test_signup_prompts_for_the_code_on_a_terminal(srv, home):
    """Without --code and with stdin a terminal, signup starts, asks for the code and
    verifies it in the same run."""
    import fcntl
    import termios
    env = base_env(home, TABLEMERE_URL=srv.api)
    email = new_email()
    master, slave = os.openpty()

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    p = subprocess.Popen([str(CLI), "signup", "--email", email, "--accept-terms", "--save"],
                         env=env, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=controlling_terminal)
    os.close(slave)
    try:
        def pending_code():
            assert p.poll() is None, (p.returncode, p.stderr.read())
            r = requests.get(f"{srv.api}/internal/signup-codes/{email}",
                             headers={"X-Bootstrap-Secret": BOOTSTRAP_SECRET})
            return r.status_code == 200 and r.json().get("signup_code")
        code = wait_for(pending_code, "the signup to start")
        os.write(master, (code + "\n").encode())
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    r = Run(["signup", "--email", email, "(code typed)"], p.returncode, out.decode(), err.decode())
    assert r.rc == 0, r
    saved = json.loads((home / ".config" / "tablemere" / "credentials.json").read_text())
    key = saved[srv.api]["api_key"]
    assert key not in r.out + r.err
    assert r.json["principal_id"] == saved[srv.api]["principal_id"]


def test_signup_form_flags_reserve_the_organisation(srv, home):
    env = base_env(home, TABLEMERE_URL=srv.api)
    email, handle = new_email(), uid("acme-")
    started = ok("signup", "--email", email, "--full-name", "Sam Lee", "--organization",
                 "Acme Labs", "--handle", handle, env=env)
    org = started["organization"]
    assert (org["handle"], org["name"], org["status"]) == (handle, "Acme Labs", "pending")
    fails(2, "signup", "--email", new_email(), "--organization", "X", "--handle", handle,
          env=env, code="handle_taken")
    r = tm("signup", "--email", email, "--code", internal_code(srv, email), "--accept-terms",
           "--save", env=env)
    assert r.rc == 0, r
    assert r.json["organization"]["org_id"] == org["org_id"]
    [listed] = ok("org", "list", env=env)["organizations"]
    assert (listed["handle"], listed["status"]) == (handle, "active")


def test_recover_save_and_show_key_and_the_legacy_files_are_never_written(srv, home):
    account = srv.signup()
    email = api(srv, "GET", f"/v1/orgs/{account['organization']['org_id']}/members",
                account["api_key"])["members"][0]["email"]
    # The key lives in the legacy locations only; they are read...
    legacy = home / ".config" / "agentlake" / "credentials.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({srv.api: {"api_key": account["api_key"]}}))
    old = home / "agentlake-creds.json"
    old.write_text(json.dumps({srv.api: {"api_key": account["api_key"]}}))
    env = base_env(home, TABLEMERE_URL=srv.api, AGENTLAKE_CREDENTIALS=str(old))
    assert account["principal_id"] in json.dumps(ok("whoami", env=env))
    # Recovery without --code (stdin not a terminal) only starts it, and says nothing about
    # whether the address has an account.
    started = ok("recover", "--email", email, env=env)
    assert started["email"] == email and started["expires_in"] == 600
    unknown = ok("recover", "--email", new_email(), env=env)
    assert set(unknown) == set(started)
    code = internal_code(srv, email, "recover_code")
    r = tm("recover", "--email", email, "--code", code, "--save", env=env)
    assert r.rc == 0, r
    path = home / ".config" / "tablemere" / "credentials.json"
    new_key = json.loads(path.read_text())[srv.api]["api_key"]
    assert new_key != account["api_key"]
    assert new_key not in r.out and new_key not in r.err
    assert "api_key" not in r.json and r.json["api_key_saved_to"] == str(path)
    assert mode_of(path) == 0o600
    # ...and never written.
    assert json.loads(legacy.read_text()) == {srv.api: {"api_key": account["api_key"]}}
    assert json.loads(old.read_text()) == {srv.api: {"api_key": account["api_key"]}}
    # The saved key works; --show-key prints the next one; without --save it is printed.
    assert account["principal_id"] in json.dumps(ok("whoami", env=env))
    advance_clock(srv, 61)
    ok("recover", "--email", email, env=env)
    r = tm("recover", "--email", email, "--code", internal_code(srv, email, "recover_code"),
           "--save", "--show-key", env=env)
    assert r.rc == 0, r
    shown = json.loads(path.read_text())[srv.api]["api_key"]
    assert shown != new_key and shown in r.out
    advance_clock(srv, 61)
    ok("recover", "--email", email, env=env)
    r = tm("recover", "--email", email, "--code", internal_code(srv, email, "recover_code"),
           env=env)
    assert r.rc == 0, r
    assert r.json["api_key"].startswith("al_live_")
    assert r.json["principal_id"] == account["principal_id"]
    assert json.loads(path.read_text())[srv.api]["api_key"] == shown


# ----------------------------------------------------------------------------- idempotency, catalogs and tables


def test_idempotency_key_replays(srv, home):
    account, env = account_env(srv, home)
    idem = uid("idem-")
    name = uid("c")
    first = ok("catalog", "create", "--name", name, "--idempotency-key", idem, env=env)
    again = ok("catalog", "create", "--name", name, "--idempotency-key", idem, env=env)
    assert again["warehouse_id"] == first["warehouse_id"]
    # Same key, another endpoint: a conflict.
    fails(2, "project", "create", "--name", uid("p"), "--idempotency-key", idem, env=env,
          code="idempotency_key_reused")
    pidem, pname = uid("idem-"), uid("p")
    p1 = ok("project", "create", "--name", pname, "--idempotency-key", pidem, env=env)
    p2 = ok("project", "create", "--name", pname, "--idempotency-key", pidem, env=env)
    assert p1["project_id"] == p2["project_id"]
    # Same key, same endpoint, another body: 422 idempotency_key_reused (exit 1), and the
    # second catalog is never created.
    other = uid("c")
    fails(1, "catalog", "create", "--name", other, "--idempotency-key", idem, env=env,
          code="idempotency_key_reused")
    names = [w["name"] for w in ok("catalog", "list", env=env)["warehouses"]]
    assert name in names and other not in names
    tidem = uid("idem-")
    args = ["table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "t",
            "--column", "id:long", "--idempotency-key", tidem]
    t1, t2 = ok(*args, env=env), ok(*args, env=env)
    assert t1["table_uuid"] == t2["table_uuid"]
    # Without the key a second create is a real conflict.
    fails(2, "table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "t",
          "--column", "id:long", env=env)
    # Every mutation accepts the flag.
    ok("api-key", "create", "--label", "x", "--idempotency-key", uid("i"), env=env)
    ok("agent", "create", "--name", uid("a"), "--idempotency-key", uid("i"), env=env)
    ok("catalog", "rotate", "--catalog", "lake", "--idempotency-key", uid("i"), env=env)
    agent = ok("agent", "create", "--name", uid("b"), env=env)
    for args in (["agent", "update", "--agent-id", agent["agent_id"], "--name", uid("b")],
                 ["catalog", "grant", "--catalog", "lake", "--principal", agent["agent_id"],
                  "--level", "read"],
                 ["catalog", "revoke", "--catalog", "lake", "--principal", agent["agent_id"]],
                 ["org", "invite", "--email", new_email()],
                 ["terms", "--accept"],
                 ["agent", "revoke", "--agent-id", agent["agent_id"]]):
        ok(*args, "--idempotency-key", uid("i"), env=env)


def test_catalog_delete_needs_the_name_typed_out(srv, home):
    account, env = account_env(srv, home)
    name, kept = uid("doomed"), uid("kept")
    made = ok("warehouse", "create", "--name", name, env=env)
    other = ok("catalog", "create", "--name", kept, env=env)
    # The right name (the catalog given by id, through the --warehouse alias) deletes it.
    out = ok("catalog", "delete", "--warehouse", made["warehouse_id"], "--confirm", name, env=env)
    assert out["deleted"] is True and out["warehouse_id"] == made["warehouse_id"]
    listed = values_of(ok("catalog", "list", env=env), "warehouse_id")
    assert made["warehouse_id"] not in listed and other["warehouse_id"] in listed
    fails(4, "connect", "--catalog", name, env=env, code="warehouse_not_found")
    # A wrong one deletes nothing.
    for wrong in (kept.upper(), kept + " ", "lake"):
        err = fails(1, "catalog", "delete", "--catalog", kept, "--confirm", wrong, env=env,
                    code="confirmation_required", client_side_ok=True)
        assert err["confirm_with"] == kept
    assert other["warehouse_id"] in values_of(ok("catalog", "list", env=env), "warehouse_id")
    assert ok("connect", "--catalog", kept, env=env)["warehouse_id"] == other["warehouse_id"]


def test_table_create_with_columns_then_get(srv, home):
    account, env = account_env(srv, home)
    made = ok("table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "cities",
              "--column", "id:long:required:identifier", "--column", "name:string",
              "--column", "pop:double:required", env=env)
    assert (made["table"], made["namespace"], made["name"]) == ("demo.cities", "demo", "cities")
    assert made["warehouse_id"] == account["warehouse_id"] and made["format_version"] == 2
    got = ok("table", "get", "--catalog", "lake", "--namespace", "demo", "--name", "cities",
             env=env)
    assert [(f["name"], f["type"], f["required"]) for f in got["schema"]] == \
        [("id", "long", True), ("name", "string", False), ("pop", "double", True)]
    [id_field] = [f["id"] for f in got["schema"] if f["name"] == "id"]
    assert got["identifier_field_ids"] == [id_field]
    assert got["table_uuid"] == made["table_uuid"] and got["format_version"] == 2
    assert got == api(srv, "GET", "/v1/table", account["api_key"],
                      params={"warehouse": account["warehouse_id"], "namespace": "demo",
                              "name": "cities"}) | {"warehouse": got["warehouse"]}
    # A schema file, format version 3, a catalog named by id.
    schema = {"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
        {"id": 1, "name": "k", "type": "long", "required": True},
        {"id": 2, "name": "tags", "type": {"type": "list", "element-id": 3, "element": "string",
                                           "element-required": False}, "required": False}]}
    f = home / "schema.json"
    f.write_text(json.dumps(schema))
    v3 = ok("table", "create", "--catalog", account["warehouse_id"], "--namespace", "demo",
            "--name", "events", "--schema-file", f, "--format-version", "3", env=env)
    assert v3["format_version"] == 3 and v3.get("warnings")
    # In a terminal the v3 warning is shown.
    rc, out, err = run_in_pty(["table", "create", "--catalog", "lake", "--namespace", "demo",
                               "--name", "events3", "--column", "id:long", "--format-version",
                               "3"], env)
    assert rc == 0 and "spark" in (out + err).lower(), (out, err)
    got = ok("table", "get", "--warehouse", "lake", "--namespace", "demo", "--name", "events",
             env=env)
    assert [x["name"] for x in got["schema"]] == ["k", "tags"] and got["format_version"] == 3
    tables = ok("table", "list", "--catalog", "lake", env=env)
    assert sorted(t["table"] for t in tables["tables"]) == \
        ["demo.cities", "demo.events", "demo.events3"]
    assert ok("table", "list", "--catalog", "lake", "--namespace", "demo", env=env)["tables"] \
        == tables["tables"]
    assert [n["namespace"] for n in ok("namespace", "list", "--catalog", "lake",
                                       env=env)["namespaces"]] == ["demo"]
    creds = ok("credentials", "--catalog", "lake", "--namespace", "demo", "--table", "cities",
               env=env)
    assert creds["storage"]["s3.access-key-id"] and creds["level"] == "write"
    assert creds["table"] == "demo.cities"


def test_connect_recipes(srv, home):
    account, env = account_env(srv, home)
    for engine, field in (("duckdb", "sql"), ("pyiceberg", "python"), ("spark", "conf")):
        out = ok("connect", "--catalog", "lake", "--engine", engine, env=env)
        assert out["engine"] == engine and out[field], out
        assert out["warehouse_id"] == account["warehouse_id"]
    # snowflake is one of the CLI's choices; this server may not serve its recipe (400).
    r = tm("connect", "--catalog", "lake", "--engine", "snowflake", env=env)
    if r.rc == 0:
        assert r.json["engine"] == "snowflake" and r.json["sql"], r
    else:
        assert r.rc == 1 and r.error["code"] == "unsupported_engine", r
    out = ok("connect", "--warehouse", account["warehouse_id"], env=env)
    assert out["engine"] == "duckdb" and f"ATTACH 'w-{account['warehouse_id']}'" in out["sql"]


def test_catalog_management_commands(srv, home):
    account, env = account_env(srv, home)
    wid = account["warehouse_id"]
    here = api(srv, "GET", "/v1/projects", account["api_key"])["projects"][0]
    project = ok("project", "create", "--name", "analytics", "--provider", here["provider"],
                 "--region", here["region"], env=env)
    assert (project["provider"], project["region"]) == (here["provider"], here["region"])
    fails(2, "project", "create", "--name", "analytics", env=env, code="already_exists")
    fails(1, "project", "create", "--name", "elsewhere", "--provider", "aws", "--region",
          "mars-1", env=env, code="unsupported_placement")
    assert [n["namespace"] for n in ok("namespace", "list", "--catalog", account["warehouse_id"],
                                       env=env)["namespaces"]] == []
    made = ok("catalog", "create", "--name", "side", "--project", "analytics", env=env)
    assert made["project_id"] == project["project_id"]
    in_project = ok("catalog", "list", "--project", project["project_id"], env=env)
    assert values_of(in_project, "warehouse_id") == [made["warehouse_id"]]
    # Grants to an agent, by the catalog's name and by its id.
    agent = ok("agent", "create", "--name", uid("bot"), env=env)
    out = ok("catalog", "grant", "--catalog", "lake", "--principal", agent["agent_id"],
             "--level", "read", env=env)
    assert (out["principal_id"], out["level"]) == (agent["agent_id"], "read")
    grants = ok("catalog", "grants", "--catalog", wid, env=env)
    assert grants == api(srv, "GET", f"/v1/warehouses/{wid}/grants", account["api_key"])
    held = {(g["principal_id"], g["level"]) for g in grants}
    assert held == {(account["principal_id"], "write"), (agent["agent_id"], "read")}, grants
    out = ok("catalog", "revoke", "--catalog", "lake", "--principal", agent["agent_id"], env=env)
    assert out["principal_id"] == agent["agent_id"]
    # Rotation hands out new credentials.
    before = srv.connection(account["api_key"], warehouse_id=wid)["catalog_credential"]
    rotated = ok("catalog", "rotate", "--catalog", "lake", env=env)
    assert rotated["warehouse_id"] == wid
    assert rotated["catalog_credential"]["client_secret"] != before["client_secret"]
    # Publish needs the name typed out; public-url; unpublish.
    api(srv, "POST", "/v1/tables", account["api_key"], json={
        "warehouse_id": wid, "namespace": "pub", "name": "t", "schema": {
            "type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "type": "long", "required": True}]}})
    ok("catalog", "publish", "--catalog", "lake", "--confirm", "lake", env=env)
    url = ok("catalog", "public-url", "--catalog", "lake", env=env)
    assert re.search(r"https?://", json.dumps(url)), url
    url = ok("catalog", "public-url", "--catalog", "lake", "--table", "pub.t", env=env)
    assert values_of(url, "metadata_url"), url
    ok("catalog", "unpublish", "--catalog", "lake", env=env)
    fails(1, "catalog", "publish", "--catalog", "lake", "--confirm", "lak", env=env,
          code="confirmation_required", client_side_ok=True)


def test_agent_and_api_key_commands(srv, home):
    account, env = account_env(srv, home)
    org = account["organization"]["org_id"]
    made = ok("agent", "create", "--name", "reporter", "--grant", "lake:read", env=env)
    assert made["api_key"].startswith("al_live_") and made["role"] == "member"
    assert [(g["name"], g["level"]) for g in made["grants"]] == [("lake", "read")]
    conn = srv.connection(made["api_key"])
    assert conn["level"] == "read"
    fails(2, "agent", "create", "--name", "reporter", env=env, code="already_exists")
    listed = ok("agent", "list", "--org", org, env=env)["agents"]
    assert [a["agent_id"] for a in listed] == [made["agent_id"]]
    handle = api(srv, "GET", "/v1/orgs", account["api_key"])["organizations"][0]["handle"]
    assert ok("agent", "list", "--org", handle, env=env)["agents"] == listed
    updated = ok("agent", "update", "--agent-id", made["agent_id"], "--name", "reporter-2",
                 "--grant", f"{account['warehouse_id']}:write", "--role", "admin", env=env)
    assert (updated["name"], updated["role"]) == ("reporter-2", "admin")
    assert [(g["warehouse_id"], g["level"]) for g in updated["grants"]] == \
        [(account["warehouse_id"], "write")]
    legacy = ok("agent", "create", "--name", "legacy", "--warehouse", "lake", env=env)
    assert [g["level"] for g in legacy["grants"]] == ["write"]
    out = ok("agent", "revoke", "--agent-id", made["agent_id"], env=env)
    assert out["revoked"] is True
    fails(3, "whoami", env={**env, "TABLEMERE_API_KEY": made["api_key"]})
    fails(4, "agent", "revoke", "--agent-id", "a_nonexistent", env=env)
    key = ok("api-key", "create", "--label", "ci", env=env)
    assert key["api_key"].startswith("al_live_") and key["label"] == "ci"
    ids = [k["key_id"] for k in ok("api-key", "list", env=env)["api_keys"]]
    assert key["key_id"] in ids
    assert ok("api-key", "revoke", "--key-id", key["key_id"], env=env)["revoked"] is True
    fails(4, "api-key", "revoke", "--key-id", "0000000000000000", env=env,
          code="api_key_not_found")


def test_org_commands(srv, home):
    domain = f"corp-{uuid.uuid4().hex[:6]}.test"
    account, env = account_env(srv, home, srv.signup(email=f"boss@{domain}"))
    org = account["organization"]["org_id"]
    colleague = srv.signup(email=new_email())
    colleague_email = api(srv, "GET", f"/v1/orgs/{colleague['organization']['org_id']}/members",
                          colleague["api_key"])["members"][0]["email"]
    invite = ok("org", "invite", "--email", colleague_email, "--role", "member", env=env)
    assert invite["token"] and invite["org_id"] == org
    # Someone else cannot redeem it; the invited person can.
    stranger = srv.signup()
    fails(2, "org", "accept", "--token", invite["token"],
          env={**env, "TABLEMERE_API_KEY": stranger["api_key"]},
          code="invitation_for_someone_else")
    joined = ok("org", "accept", "--token", invite["token"],
                env={**env, "TABLEMERE_API_KEY": colleague["api_key"]})
    assert joined["org_id"] == org
    members = ok("org", "members", "--org", org, env=env)["members"]
    assert {m["principal_id"] for m in members} == {account["principal_id"],
                                                     colleague["principal_id"]}
    out = ok("org", "role", "--org", org, "--principal", colleague["principal_id"], "--role",
             "admin", env=env)
    assert out["role"] == "admin"
    renamed = ok("org", "set", "--org", org, "--name", "Corp Inc", env=env)
    assert renamed["name"] == "Corp Inc"
    claimed = ok("org", "domain", "--org", org, "--domain", domain, env=env)
    assert [d["domain"] for d in claimed["domains"]] == [domain]
    assert ok("org", "set", "--org", org, "--domain-join", "on", env=env)["domain_join"] is True
    removed = ok("org", "domain", "--org", org, "--domain", domain, "--remove", env=env)
    assert removed["removed"] == domain and removed["domain_join"] is False
    fails(2, "org", "domain", "--org", org, "--domain", "elsewhere-corp.test", env=env,
          code="domain_not_yours")


def test_terms_account_delete_and_usage(srv, home):
    account, env = account_env(srv, home)
    email = api(srv, "GET", f"/v1/orgs/{account['organization']['org_id']}/members",
                account["api_key"])["members"][0]["email"]
    out = ok("terms", "--accept", env=env)
    assert out["accepted"] is True and out["version"]
    usage = ok("usage", "--catalog", "lake", "--days", "3", env=env)
    assert account["warehouse_id"] in json.dumps(usage)
    fails(1, "account", "delete", "--confirm", "someone-else@example.com", env=env,
          code="confirmation_required")
    out = ok("account", "delete", "--confirm", email, env=env)
    assert out["deleted"] is True and out["principal_id"] == account["principal_id"]
    fails(3, "whoami", env=env)


# ----------------------------------------------------------------------------- device login


class LoginProcess:
    """`tablemere login` running in the background, its stderr collected as it comes."""

    def __init__(self, env, *args):
        self.proc = subprocess.Popen([str(CLI), "login", *args], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.err_lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.err_lines.append(line)

    @property
    def err(self):
        return "".join(self.err_lines)

    def user_code(self, timeout=20):
        def probe():
            if self.proc.poll() is not None and not self.reader.is_alive():
                raise AssertionError(f"login exited {self.proc.returncode}: {self.err}")
            m = USER_CODE.search(self.err)
            return m and m.group(0)
        return wait_for(probe, "the user code on stderr", timeout)

    def finish(self, timeout=60):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"login did not finish: {self.err}")
        self.reader.join(5)
        return Run(["login"], rc, self.proc.stdout.read(), self.err)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def approve(srv, person, user_code, **body):
    r = requests.post(srv.api + "/v1/auth/device/approve", headers=auth(person["api_key"]),
                      json={"user_code": user_code, **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_device_login_end_to_end(srv, home):
    person = srv.signup()
    org = person["organization"]["org_id"]
    creds = home / "cfg" / "credentials.json"
    env = base_env(home, TABLEMERE_URL=srv.api, TABLEMERE_CREDENTIALS=str(creds))
    name = uid("laptop-")
    second = api(srv, "POST", "/v1/warehouses", person["api_key"], json={"name": "second"})
    login = LoginProcess(env, "--name", name, "--level", "read", "--catalog",
                         person["warehouse_id"], "--warehouse", second["warehouse_id"],
                         "--engine", "pyiceberg")
    try:
        code = login.user_code()
        assert f"/app/device?user_code={code}" in login.err
        # The consent screen shows what the CLI asked for.
        pending = requests.get(srv.api + "/v1/auth/device/pending",
                               headers=auth(person["api_key"]), params={"user_code": code})
        assert pending.status_code == 200, pending.text
        p = pending.json()
        assert (p["client_name"], p["requested_level"]) == (name, "read")
        assert sorted(w["warehouse_id"] for w in p["warehouses"]) == \
            sorted([person["warehouse_id"], second["warehouse_id"]])
        assert approve(srv, person, code, warehouse_ids=[person["warehouse_id"]])["approved"]
        r = login.finish()
    finally:
        login.kill()
    assert r.rc == 0, r
    assert re.search(r"Connected to .+ as " + re.escape(name), r.out + r.err), r
    saved = json.loads(creds.read_text())
    key = saved[srv.api]["api_key"]
    assert key not in r.out and key not in r.err
    assert mode_of(creds) == 0o600
    [agent] = [a for a in api(srv, "GET", f"/v1/orgs/{org}/agents", person["api_key"])["agents"]
               if a["name"] == name]
    assert saved[srv.api]["principal_id"] == agent["agent_id"]
    assert [(g["warehouse_id"], g["level"]) for g in agent["grants"]] == \
        [(person["warehouse_id"], "read")]
    # Piped, the answer is JSON without the key and with where it went.
    out = r.json
    assert "api_key" not in out and out["api_key_saved_to"] == str(creds), out
    assert out["principal_id"] == agent["agent_id"]
    # --engine: the recipe for the approved catalog comes with it, read-only as approved.
    assert out["recipe"]["engine"] == "pyiceberg" and out["recipe"]["level"] == "read", out
    assert out["recipe"]["warehouse_id"] == person["warehouse_id"] and "RestCatalog" in out["recipe"]["python"]
    # The saved key works with nothing else configured.
    assert agent["agent_id"] in json.dumps(ok("whoami", env=env))
    assert srv.connection(key)["level"] == "read"
    # A second login with a working key starts nothing.
    started = time.monotonic()
    again = tm("login", "--save", env=env, timeout=30)
    assert again.rc == 0, again
    assert "Still connected" in again.out + again.err, again
    assert not USER_CODE.search(again.out + again.err), again
    assert time.monotonic() - started < 5
    assert json.loads(creds.read_text())[srv.api]["api_key"] == key
    # --new starts a fresh authorisation anyway; --show-key prints the new key as well.
    fresh = LoginProcess(env, "--new", "--name", name + "-2", "--show-key")
    try:
        code2 = fresh.user_code()
        assert code2 != code
        r = requests.get(srv.api + "/v1/auth/device/pending", headers=auth(person["api_key"]),
                         params={"user_code": code2})
        assert r.status_code == 200, r.text
        assert (r.json()["client_name"], r.json()["requested_level"]) == (name + "-2", "write")
        approve(srv, person, code2)
        r = fresh.finish()
    finally:
        fresh.kill()
    assert r.rc == 0, r
    new_key = json.loads(creds.read_text())[srv.api]["api_key"]
    assert new_key != key and new_key in r.out + r.err, r
    assert srv.connection(new_key)["level"] == "write"
    # Once the saved key is revoked, login starts a new authorisation by itself.
    [agent2] = [a for a in api(srv, "GET", f"/v1/orgs/{org}/agents", person["api_key"])[
        "agents"] if a["name"] == name + "-2"]
    api(srv, "DELETE", f"/v1/orgs/{org}/agents/{agent2['agent_id']}", person["api_key"])
    third = LoginProcess(env)
    try:
        code3 = third.user_code()
        assert code3 not in (code, code2)
        assert "Still connected" not in third.err
    finally:
        third.kill()


# ----------------------------------------------------------------------------- the documented sequences


def test_getting_started_sequence(srv, home):
    """Getting started, command by command: signup --email, the code, signup --code
    --accept-terms --save, connect, table create, table get, agent create, org invite,
    org domain, usage."""
    domain = f"acme-{uuid.uuid4().hex[:6]}.test"
    email = f"you@{domain}"
    env = base_env(home, TABLEMERE_URL=srv.api)
    assert tm("--version", env=env).rc == 0
    started = ok("signup", "--email", email, "--workspace", "acme", env=env)
    assert (started["email"], started["workspace"], started["code_length"]) == \
        (email, "acme", 6)
    creds = home / ".config" / "tablemere" / "credentials.json"
    assert not creds.exists()
    code = internal_code(srv, email)
    r = tm("signup", "--email", email, "--code", code, "--accept-terms", "--save", env=env)
    assert r.rc == 0, r
    key = json.loads(creds.read_text())[srv.api]["api_key"]
    assert key not in r.out + r.err and mode_of(creds) == 0o600
    account = r.json
    wid = account["warehouse_id"]
    recipe = ok("connect", "--catalog", "lake", "--engine", "duckdb", env=env)
    assert f"ATTACH 'w-{wid}'" in recipe["sql"] and recipe["level"] == "write"
    ok("table", "create", "--catalog", "lake", "--namespace", "demo", "--name", "cities",
       "--column", "id:long:required:identifier", "--column", "country:string", env=env)
    got = ok("table", "get", "--catalog", "lake", "--namespace", "demo", "--name", "cities",
             env=env)
    assert [f["name"] for f in got["schema"]] == ["id", "country"]
    assert got["rows"] == 0 and got["format_version"] == 2
    agent = ok("agent", "create", "--name", "reporter", "--grant", f"{wid}:write", env=env)
    assert [(g["name"], g["level"]) for g in agent["grants"]] == [("lake", "write")]
    assert srv.connection(agent["api_key"])["level"] == "write"
    invite = ok("org", "invite", "--email", f"colleague@{domain}", env=env)
    assert invite["token"] and invite["role"] == "member"
    org = ok("org", "domain", "--domain", domain, env=env)
    assert [d["domain"] for d in org["domains"]] == [domain]
    usage = ok("usage", env=env)
    assert usage["limits"]["storage_bytes"] > 0


def test_agent_setup_sequence(srv, home):
    """Agent setup, command by command: --version, login (approved in the browser by the
    person), whoami, connect --engine duckdb, table list, usage; the key never shown."""
    person = srv.signup()
    env = base_env(home, TABLEMERE_URL=srv.api)
    assert re.match(r"tablemere ", tm("--version", env=env).out)
    name = uid("agent-box-")
    login = LoginProcess(env, "--name", name)
    try:
        code = login.user_code()
        approve(srv, person, code)
        r = login.finish()
    finally:
        login.kill()
    assert r.rc == 0, r
    assert "Connected to" in r.out + r.err, r
    creds = home / ".config" / "tablemere" / "credentials.json"
    key = json.loads(creds.read_text())[srv.api]["api_key"]
    assert key not in r.out + r.err
    assert mode_of(creds) == 0o600 and mode_of(creds.parent) == 0o700
    who = ok("whoami", env=env)
    assert who["principal_id"].startswith("a_"), who
    levels = values_of(who, "my_level") + values_of(who, "level")
    assert "write" in levels, who
    recipe = ok("connect", "--catalog", "lake", "--engine", "duckdb", env=env)
    assert recipe["level"] == "write" and f"ATTACH 'w-{person['warehouse_id']}'" in recipe["sql"]
    assert ok("table", "list", "--catalog", "lake", env=env)["tables"] == []
    assert ok("usage", env=env)["limits"]["storage_bytes"] > 0
    again = tm("login", env=env)
    assert again.rc == 0 and "Still connected" in again.out + again.err, again
    # The reference's comment on whoami: "kind: agent, my_level on the catalog".
    assert "agent" in values_of(who, "kind"), who

"""External OpenID Connect issuers (TABLEMERE_OIDC_ISSUERS) against a test issuer the
tests start: its own discovery document and JWKS over HTTP, tokens signed with PyJWT.
The first token of an address creates the person, onboarding names its organisation,
and every rule of the token is checked: signature, expiry, audience, verified address,
and a key the issuer rotated in later."""

import http.server
import json
from concurrent.futures import ThreadPoolExecutor
import os
import pathlib
import re
import subprocess
import urllib.parse
import threading
import time
import uuid

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import BOOTSTRAP_SECRET, Server, advance_clock
from test_control_api import assert_api_error, auth


def new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwk_of(key, kid):
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    public.update({"kid": kid, "use": "sig", "alg": "RS256"})
    return public


class Issuer:
    """A minimal OpenID provider: discovery, JWKS and the device flow (RFC 8628); the tests
    mint its tokens and approve its device codes (approve(user_code, email))."""

    def __init__(self):
        self.keys = {"k1": new_key()}
        self.jwks_fetches = 0
        self.devices = {}  # device_code -> {"user_code", "client_id", "email" once approved}
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def reply(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                if self.path == "/device":
                    if form.get("client_id") != "tablemere":
                        return self.reply(400, {"error": "invalid_client"})
                    device_code, user_code = uuid.uuid4().hex, uuid.uuid4().hex[:8].upper()
                    issuer.devices[device_code] = {"user_code": user_code, "scope": form.get("scope")}
                    return self.reply(200, {"device_code": device_code, "user_code": user_code,
                                            "verification_uri": issuer.url + "/activate",
                                            "expires_in": 600, "interval": 1})
                if self.path == "/token":
                    grant = issuer.devices.get(form.get("device_code"))
                    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code" \
                            or grant is None or form.get("client_id") != "tablemere":
                        return self.reply(400, {"error": "invalid_grant"})
                    if "email" not in grant:
                        return self.reply(400, {"error": "authorization_pending"})
                    return self.reply(200, {"access_token": "opaque", "token_type": "Bearer",
                                            "id_token": issuer.token(grant["email"])})
                self.reply(404, {"error": "not_found"})

            def do_GET(self):
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks",
                            "authorization_endpoint": issuer.url + "/authorize",
                            "token_endpoint": issuer.url + "/token",
                            "device_authorization_endpoint": issuer.url + "/device"}
                elif self.path == "/jwks":
                    issuer.jwks_fetches += 1
                    body = {"keys": [jwk_of(k, kid) for kid, k in issuer.keys.items()]}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def approve(self, user_code, email):
        for grant in self.devices.values():
            if grant["user_code"] == user_code:
                grant["email"] = email
                return
        raise AssertionError("no such user code " + user_code)

    def token(self, email, kid="k1", aud="tablemere", verified=True, exp_in=300, iss=None,
              key=None):
        now = int(time.time())
        claims = {"iss": iss or self.url, "sub": "sub-" + email, "aud": aud, "email": email,
                  "email_verified": verified, "iat": now, "exp": now + exp_in, "name": "Grace H"}
        return jwt.encode(claims, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})


@pytest.fixture(scope="module")
def issuer():
    i = Issuer()
    yield i
    i.httpd.shutdown()


@pytest.fixture(scope="module")
def trusting(issuer):
    """A server trusting the issuer, with a clock the tests move forward."""
    s = Server(extra_env={"TABLEMERE_OIDC_ISSUERS": json.dumps([
        {"issuer": issuer.url, "client_id": "tablemere", "audience": "tablemere"}]),
        "TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET, "TABLEMERE_TEST_CLOCK": "1"})
    yield s
    s.cleanup()


def address():
    return f"grace-{uuid.uuid4().hex[:8]}@example.com"


def test_auth_config_lists_the_issuer_from_its_discovery(trusting, issuer):
    cfg = requests.get(trusting.api + "/v1/auth/config").json()
    assert cfg["external_issuers"] == [{
        "issuer": issuer.url, "client_id": "tablemere",
        "authorization_endpoint": issuer.url + "/authorize",
        "token_endpoint": issuer.url + "/token",
        "device_authorization_endpoint": issuer.url + "/device",
        "jwks_uri": issuer.url + "/jwks"}]


def test_first_token_creates_the_person_and_onboard_names_the_org(trusting, issuer):
    email = address()
    token = issuer.token(email)
    r = requests.get(trusting.api + "/v1/orgs", headers=auth(token))
    assert r.status_code == 200 and r.json()["organizations"] == [], r.text
    r = requests.post(trusting.api + "/v1/onboard", headers=auth(token),
                      json={"accept_terms": True, "organization_name": "Hopper Labs"})
    assert r.status_code == 200, r.text
    onboarded = r.json()
    assert onboarded["created"] is True
    # The same address later is the same person, with its organisation and catalog.
    again = issuer.token(email)
    orgs = requests.get(trusting.api + "/v1/orgs", headers=auth(again)).json()["organizations"]
    assert [o["name"] for o in orgs] == ["Hopper Labs"]
    r = requests.get(trusting.api + "/v1/connection", headers=auth(again))
    assert r.status_code == 200, r.text
    # It may mint API keys for its agents and scripts.
    r = requests.post(trusting.api + "/v1/api-keys", headers=auth(again), json={"label": "ci"})
    assert r.status_code == 201, r.text


def test_concurrent_onboardings_make_one_organisation_and_one_catalog(trusting, issuer):
    """A double click on the first login's "continue": every call answers with the same
    organisation and catalog, and only one of each exists."""
    for _ in range(5):
        token = issuer.token(address())
        assert requests.get(trusting.api + "/v1/orgs", headers=auth(token)).status_code == 200
        body = {"accept_terms": True, "organization_name": "Race Labs " + uuid.uuid4().hex[:6]}
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(
                lambda _: requests.post(trusting.api + "/v1/onboard", headers=auth(token),
                                        json=body), range(4)))
        for r in answers:
            assert r.status_code == 200, r.text
        assert len({r.json()["warehouse_id"] for r in answers}) == 1, [r.json() for r in answers]
        assert [r.json()["created"] for r in answers].count(True) == 1
        orgs = requests.get(trusting.api + "/v1/orgs", headers=auth(token)).json()["organizations"]
        assert len(orgs) == 1, orgs
        projects = requests.get(trusting.api + "/v1/projects", headers=auth(token)).json()
        assert len(projects["projects"]) == 1, projects


def test_every_rule_of_the_token_is_checked(trusting, issuer):
    email = address()
    other = new_key()
    for token, reason in [
        (issuer.token(email, exp_in=-600), "expired"),
        (issuer.token(email, aud="someone-else"), "wrong_audience"),
        (issuer.token(email, verified=False), "email_unverified"),
        (issuer.token(email, key=other), "bad_signature"),
        (issuer.token(email, kid="nope", key=other), "unknown_kid"),
    ]:
        err = assert_api_error(requests.get(trusting.api + "/v1/orgs", headers=auth(token)), 401,
                               "invalid_api_key")
        assert err["reason"] == reason, err
    # A token of an issuer nobody configured is not looked at as an external one.
    stranger = issuer.token(email, iss="https://evil.example")
    assert_api_error(requests.get(trusting.api + "/v1/orgs", headers=auth(stranger)), 401,
                     "invalid_api_key")
    # None of these created anyone.
    r = requests.get(trusting.api + "/v1/orgs", headers=auth(issuer.token(email)))
    assert r.status_code == 200


def test_a_key_the_issuer_rotates_in_is_fetched(trusting, issuer):
    # The issuer's keys are refetched at most once a minute, so forged kids cannot make
    # the server hammer it: a new kid right after a fetch waits for the window.
    advance_clock(trusting, 61)
    assert requests.get(trusting.api + "/v1/orgs",
                        headers=auth(issuer.token(address(), kid="forged",
                                                  key=new_key()))).status_code == 401
    fetches = issuer.jwks_fetches
    issuer.keys["k2"] = new_key()
    token = issuer.token(address(), kid="k2")
    err = assert_api_error(requests.get(trusting.api + "/v1/orgs", headers=auth(token)), 401,
                           "invalid_api_key")
    assert err["reason"] == "unknown_kid" and issuer.jwks_fetches == fetches
    advance_clock(trusting, 61)
    r = requests.get(trusting.api + "/v1/orgs", headers=auth(token))
    assert r.status_code == 200, r.text
    assert issuer.jwks_fetches == fetches + 1


def test_trust_email_accepts_an_unverified_address(issuer):
    s = Server(extra_env={"TABLEMERE_OIDC_ISSUERS": json.dumps([
        {"issuer": issuer.url, "client_id": "tablemere", "trust_email": True}])})
    try:
        token = issuer.token(address(), verified=False)
        assert requests.get(s.api + "/v1/orgs", headers=auth(token)).status_code == 200
    finally:
        s.cleanup()


def test_a_bad_issuer_list_stops_the_server():
    with pytest.raises(RuntimeError, match="OIDC_ISSUERS"):
        Server(extra_env={"TABLEMERE_OIDC_ISSUERS": "{not json"})


CLI = pathlib.Path(os.environ.get("TABLEMERE_CLI",
                                  pathlib.Path(__file__).resolve().parent.parent / "build" / "bin" / "tablemere"))


def test_cli_login_through_the_issuer_device_flow(trusting, issuer, tmp_path):
    """tablemere login --issuer: the device flow at the issuer, then an API key of the person
    minted with the issuer's token, saved (0600) and never printed."""
    email = address()
    creds = tmp_path / "credentials.json"
    env = dict(os.environ, HOME=str(tmp_path), TABLEMERE_CREDENTIALS=str(creds))
    env.pop("TABLEMERE_API_KEY", None)
    proc = subprocess.Popen([str(CLI), "--url", trusting.api, "--json", "login", "--issuer",
                             issuer.url, "--label", "laptop", "--accept-terms"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline() + proc.stderr.readline()
    code = re.search(r"code ([0-9A-F]{8})", line)
    assert code, line
    issuer.approve(code.group(1), email)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    answer = json.loads(out)
    assert "api_key" not in answer and answer["label"] == "laptop", answer
    saved = json.loads(creds.read_text())[trusting.api]
    assert os.stat(creds).st_mode & 0o777 == 0o600
    assert saved["api_key"] not in out + err
    # The key is the person's: the terms were accepted, and it reads their account.
    r = requests.get(trusting.api + "/v1/terms", headers=auth(saved["api_key"]))
    assert r.status_code == 200 and r.json()["accepted_current"] is True, r.text
    # An issuer the deployment does not trust is refused before any flow starts.
    r = subprocess.run([str(CLI), "--url", trusting.api, "login", "--issuer", "https://evil.example",
                        "--new"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 4 and json.loads(r.stderr)["error"]["code"] == "issuer_not_found", r.stderr

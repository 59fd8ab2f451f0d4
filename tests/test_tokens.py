"""Black-box tests of the API's own identity: POST /v1/tokens (RS256, verified here by
PyJWT against /jwks.json), the OpenID metadata, key rotation, and the wrong-secret rate
limit per key id and caller address."""

import http.client
import json
import urllib.parse

import jwt
import pytest
import requests

from conftest import BOOTSTRAP_SECRET as SECRET
from conftest import advance_clock
from test_control_api import assert_api_error, auth, get_connection

@pytest.fixture(scope="module")
def srv(clocked_server):
    return clocked_server


def token_for(srv, api_key):
    return requests.post(srv.api + "/v1/tokens", json={"api_key": api_key})


def internal(srv, path, body=None):
    return requests.post(srv.api + path, headers={"X-Bootstrap-Secret": SECRET}, json=body or {})


def public_keys(srv):
    return jwt.PyJWKSet.from_json(requests.get(srv.api + "/jwks.json").text)


def test_token_is_an_rs256_jwt_verified_by_pyjwt(srv):
    account = srv.signup()
    r = token_for(srv, account["api_key"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["token_type"], body["expires_in"], body["principal_id"]) == \
        ("Bearer", 900, account["principal_id"])
    token = body["access_token"]
    meta = requests.get(srv.api + "/.well-known/openid-configuration").json()
    assert meta["issuer"] == srv.api and meta["jwks_uri"] == srv.api + "/jwks.json"
    assert meta["token_endpoint"] == srv.api + "/v1/tokens"
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in public_keys(srv).keys if k.key_id == kid)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], issuer=srv.api)
    assert claims["sub"] == account["principal_id"] and claims["kind"] == "human"
    assert claims["exp"] - claims["iat"] == 900
    assert requests.get(srv.api + "/healthz").json()["kid"] == kid
    # The token works wherever the key does.
    assert get_connection(srv, token).json()["warehouse_id"] == account["warehouse_id"]


def test_tampered_and_unrelated_tokens_are_refused(srv):
    account = srv.signup()
    token = token_for(srv, account["api_key"]).json()["access_token"]
    head, payload, sig = token.split(".")
    forged = jwt.utils.base64url_encode(json.dumps(
        {"iss": srv.api, "sub": "p_someone", "exp": 9999999999, "akid": "x"}).encode()).decode()
    assert_api_error(get_connection(srv, f"{head}.{forged}.{sig}"), 401, "invalid_api_key")
    none_alg = jwt.encode({"iss": srv.api, "sub": account["principal_id"]}, None,
                          algorithm="none")
    assert_api_error(get_connection(srv, none_alg), 401, "invalid_api_key")
    hs = jwt.encode({"iss": srv.api, "sub": account["principal_id"]}, "a-guessed-hmac-secret-of-32-bytes!!",
                    algorithm="HS256", headers={"kid": jwt.get_unverified_header(token)["kid"]})
    assert_api_error(get_connection(srv, hs), 401, "invalid_api_key")
    # A token is no API key: it cannot be exchanged for another.
    assert_api_error(token_for(srv, token), 401, "invalid_api_key")
    assert_api_error(token_for(srv, "al_live_nope_nope"), 401, "invalid_api_key")


def test_revoking_the_key_or_suspending_stops_its_tokens_at_once(srv):
    account = srv.signup()
    key = account["api_key"]
    extra = requests.post(srv.api + "/v1/api-keys", headers=auth(key), json={"label": "t"}).json()
    token = token_for(srv, extra["api_key"]).json()["access_token"]
    assert get_connection(srv, token).status_code == 200
    assert requests.delete(f"{srv.api}/v1/api-keys/{extra['key_id']}",
                           headers=auth(key)).status_code == 200
    assert_api_error(get_connection(srv, token), 401, "api_key_revoked")
    token = token_for(srv, key).json()["access_token"]
    internal(srv, f"/internal/principals/{account['principal_id']}/suspend", {"suspended": True})
    assert_api_error(get_connection(srv, token), 403, "principal_suspended")
    assert_api_error(token_for(srv, key), 403, "principal_suspended")


def test_rotation_keeps_old_tokens_until_they_expire(srv):
    account = srv.signup()
    old = token_for(srv, account["api_key"]).json()["access_token"]
    r = internal(srv, "/internal/signing-keys/rotate")
    assert r.status_code == 200, r.text
    new_kid = r.json()["kid"]
    assert len(public_keys(srv).keys) == 2
    new = token_for(srv, account["api_key"]).json()["access_token"]
    assert jwt.get_unverified_header(new)["kid"] == new_kid
    assert get_connection(srv, old).status_code == 200
    advance_clock(srv, 1000)
    assert len(public_keys(srv).keys) == 1
    assert_api_error(get_connection(srv, old), 401, "invalid_api_key")
    token = token_for(srv, account["api_key"]).json()["access_token"]
    assert get_connection(srv, token).status_code == 200


def get_from(srv, source, path, key):
    """A GET from another loopback address (127/8 is all local)."""
    url = urllib.parse.urlparse(srv.api)
    conn = http.client.HTTPConnection(url.hostname, url.port, source_address=(source, 0),
                                      timeout=10)
    conn.request("GET", path, headers={"Authorization": "Bearer " + key})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, dict(r.getheaders()), body


def test_ten_wrong_secrets_from_one_address_are_429(srv):
    account = srv.signup()
    key_id = account["api_key"].split("_")[2]
    wrong = f"al_live_{key_id}_wrong-secret"
    for _ in range(10):
        assert_api_error(get_connection(srv, wrong), 401, "invalid_api_key")
    r = get_connection(srv, account["api_key"])
    err = assert_api_error(r, 429, "rate_limited")
    assert 0 < err["retry_after_seconds"] <= 600
    assert r.headers["Retry-After"] == str(err["retry_after_seconds"])
    # Another address, or another key, is not locked out.
    status, _, _ = get_from(srv, "127.0.0.2", "/v1/connection", account["api_key"])
    assert status == 200
    other = srv.signup()
    assert get_connection(srv, other["api_key"]).status_code == 200
    # The window passes.
    advance_clock(srv, 601)
    assert get_connection(srv, account["api_key"]).status_code == 200

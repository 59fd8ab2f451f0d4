"""Black-box tests of the email-code signup and recovery, and of the operator's internal
routes, on a server of their own whose clock the tests move forward (no sleeping)."""

import uuid

import pytest
import requests

from conftest import BOOTSTRAP_SECRET as SECRET
from conftest import advance_clock
from test_control_api import assert_api_error, auth, get_connection

@pytest.fixture(scope="module")
def srv(clocked_server):
    return clocked_server


def email():
    return f"sam-{uuid.uuid4().hex[:10]}@example.com"


def post(srv, path, body, key=None):
    return requests.post(srv.api + path, json=body, headers=auth(key) if key else {})


def internal(srv, method, path, secret=SECRET, **kw):
    headers = {"X-Bootstrap-Secret": secret} if secret else {}
    return requests.request(method, srv.api + path, headers=headers, **kw)


def code_of(srv, address, kind="signup_code"):
    r = internal(srv, "GET", f"/internal/signup-codes/{address}")
    assert r.status_code == 200, r.text
    return r.json()[kind]


advance = advance_clock


def test_signup_with_a_code(srv):
    a = email()
    r = post(srv, "/v1/signup/start", {"email": a, "workspace": "team"})
    assert r.status_code == 202, r.text
    body = r.json()
    assert (body["delivery"], body["code_length"], body["expires_in"]) == ("log", 6, 600)
    assert body["terms"]["version"] and "organization" not in body
    code = code_of(srv, a)
    assert len(code) == 6 and code.isdigit()
    # A form mistake costs no attempt; a wrong code costs one.
    assert_api_error(post(srv, "/v1/signup/verify", {"email": a, "code": code}), 400,
                     "terms_required")
    wrong = "000000" if code != "000000" else "111111"
    assert_api_error(post(srv, "/v1/signup/verify",
                          {"email": a, "code": wrong, "accept_terms": True}), 401,
                     "invalid_code", attempts_left=4)
    r = post(srv, "/v1/signup/verify", {"email": a, "code": code, "accept_terms": True,
                                        "engine": "pyiceberg"})
    assert r.status_code == 201, r.text
    account = r.json()
    assert account["api_key"].startswith("al_live_")
    assert account["organization"]["role"] == "admin"
    assert account["connection"]["engine"] == "pyiceberg"
    assert get_connection(srv, account["api_key"]).status_code == 200
    # The code is spent; the address now has an account.
    assert_api_error(post(srv, "/v1/signup/verify",
                          {"email": a, "code": code, "accept_terms": True}), 404,
                     "no_pending_signup")
    assert_api_error(post(srv, "/v1/signup/start", {"email": a}), 409, "already_exists")


def test_five_wrong_codes_need_a_new_one(srv):
    a = email()
    assert post(srv, "/v1/signup/start", {"email": a}).status_code == 202
    code = code_of(srv, a)
    wrong = str((int(code) + 1) % 1_000_000).zfill(6)
    for left in (4, 3, 2, 1, 0):
        assert_api_error(post(srv, "/v1/signup/verify",
                              {"email": a, "code": wrong, "accept_terms": True}), 401,
                         "invalid_code", attempts_left=left)
    assert_api_error(post(srv, "/v1/signup/verify",
                          {"email": a, "code": code, "accept_terms": True}), 404,
                     "no_pending_signup")


def test_codes_expire_and_starts_are_rate_limited(srv):
    a = email()
    assert post(srv, "/v1/signup/start", {"email": a}).status_code == 202
    # A second code within a minute is refused with the wait.
    r = post(srv, "/v1/signup/start", {"email": a})
    err = assert_api_error(r, 429, "rate_limited")
    assert 1 <= err["retry_after_seconds"] <= 60
    assert r.headers["Retry-After"] == str(err["retry_after_seconds"])
    code = code_of(srv, a)
    advance(srv, 601)
    assert_api_error(post(srv, "/v1/signup/verify",
                          {"email": a, "code": code, "accept_terms": True}), 410, "code_expired")
    # Five starts an hour per address: four more fit, the sixth waits.
    for _ in range(4):
        advance(srv, 61)
        assert post(srv, "/v1/signup/start", {"email": a}).status_code == 202
    advance(srv, 61)
    err = assert_api_error(post(srv, "/v1/signup/start", {"email": a}), 429, "rate_limited")
    assert err["retry_after_seconds"] > 60
    advance(srv, 3600)
    assert post(srv, "/v1/signup/start", {"email": a}).status_code == 202


def test_signup_form_reserves_the_handle(srv):
    handle = "acme-" + uuid.uuid4().hex[:6]
    a = email()
    r = post(srv, "/v1/signup/start", {"email": a, "full_name": "Sam Lee",
                                       "organization_name": "Acme Labs", "handle": handle})
    assert r.status_code == 202, r.text
    org = r.json()["organization"]
    assert (org["handle"], org["name"], org["status"]) == (handle, "Acme Labs", "pending")
    err = assert_api_error(post(srv, "/v1/signup/start", {"email": email(), "handle": handle,
                                                          "organization_name": "X"}),
                           409, "handle_taken")
    assert err["suggestion"] and err["suggestion"] != handle
    err = assert_api_error(post(srv, "/v1/signup/start", {"email": email(), "handle": "admin",
                                                          "organization_name": "X"}),
                           400, "invalid_value", field="handle", reason="reserved")
    r = post(srv, "/v1/signup/verify", {"email": a, "code": code_of(srv, a), "accept_terms": True})
    assert r.status_code == 201, r.text
    assert r.json()["organization"] == {"org_id": org["org_id"], "role": "admin",
                                        "joined_via": "signup-form"}
    [listed] = requests.get(srv.api + "/v1/orgs", headers=auth(r.json()["api_key"])).json()[
        "organizations"]
    assert (listed["status"], listed["handle"], listed["name"]) == ("active", handle, "Acme Labs")


def company_with_claimed_domain(srv):
    """An account on a company domain whose organisation has claimed it:
    (domain, owner, its key, its org_id)."""
    domain = f"corp-{uuid.uuid4().hex[:6]}.test"
    owner = srv.signup(email=f"boss@{domain}")
    key = owner["api_key"]
    org = owner["organization"]["org_id"]
    assert requests.post(f"{srv.api}/v1/orgs/{org}/domains", headers=auth(key),
                         json={"domain": domain}).status_code == 201
    return domain, owner, key, org


def test_claimed_open_domain_joins_its_organisation(srv):
    domain, owner, key, org = company_with_claimed_domain(srv)
    assert requests.patch(f"{srv.api}/v1/orgs/{org}", headers=auth(key),
                          json={"domain_join": True}).status_code == 200
    a = f"new-{uuid.uuid4().hex[:6]}@{domain}"
    r = post(srv, "/v1/signup/start", {"email": a})
    assert r.json()["will_join"]["org_id"] == org
    r = post(srv, "/v1/signup/verify", {"email": a, "code": code_of(srv, a), "accept_terms": True})
    assert r.status_code == 201, r.text
    joined = r.json()
    assert joined["organization"] == {"org_id": org, "role": "member", "joined_via": "domain"}
    assert joined["project_id"] is None
    assert joined["warehouse_id"] == owner["warehouse_id"]
    assert joined["connection"]["level"] == "read"


def test_a_signup_does_not_join_an_organisation_that_closed_its_domain_meanwhile(srv):
    """The landing is decided when a signup starts; an admin who switches domain join off
    (or releases the domain) before the code is used is not overridden by it."""
    domain, owner, key, org = company_with_claimed_domain(srv)
    for closing in ({"domain_join": False}, None):
        assert requests.patch(f"{srv.api}/v1/orgs/{org}", headers=auth(key),
                              json={"domain_join": True}).status_code == 200
        a = f"late-{uuid.uuid4().hex[:6]}@{domain}"
        assert post(srv, "/v1/signup/start", {"email": a}).json()["will_join"]["org_id"] == org
        if closing:
            r = requests.patch(f"{srv.api}/v1/orgs/{org}", headers=auth(key), json=closing)
        else:
            r = requests.delete(f"{srv.api}/v1/orgs/{org}/domains/{domain}", headers=auth(key))
        assert r.status_code == 200, r.text
        r = post(srv, "/v1/signup/verify", {"email": a, "code": code_of(srv, a),
                                            "accept_terms": True})
        assert r.status_code == 201, r.text
        landed = r.json()
        assert landed["organization"]["org_id"] != org
        assert landed["organization"]["role"] == "admin"
        assert landed["organization"]["joined_via"] == "signup"
        assert landed["project_id"] and landed["warehouse_id"] != owner["warehouse_id"]
        members = requests.get(f"{srv.api}/v1/orgs/{org}/members",
                               headers=auth(key)).json()["members"]
        assert a not in [m.get("email") for m in members]


def test_recovery_mints_a_new_key_and_never_tells_who_has_an_account(srv):
    account = srv.signup()
    members = requests.get(f"{srv.api}/v1/orgs/{account['organization']['org_id']}/members",
                           headers=auth(account["api_key"])).json()["members"]
    a = members[0]["email"]
    known = post(srv, "/v1/recover/start", {"email": a})
    unknown = post(srv, "/v1/recover/start", {"email": email()})
    assert known.status_code == unknown.status_code == 202
    strip = lambda body: {k: v for k, v in body.items() if k != "email"}
    assert strip(known.json()) == strip(unknown.json())
    code = code_of(srv, a, "recover_code")
    assert_api_error(post(srv, "/v1/recover/verify", {"email": email(), "code": code}), 404,
                     "no_pending_recovery")
    r = post(srv, "/v1/recover/verify", {"email": a, "code": code})
    assert r.status_code == 200, r.text
    new_key = r.json()["api_key"]
    assert new_key != account["api_key"] and r.json()["principal_id"] == account["principal_id"]
    assert get_connection(srv, new_key).status_code == 200
    assert get_connection(srv, account["api_key"]).status_code == 200  # earlier keys stay


def test_a_recovery_code_presented_many_times_at_once_mints_one_key(srv):
    """The code is spent in the transaction that mints the key: of requests racing with
    the right code, exactly one gets a key; the others are told it was used."""
    from concurrent.futures import ThreadPoolExecutor
    account = srv.signup()
    members = requests.get(f"{srv.api}/v1/orgs/{account['organization']['org_id']}/members",
                           headers=auth(account["api_key"])).json()["members"]
    a = members[0]["email"]
    assert post(srv, "/v1/recover/start", {"email": a}).status_code == 202
    code = code_of(srv, a, "recover_code")
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: post(srv, "/v1/recover/verify",
                                               {"email": a, "code": code}), range(8)))
    minted = [r for r in answers if r.status_code == 200]
    assert len(minted) == 1, [(r.status_code, r.text) for r in answers]
    for r in answers:
        if r.status_code != 200:
            assert_api_error(r, 404, "no_pending_recovery")
    keys = requests.get(f"{srv.api}/v1/api-keys", headers=auth(account["api_key"])).json()
    labels = [k.get("label") for k in keys.get("api_keys", keys.get("keys", []))]
    assert labels.count("recovered") == 1, keys


def test_internal_routes_need_the_bootstrap_secret(srv, server):
    for secret in (None, "wrong"):
        r = internal(srv, "POST", "/internal/principals", secret=secret,
                     json={"email": email()})
        assert_api_error(r, 404, "route_not_found")
    # A deployment with no secret configured has no internal routes at all.
    assert_api_error(internal(server, "POST", "/internal/principals", json={"email": email()}),
                     404, "route_not_found")
    assert_api_error(internal(server, "POST", "/internal/clock", json={"advance_seconds": 1}),
                     404, "route_not_found")
    r = internal(srv, "POST", "/internal/principals", json={"email": email()})
    assert r.status_code == 200, r.text
    p = r.json()
    assert get_connection(srv, p["api_key"]).status_code == 200
    r = internal(srv, "POST", f"/internal/principals/{p['principal_id']}/suspend",
                 json={"suspended": True})
    assert r.status_code == 200 and r.json()["suspended"] is True
    assert_api_error(get_connection(srv, p["api_key"]), 403, "principal_suspended")
    internal(srv, "POST", f"/internal/principals/{p['principal_id']}/suspend",
             json={"suspended": False})
    key_id = p["api_key"].split("_")[2]
    r = internal(srv, "POST", f"/internal/api-keys/{key_id}/revoke")
    assert r.status_code == 200 and r.json()["revoked"] is True
    assert_api_error(get_connection(srv, p["api_key"]), 401, "api_key_revoked")
    err = assert_api_error(internal(srv, "POST", "/internal/selftest/error"), 500, "internal")
    assert err["message"] == "internal error"
    ok = internal(srv, "GET", "/internal/tls-ask",
                  params={"domain": f"w-{p['warehouse_id']}.s3.example.test"})
    assert ok.status_code == 200
    assert internal(srv, "GET", "/internal/tls-ask",
                    params={"domain": "w-nope.s3.example.test"}).status_code == 404


def test_onboard_gives_a_person_without_an_organisation_one(srv):
    # A person who joined a claimed domain's organisation and then left it has none.
    domain = f"solo-{uuid.uuid4().hex[:6]}.test"
    owner = srv.signup(email=f"boss@{domain}")
    org = owner["organization"]["org_id"]
    requests.post(f"{srv.api}/v1/orgs/{org}/domains", headers=auth(owner["api_key"]),
                  json={"domain": domain}).raise_for_status()
    requests.patch(f"{srv.api}/v1/orgs/{org}", headers=auth(owner["api_key"]),
                   json={"domain_join": True}).raise_for_status()
    a = f"solo@{domain}"
    assert post(srv, "/v1/signup/start", {"email": a}).status_code == 202
    joined = post(srv, "/v1/signup/verify", {"email": a, "code": code_of(srv, a),
                                              "accept_terms": True}).json()
    key = joined["api_key"]
    r = requests.delete(f"{srv.api}/v1/orgs/{org}/members/{joined['principal_id']}",
                        headers=auth(key))
    assert r.status_code == 200, r.text
    assert requests.get(srv.api + "/v1/orgs", headers=auth(key)).json()["organizations"] == []
    handle = "solo-" + uuid.uuid4().hex[:6]
    r = post(srv, "/v1/onboard", {"organization_name": "Solo", "handle": handle}, key)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["created"] is True and body["organization"]["handle"] == handle
    assert body["organization"]["role"] == "admin" and body["project_id"]
    assert body["connection"]["level"] == "write"
    again = post(srv, "/v1/onboard", {}, key).json()
    assert again["created"] is False and again["warehouse_id"] == body["warehouse_id"]


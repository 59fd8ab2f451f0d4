"""Black-box tests of password login and sessions (API reference, "Login and sessions"):
the signup form's set-password link, login, refresh rotation and reuse detection,
logout, the session list, reset and change, and their rate limits. A server of the
module's own with a clock the tests move forward (no sleeping)."""

from concurrent.futures import ThreadPoolExecutor
import uuid

import jwt
import pytest
import requests

from conftest import BOOTSTRAP_SECRET as SECRET
from conftest import advance_clock
from test_control_api import assert_api_error, auth

PASSWORD = "violet tangerine 42 kite"


@pytest.fixture(scope="module")
def srv(clocked_server):
    return clocked_server


@pytest.fixture(autouse=True)
def fresh_windows(srv):
    # Every rate window is an hour or less: each test starts with empty ones.
    advance_clock(srv, 3601)


def address():
    return f"ada-{uuid.uuid4().hex[:10]}@example.com"


def post(srv, path, body=None, key=None):
    return requests.post(srv.api + path, json=body, headers=auth(key) if key else {})


def login_token(srv, email, purpose):
    r = requests.get(srv.api + f"/internal/login-tokens/{email}", params={"purpose": purpose},
                     headers={"X-Bootstrap-Secret": SECRET})
    assert r.status_code == 200, r.text
    return r.json()["token"]


def form_signup(srv, org="Lovelace Analytics"):
    email = address()
    handle = "lov-" + uuid.uuid4().hex[:8]
    r = post(srv, "/v1/auth/signup", {"email": email, "full_name": "Ada L",
                                      "organization_name": org, "handle": handle,
                                      "return_to": "/app/device?user_code=ABCD-EFGH"})
    assert r.status_code == 202, r.text
    return email, handle, r.json()


def signed_up(srv):
    """A person who finished the form signup: (email, session answer)."""
    email, _, _ = form_signup(srv)
    r = post(srv, "/v1/auth/password/set",
             {"token": login_token(srv, email, "set_password"), "password": PASSWORD})
    assert r.status_code == 200, r.text
    return email, r.json()


def check_session_shape(srv, s, email):
    assert s["token_type"] == "Bearer" and s["expires_in"] == 900
    assert s["refresh_expires_in"] == 30 * 86400
    assert s["refresh_token"].startswith("rt_") and s["session_id"].startswith("s_")
    assert s["principal"]["email"] == email and s["principal"]["kind"] == "human"
    keys = requests.get(srv.api + "/jwks.json").json()["keys"]
    kid = jwt.get_unverified_header(s["access_token"])["kid"]
    key = jwt.PyJWK({k["kid"]: k for k in keys}[kid])
    claims = jwt.decode(s["access_token"], key.key, algorithms=["RS256"],
                        options={"verify_aud": False}, leeway=10**9)
    assert (claims["sub"], claims["email"], claims["kind"], claims["sid"]) == (
        s["principal_id"], email, "human", s["session_id"])
    assert claims["exp"] - claims["iat"] == 900


def test_form_signup_sets_a_password_and_opens_a_session(srv):
    email, handle, started = form_signup(srv)
    assert started["delivery"] == "log" and started["expires_in"] == 259200
    assert started["organization"]["handle"] == handle
    assert started["organization"]["status"] == "pending"
    assert started["return_to"] == "/app/device?user_code=ABCD-EFGH"
    # Nothing is usable before the link: no login, and the handle is reserved.
    assert_api_error(post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}), 401,
                     "invalid_login")
    assert_api_error(post(srv, "/v1/auth/signup", {"email": address(), "handle": handle,
                                                   "organization_name": "x"}), 409,
                     "handle_taken")
    token = login_token(srv, email, "set_password")
    # A password that breaks a rule does not spend the link.
    for password, code in [("short", "password_too_short"), ("x" * 257, "password_too_long"),
                           (f"my {email} pw", "password_contains_identity"),
                           ("lovelace analytics 1", "password_contains_identity")]:
        assert_api_error(post(srv, "/v1/auth/password/set",
                              {"token": token, "password": password}), 400, code,
                         field="password")
    r = post(srv, "/v1/auth/password/set", {"token": token, "password": PASSWORD})
    assert r.status_code == 200, r.text
    s = r.json()
    check_session_shape(srv, s, email)
    assert s["organization"]["handle"] == handle and s["organization"]["role"] == "admin"
    assert s["organization"]["joined_via"] == "signup-form"
    assert s["terms"]["accepted"] is True
    # The link is spent; the access token opens the API; the address has an account now.
    assert_api_error(post(srv, "/v1/auth/password/set", {"token": token, "password": PASSWORD}),
                     401, "invalid_login_token")
    me = requests.get(srv.api + "/v1/orgs", headers=auth(s["access_token"]))
    assert me.status_code == 200 and me.json()["organizations"][0]["handle"] == handle, me.text
    assert_api_error(post(srv, "/v1/auth/signup", {"email": email}), 409, "already_exists")


def test_set_password_link_expires_after_three_days(srv):
    email, _, _ = form_signup(srv)
    token = login_token(srv, email, "set_password")
    advance_clock(srv, 3 * 86400 + 1)
    assert_api_error(post(srv, "/v1/auth/password/set", {"token": token, "password": PASSWORD}),
                     410, "token_expired")
    assert_api_error(post(srv, "/v1/auth/password/set",
                          {"token": "lt_unknown", "password": PASSWORD}), 401,
                     "invalid_login_token")


def test_return_to_must_stay_on_the_account_pages(srv):
    for bad in ["https://evil.example/app/", "//evil.example/app/", "/api/x", "/app//evil"]:
        assert_api_error(post(srv, "/v1/auth/signup", {"email": address(), "return_to": bad}),
                         400, "invalid_value", field="return_to")


def test_login_gives_the_same_401_for_every_failure(srv):
    email, _ = signed_up(srv)
    code_only = address()
    srv.signup(email=code_only)  # an account from the one-call signup has no password
    bodies = []
    for who, pw in [(email, "wrong password here"), (address(), PASSWORD),
                    (code_only, PASSWORD)]:
        err = assert_api_error(post(srv, "/v1/auth/login", {"email": who, "password": pw}), 401,
                               "invalid_login")
        bodies.append((err["message"], err.get("remedy")))
    assert len(set(bodies)) == 1
    r = post(srv, "/v1/auth/login", {"email": email.upper(), "password": PASSWORD})
    assert r.status_code == 200, r.text
    check_session_shape(srv, r.json(), email)


def test_ten_failures_per_address_lock_that_address_for_an_hour(srv):
    email, _ = signed_up(srv)
    for _ in range(10):
        assert_api_error(post(srv, "/v1/auth/login", {"email": email, "password": "nope " * 3}),
                         401, "invalid_login")
    r = post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD})
    err = assert_api_error(r, 429, "rate_limited")
    assert 0 < err["retry_after_seconds"] <= 3600
    assert r.headers["Retry-After"] == str(err["retry_after_seconds"])
    # Another address is unaffected; the window passes.
    other, _ = signed_up(srv)
    assert post(srv, "/v1/auth/login", {"email": other, "password": PASSWORD}).status_code == 200
    advance_clock(srv, 3601)
    assert post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}).status_code == 200


def test_120_attempts_per_caller_address_an_hour(srv):
    for i in range(120):
        r = post(srv, "/v1/auth/login", {"email": f"nobody{i}@example.com", "password": "x" * 12})
        assert r.status_code == 401, (i, r.text)
    assert_api_error(post(srv, "/v1/auth/login", {"email": "z@example.com", "password": "x"}),
                     429, "rate_limited")


def test_refresh_rotates_and_a_reused_token_revokes_the_session(srv):
    email, s = signed_up(srv)
    advance_clock(srv, 86400)
    r = post(srv, "/v1/auth/refresh", {"refresh_token": s["refresh_token"]})
    assert r.status_code == 200, r.text
    r1 = r.json()
    assert r1["session_id"] == s["session_id"] and r1["refresh_token"] != s["refresh_token"]
    check_session_shape(srv, r1, email)
    # The expiry slid: 30 days from the refresh.
    listed = requests.get(srv.api + "/v1/auth/sessions", headers=auth(r1["access_token"])).json()
    assert listed["count"] == 1 and listed["sessions"][0]["current"] is True
    # The rotated-out token again: theft signal, the whole session is revoked.
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": s["refresh_token"]}), 401,
                     "refresh_reused")
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": r1["refresh_token"]}), 401,
                     "session_revoked")
    assert_api_error(requests.get(srv.api + "/v1/orgs", headers=auth(r1["access_token"])), 401,
                     "session_revoked")
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": "rt_nope"}), 401,
                     "invalid_refresh_token")


def test_a_session_expires_after_thirty_idle_days(srv):
    _, s = signed_up(srv)
    advance_clock(srv, 29 * 86400)
    r = post(srv, "/v1/auth/refresh", {"refresh_token": s["refresh_token"]})
    assert r.status_code == 200, r.text
    advance_clock(srv, 29 * 86400)  # 58 days after login, 29 after the last refresh
    r = post(srv, "/v1/auth/refresh", {"refresh_token": r.json()["refresh_token"]})
    assert r.status_code == 200, r.text
    advance_clock(srv, 30 * 86400 + 1)
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": r.json()["refresh_token"]}),
                     401, "session_expired")


def test_logout_by_refresh_token_or_access_token(srv):
    email, s1 = signed_up(srv)
    s2 = post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}).json()
    r = post(srv, "/v1/auth/logout", {"refresh_token": s1["refresh_token"]})
    assert r.status_code == 200 and r.json() == {"revoked": True, "session_id": s1["session_id"]}
    assert_api_error(requests.get(srv.api + "/v1/orgs", headers=auth(s1["access_token"])), 401,
                     "session_revoked")
    r = requests.post(srv.api + "/v1/auth/logout", headers=auth(s2["access_token"]))
    assert r.status_code == 200 and r.json()["session_id"] == s2["session_id"], r.text
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": s2["refresh_token"]}), 401,
                     "session_revoked")
    assert_api_error(post(srv, "/v1/auth/logout", {}), 400, "missing_field")


def test_session_list_and_revoke(srv):
    email, s1 = signed_up(srv)
    s2 = requests.post(srv.api + "/v1/auth/login", json={"email": email, "password": PASSWORD},
                       headers={"User-Agent": "pytest-browser/1"}).json()
    listed = requests.get(srv.api + "/v1/auth/sessions", headers=auth(s2["access_token"])).json()
    assert listed["count"] == 2
    by_id = {x["session_id"]: x for x in listed["sessions"]}
    assert by_id[s2["session_id"]]["current"] is True
    assert by_id[s1["session_id"]]["current"] is False
    assert by_id[s2["session_id"]]["user_agent"] == "pytest-browser/1"
    assert by_id[s2["session_id"]]["ip"] == "127.0.0.1"
    assert all(x["created_at"] and x["expires_at"] and x["last_used_at"] for x in listed["sessions"])
    # Another account's session is "not found", like an unknown one.
    _, stranger = signed_up(srv)
    for sid in [stranger["session_id"], "s_nope"]:
        assert_api_error(requests.delete(srv.api + f"/v1/auth/sessions/{sid}",
                                         headers=auth(s2["access_token"])), 404,
                         "session_not_found")
    r = requests.delete(srv.api + f"/v1/auth/sessions/{s1['session_id']}",
                        headers=auth(s2["access_token"]))
    assert r.status_code == 200 and r.json() == {"session_id": s1["session_id"], "revoked": True}
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": s1["refresh_token"]}), 401,
                     "session_revoked")
    assert requests.get(srv.api + "/v1/auth/sessions",
                        headers=auth(stranger["access_token"])).json()["count"] == 1


def test_password_reset_revokes_every_session(srv):
    email, s1 = signed_up(srv)
    unknown = address()
    answers = [post(srv, "/v1/auth/password/reset/start", {"email": e}) for e in (email, unknown)]
    assert [a.status_code for a in answers] == [202, 202]
    strip = [{k: v for k, v in a.json().items() if k != "email"} for a in answers]
    assert strip[0] == strip[1] and strip[0]["expires_in"] == 1800
    token = login_token(srv, email, "reset_password")
    assert_api_error(post(srv, "/v1/auth/password/reset", {"token": token, "password": "short"}),
                     400, "password_too_short")
    r = post(srv, "/v1/auth/password/reset", {"token": token, "password": "a brand new secret 7"})
    assert r.status_code == 200, r.text
    done = r.json()
    assert done["sessions_revoked"] == 1 and done["first_password"] is False
    check_session_shape(srv, done, email)
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": s1["refresh_token"]}), 401,
                     "session_revoked")
    assert_api_error(post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}), 401,
                     "invalid_login")
    assert post(srv, "/v1/auth/login",
                {"email": email, "password": "a brand new secret 7"}).status_code == 200
    assert_api_error(post(srv, "/v1/auth/password/reset", {"token": token, "password": PASSWORD}),
                     401, "invalid_login_token")


def test_reset_link_lives_thirty_minutes_and_sets_a_first_password(srv):
    email = address()
    srv.signup(email=email)  # no password yet
    assert post(srv, "/v1/auth/password/reset/start", {"email": email}).status_code == 202
    stale = login_token(srv, email, "reset_password")
    advance_clock(srv, 1801)
    assert_api_error(post(srv, "/v1/auth/password/reset", {"token": stale, "password": PASSWORD}),
                     410, "token_expired")
    assert post(srv, "/v1/auth/password/reset/start", {"email": email}).status_code == 202
    r = post(srv, "/v1/auth/password/reset",
             {"token": login_token(srv, email, "reset_password"), "password": PASSWORD})
    assert r.status_code == 200 and r.json()["first_password"] is True, r.text
    assert r.json()["sessions_revoked"] == 0


def test_reset_start_rate_limits(srv):
    email, _ = signed_up(srv)
    assert post(srv, "/v1/auth/password/reset/start", {"email": email}).status_code == 202
    err = assert_api_error(post(srv, "/v1/auth/password/reset/start", {"email": email}), 429,
                           "rate_limited")
    assert 0 < err["retry_after_seconds"] <= 60
    # Five an hour per caller address, shared with the signup form (one was spent above).
    for _ in range(3):
        assert post(srv, "/v1/auth/password/reset/start",
                    {"email": address()}).status_code == 202
    assert_api_error(post(srv, "/v1/auth/signup", {"email": address()}), 429, "rate_limited")


def test_password_change_revokes_the_other_sessions(srv):
    email, s1 = signed_up(srv)
    s2 = post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}).json()
    key = s2["access_token"]
    assert_api_error(post(srv, "/v1/auth/password/change",
                          {"current_password": "wrong wrong wrong", "new_password": "x" * 20},
                          key), 401, "invalid_login")
    assert_api_error(post(srv, "/v1/auth/password/change",
                          {"current_password": PASSWORD, "new_password": "short"}, key), 400,
                     "password_too_short")
    r = post(srv, "/v1/auth/password/change",
             {"current_password": PASSWORD, "new_password": "another good secret 9"}, key)
    assert r.status_code == 200, r.text
    assert r.json()["changed"] is True and r.json()["other_sessions_revoked"] == 1
    assert r.json()["password_changed_at"].endswith("Z")
    assert_api_error(post(srv, "/v1/auth/refresh", {"refresh_token": s1["refresh_token"]}), 401,
                     "session_revoked")
    assert requests.get(srv.api + "/v1/auth/sessions", headers=auth(key)).status_code == 200
    assert post(srv, "/v1/auth/login",
                {"email": email, "password": "another good secret 9"}).status_code == 200


def test_a_change_racing_a_reset_never_undoes_the_reset(srv):
    """Someone holding a session and the old password changes it while the owner resets it
    by mail: the reset's password is the one in force afterwards, whichever lands first."""
    for round_ in range(4):
        advance_clock(srv, 3601)  # the signup and reset windows per caller address
        email, _ = signed_up(srv)
        key = post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}).json()[
            "access_token"]
        assert post(srv, "/v1/auth/password/reset/start", {"email": email}).status_code == 202
        token = login_token(srv, email, "reset_password")
        changed, reset = f"changed secret {round_} abc", f"reset secret {round_} xyz"
        with ThreadPoolExecutor(2) as pool:
            change = pool.submit(post, srv, "/v1/auth/password/change",
                                 {"current_password": PASSWORD, "new_password": changed}, key)
            done = pool.submit(post, srv, "/v1/auth/password/reset",
                               {"token": token, "password": reset})
            assert done.result().status_code == 200, done.result().text
            assert change.result().status_code in (200, 401, 409), change.result().text
        assert post(srv, "/v1/auth/login", {"email": email, "password": reset}).status_code == 200
        assert_api_error(post(srv, "/v1/auth/login", {"email": email, "password": changed}), 401,
                         "invalid_login")


def test_password_change_for_an_account_without_one_or_an_agent(srv):
    account = srv.signup()
    assert_api_error(post(srv, "/v1/auth/password/change",
                          {"current_password": "x" * 12, "new_password": "y" * 12},
                          account["api_key"]), 409, "no_password_set")
    org = account["organization"]["org_id"]
    agent = post(srv, f"/v1/orgs/{org}/agents", {"name": "bot-" + uuid.uuid4().hex[:6]},
                 account["api_key"])
    assert agent.status_code == 201, agent.text
    assert_api_error(post(srv, "/v1/auth/password/change",
                          {"current_password": "x" * 12, "new_password": "y" * 12},
                          agent.json()["api_key"]), 403, "forbidden")


def test_a_suspended_person_cannot_log_in(srv):
    email, s = signed_up(srv)
    r = requests.post(srv.api + f"/internal/principals/{s['principal_id']}/suspend",
                      headers={"X-Bootstrap-Secret": SECRET}, json={"suspended": True})
    assert r.status_code == 200, r.text
    assert_api_error(post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}), 403,
                     "principal_suspended")
    assert_api_error(requests.get(srv.api + "/v1/orgs", headers=auth(s["access_token"])), 403,
                     "principal_suspended")


def test_wrong_passwords_sent_at_once_are_held_to_the_ten_failures(srv):
    """Each attempt counts as a failure from before its password hash is checked, so
    twenty wrong guesses at once get ten 401s and ten 429s, never more guesses checked;
    a right password afterwards is refused as the eleventh."""
    from concurrent.futures import ThreadPoolExecutor
    advance_clock(srv, 3601)  # past the caller-address window earlier tests filled
    email, _ = signed_up(srv)
    with ThreadPoolExecutor(20) as pool:
        codes = sorted(pool.map(lambda _: post(srv, "/v1/auth/login", {
            "email": email, "password": "nope " * 3}).status_code, range(20)))
    assert codes == [401] * 10 + [429] * 10, codes
    assert_api_error(post(srv, "/v1/auth/login", {"email": email, "password": PASSWORD}), 429,
                     "rate_limited")
    # A right password takes its hold back: it leaves no failure behind.
    other, _ = signed_up(srv)
    for _ in range(12):
        assert post(srv, "/v1/auth/login", {"email": other, "password": PASSWORD}).status_code == 200

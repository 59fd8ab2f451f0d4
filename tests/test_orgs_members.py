"""Black-box tests of organisations (PATCH, domains), members, invitations, agents (list,
update, revoke), Terms and account deletion."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import requests

from test_control_api import assert_api_error, auth, create_agent, get_connection, signup
from test_projects_warehouses import new_account
from test_warehouse_lifecycle import grants_of, put_grant, revoke_grant


def org_url(server, account, suffix=""):
    return f"{server.api}/v1/orgs/{account['organization']['org_id']}{suffix}"


def company_account(server):
    """An account whose address is on a company domain of its own."""
    domain = f"acme-{uuid.uuid4().hex[:8]}.test"
    return new_account(server, email=f"ana@{domain}"), domain


def invite(server, account, email, role="member"):
    r = requests.post(org_url(server, account, "/invitations"), headers=auth(account["api_key"]),
                      json={"email": email, "role": role})
    assert r.status_code == 201, r.text
    return r.json()


def invited_member(server, account, role="member"):
    """A second person, invited and then signed up (the invitation applies on signup)."""
    email = f"bo-{uuid.uuid4().hex[:8]}@example.com"
    inv = invite(server, account, email, role)
    return new_account(server, email=email), inv


def members(server, account, key=None):
    r = requests.get(org_url(server, account, "/members"), headers=auth(key or account["api_key"]))
    assert r.status_code == 200, r.text
    return {m["principal_id"]: m for m in r.json()["members"]}


def test_rename_and_domain_join_need_a_claimed_domain(server):
    account, domain = company_account(server)
    key = account["api_key"]
    r = requests.patch(org_url(server, account), headers=auth(key), json={"name": "Acme Labs"})
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "Acme Labs" and r.json()["role"] == "admin"
    assert_api_error(requests.patch(org_url(server, account), headers=auth(key),
                                    json={"domain_join": True}), 400, "no_domain")
    # Claims: public mail providers never; only a domain of the caller's own address.
    claim = lambda d: requests.post(org_url(server, account, "/domains"), headers=auth(key),
                                    json={"domain": d})
    assert_api_error(claim("gmail.com"), 400, "public_mail_domain")
    assert_api_error(claim("other-company.test"), 403, "domain_not_yours")
    r = claim(domain.upper())
    assert r.status_code == 201, r.text
    assert r.json()["domains"] == [{"domain": domain, "verified_via": f"email:ana@{domain}"}]
    r = requests.patch(org_url(server, account), headers=auth(key), json={"domain_join": True})
    assert r.status_code == 200 and r.json()["domain_join"] is True
    [listed] = requests.get(server.api + "/v1/orgs", headers=auth(key)).json()["organizations"]
    assert listed["domain_join"] is True and listed["name"] == "Acme Labs"
    assert listed["members"] == 1 and listed["status"] == "active"
    # One organisation per domain.
    other, _ = company_account(server)
    r = requests.post(org_url(server, other, "/domains"), headers=auth(other["api_key"]),
                      json={"domain": domain})
    assert_api_error(r, 403, "domain_not_yours")
    # Releasing the last domain switches domain join off.
    r = requests.delete(org_url(server, account, f"/domains/{domain}"), headers=auth(key))
    assert r.status_code == 200, r.text
    assert r.json()["removed"] == domain and r.json()["domain_join"] is False
    assert_api_error(requests.delete(org_url(server, account, f"/domains/{domain}"),
                                     headers=auth(key)), 404, "domain_not_found")


def test_a_rename_racing_a_domain_release_keeps_domain_join_off(server):
    """A rename and the release of the last domain, sent at the same moment: whichever
    lands second must not write back the domain join the first one switched off."""
    account, domain = company_account(server)
    key = account["api_key"]
    session = requests.Session()
    for round_ in range(25):
        r = session.post(org_url(server, account, "/domains"), headers=auth(key),
                         json={"domain": domain})
        assert r.status_code == 201, r.text
        r = session.patch(org_url(server, account), headers=auth(key),
                          json={"domain_join": True})
        assert r.status_code == 200, r.text
        with ThreadPoolExecutor(2) as pool:
            rename = pool.submit(requests.patch, org_url(server, account), headers=auth(key),
                                 json={"name": f"Acme {round_}"})
            release = pool.submit(requests.delete, org_url(server, account, f"/domains/{domain}"),
                                  headers=auth(key))
            assert rename.result().status_code == 200, rename.result().text
            assert release.result().status_code == 200, release.result().text
        r = session.get(f"{server.api}/v1/orgs", headers=auth(key))
        org = next(o for o in r.json()["organizations"]
                   if o["org_id"] == account["organization"]["org_id"])
        assert org["domains"] == [] and org["domain_join"] is False, (round_, org)
        assert org["name"] == f"Acme {round_}"


def test_invitation_applies_on_signup_and_members_get_membership_read(server):
    admin = new_account(server)
    member, inv = invited_member(server, admin)
    assert inv["token"].startswith("inv_") and inv["expires_in"] == 7 * 24 * 3600
    assert inv["accept_with"].endswith(inv["token"])
    listed = members(server, admin)
    assert listed[member["principal_id"]]["role"] == "member"
    assert listed[member["principal_id"]]["kind"] == "human"
    # The member reads the admin's catalog through membership.
    wid = admin["warehouse_id"]
    g = grants_of(server, admin["api_key"], wid)[member["principal_id"]]
    assert (g["level"], g["via"]) == ("read", "membership")
    conn = get_connection(server, member["api_key"], warehouse_id=wid).json()
    assert conn["level"] == "read" and conn["identity"].endswith("-ro")
    # An admin revokes the membership read for this catalog: level none, and no access.
    r = revoke_grant(server, admin["api_key"], wid, member["principal_id"])
    assert r.status_code == 200, r.text
    assert r.json()["revoked"] == {"level": "read", "via": "membership"}
    assert r.json()["level"] == "none"
    assert grants_of(server, admin["api_key"], wid)[member["principal_id"]]["level"] == "none"
    assert_api_error(get_connection(server, member["api_key"], warehouse_id=wid), 403,
                     "forbidden", your_level="none")
    # A member holding nothing cannot grant.
    assert_api_error(put_grant(server, member["api_key"], wid, member["principal_id"], "read"),
                     403, "forbidden")
    # The used token is spent.
    r = requests.post(server.api + "/v1/orgs/invitations/accept",
                      headers=auth(member["api_key"]), json={"token": inv["token"]})
    assert_api_error(r, 404, "invitation_not_found")


def test_accepting_an_invitation_checks_the_address(server):
    admin = new_account(server)
    stranger = new_account(server)
    inv = invite(server, admin, stranger["connection"]["warehouse_id"] + "@nobody.test")
    accept = lambda key, token: requests.post(server.api + "/v1/orgs/invitations/accept",
                                              headers=auth(key), json={"token": token})
    assert_api_error(accept(stranger["api_key"], inv["token"]), 403,
                     "invitation_for_someone_else")
    assert_api_error(accept(stranger["api_key"], "inv_nope"), 404, "invitation_not_found")
    # The invited address, signed up elsewhere first, accepts explicitly.
    email = f"cy-{uuid.uuid4().hex[:8]}@example.com"
    later = new_account(server, email=email)
    inv = invite(server, admin, email, role="admin")
    r = accept(later["api_key"], inv["token"])
    assert r.status_code == 200, r.text
    assert r.json()["org_id"] == admin["organization"]["org_id"] and r.json()["role"] == "admin"
    orgs = requests.get(server.api + "/v1/orgs", headers=auth(later["api_key"])).json()
    assert len(orgs["organizations"]) == 2


def test_roles_and_last_admin_protection(server):
    admin = new_account(server)
    member, _ = invited_member(server, admin)
    aid, mid = admin["principal_id"], member["principal_id"]
    role = lambda key, who, r: requests.patch(org_url(server, admin, f"/members/{who}"),
                                              headers=auth(key), json={"role": r})
    remove = lambda key, who: requests.delete(org_url(server, admin, f"/members/{who}"),
                                              headers=auth(key))
    assert_api_error(role(admin["api_key"], aid, "member"), 409, "last_admin")
    assert_api_error(remove(admin["api_key"], aid), 409, "last_admin")
    assert_api_error(role(member["api_key"], mid, "admin"), 403, "insufficient_role")
    assert_api_error(role(admin["api_key"], mid, "boss"), 400, "invalid_value", field="role")
    assert_api_error(role(admin["api_key"], "p_nobody", "admin"), 404, "member_not_found")
    # "owner" is the alias of admin, never returned.
    r = role(admin["api_key"], mid, "owner")
    assert r.status_code == 200 and r.json()["role"] == "admin"
    # An admin agent does not count for last-admin protection.
    agent = create_agent(server, admin, {"name": "bot", "role": "admin"}).json()
    assert role(admin["api_key"], mid, "member").json()["role"] == "member"
    assert_api_error(role(agent["api_key"], aid, "member"), 409, "last_admin")
    # A member leaves on its own; then it is gone.
    r = remove(member["api_key"], mid)
    assert r.status_code == 200 and r.json()["left"] is True and r.json()["removed"] is True
    assert mid not in members(server, admin)
    assert_api_error(remove(admin["api_key"], mid), 404, "member_not_found")
    actions = [e["action"] for e in requests.get(
        server.api + "/v1/audit", headers=auth(admin["api_key"]),
        params={"org_id": admin["organization"]["org_id"], "action": "org.member*"}).json()["events"]]
    assert actions == ["org.member_remove", "org.member_role", "org.member_role"]


def test_agents_list_update_and_revoke(server):
    admin = new_account(server)
    wid = admin["warehouse_id"]
    created = create_agent(server, admin, {"name": "etl", "grants": [
        {"warehouse_id": wid, "level": "read"}]}).json()
    agent_id = created["agent_id"]
    url = org_url(server, admin, f"/agents/{agent_id}")
    r = requests.get(org_url(server, admin, "/agents"), headers=auth(admin["api_key"]))
    assert r.status_code == 200, r.text
    [listed] = r.json()["agents"]
    assert listed["agent_id"] == agent_id and listed["grants"] == [
        {"warehouse_id": wid, "name": "lake", "level": "read"}]
    assert listed["created_by"] == admin["principal_id"] and "api_key" not in listed
    # Update: the grants list replaces; the role changes and is audited with the previous one.
    r = requests.patch(url, headers=auth(admin["api_key"]), json={
        "name": "etl-2", "role": "admin", "grants": [{"warehouse_id": wid, "level": "write"}]})
    assert r.status_code == 200, r.text
    assert (r.json()["name"], r.json()["role"]) == ("etl-2", "admin")
    assert r.json()["grants"][0]["level"] == "write"
    assert get_connection(server, created["api_key"], warehouse_id=wid).json()["level"] == "write"
    [event] = requests.get(server.api + "/v1/audit", headers=auth(admin["api_key"]),
                           params={"action": "agent.update"}).json()["events"]
    assert event["detail"] == {"previous_role": "member", "role": "admin"}
    assert_api_error(requests.patch(url, headers=auth(admin["api_key"]), json={}), 400,
                     "missing_field")
    assert_api_error(requests.patch(org_url(server, admin, "/agents/a_nope"),
                                    headers=auth(admin["api_key"]), json={"name": "x"}), 404,
                     "agent_not_found")
    # An agent with the admin role calls the organisation routes within it.
    r = requests.get(org_url(server, admin, "/members"), headers=auth(created["api_key"]))
    assert r.status_code == 200, r.text
    # Revoke: every key stops at once.
    r = requests.delete(url, headers=auth(admin["api_key"]))
    assert r.status_code == 200 and r.json() == {"agent_id": agent_id, "revoked": True}
    assert_api_error(get_connection(server, created["api_key"]), 401, "api_key_revoked")
    r = requests.get(org_url(server, admin, "/agents"), headers=auth(admin["api_key"]))
    assert r.json()["agents"][0]["suspended"] is True


def test_an_agent_rename_racing_a_role_change_keeps_the_role(server):
    """Renaming an agent while an admin changes its role (PATCH of its membership): the
    rename must not write back the role it read before."""
    admin = new_account(server)
    agent = create_agent(server, admin, {"name": "etl"}).json()
    agent_url = org_url(server, admin, f"/agents/{agent['agent_id']}")
    member_url = org_url(server, admin, f"/members/{agent['agent_id']}")
    key = admin["api_key"]
    for round_ in range(25):
        role = "admin" if round_ % 2 == 0 else "member"
        with ThreadPoolExecutor(2) as pool:
            rename = pool.submit(requests.patch, agent_url, headers=auth(key),
                                 json={"name": f"etl-{round_}"})
            change = pool.submit(requests.patch, member_url, headers=auth(key),
                                 json={"role": role})
            assert rename.result().status_code == 200, rename.result().text
            assert change.result().status_code == 200, change.result().text
        [listed] = requests.get(org_url(server, admin, "/agents"),
                                headers=auth(key)).json()["agents"]
        assert (listed["name"], listed["role"]) == (f"etl-{round_}", role), round_
        assert members(server, admin)[agent["agent_id"]]["role"] == role, round_


def test_member_agent_cannot_edit_others(server):
    admin = new_account(server)
    worker = create_agent(server, admin, {"name": "worker"}).json()
    other = create_agent(server, admin, {"name": "other"}).json()
    r = requests.patch(org_url(server, admin, f"/agents/{other['agent_id']}"),
                       headers=auth(worker["api_key"]), json={"name": "mine"})
    assert_api_error(r, 403, "forbidden")
    r = requests.delete(org_url(server, admin, f"/agents/{other['agent_id']}"),
                        headers=auth(worker["api_key"]))
    assert_api_error(r, 403, "forbidden")


def test_terms_in_force_and_acceptance(server):
    account = new_account(server)
    key = account["api_key"]
    r = requests.get(server.api + "/v1/terms", headers=auth(key))
    assert r.status_code == 200, r.text
    terms = r.json()
    assert terms["accepted_current"] is True  # signup accepted them
    assert [h["via"] for h in terms["history"]] == ["signup"]
    version = terms["current_version"]
    r = requests.post(server.api + "/v1/terms/accept", headers=auth(key), json={"version": "1999"})
    assert_api_error(r, 409, "terms_version_mismatch")
    r = requests.post(server.api + "/v1/terms/accept", headers=auth(key), json={})
    assert r.status_code == 200 and r.json() == {"accepted": True, "version": version}


def test_account_deletion(server):
    admin = new_account(server)
    member, _ = invited_member(server, admin)
    url = server.api + "/v1/me"
    r = requests.delete(url, headers=auth(admin["api_key"]), json={"confirm": "wrong@x.io"})
    assert_api_error(r, 400, "confirmation_required")
    email = signup_email(server, admin)
    r = requests.delete(url, headers=auth(admin["api_key"]), json={"confirm": email})
    assert_api_error(r, 409, "last_admin")  # the member would be left without an admin
    # The member leaves by deleting its own account; its keys stop.
    member_email = signup_email(server, member)
    r = requests.delete(url, headers=auth(member["api_key"]), json={"confirm": member_email})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["deleted"] is True and body["keys_revoked"] == 1
    assert len(body["organisations_left_empty"]) == 1  # its own signup organisation
    assert_api_error(get_connection(server, member["api_key"]), 401, "api_key_revoked")
    # Now the admin can go; its organisation is left empty and its agents stop.
    agent = create_agent(server, admin, {"name": "bot"}).json()
    r = requests.delete(url, headers=auth(admin["api_key"]), json={"confirm": email})
    assert r.status_code == 200, r.text
    assert r.json()["warehouses_to_purge"] == [admin["warehouse_id"]]
    assert_api_error(get_connection(server, agent["api_key"]), 401, "api_key_revoked")
    # The address is free again.
    assert signup(server, email=email).status_code == 201


def signup_email(server, account):
    r = requests.get(server.api + "/v1/orgs", headers=auth(account["api_key"]))
    members_ = requests.get(
        f"{server.api}/v1/orgs/{account['organization']['org_id']}/members",
        headers=auth(account["api_key"])).json()["members"]
    return next(m["email"] for m in members_ if m["principal_id"] == account["principal_id"])



def test_onboard_is_idempotent_and_auth_config_tells_how_to_log_in(server):
    account = new_account(server)
    key = account["api_key"]
    r = requests.post(server.api + "/v1/onboard", headers=auth(key), json={"engine": "spark"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["created"] is False and body["warehouse_id"] == account["warehouse_id"]
    assert body["connection"]["engine"] == "spark"
    assert body["organization"]["org_id"] == account["organization"]["org_id"]
    assert_api_error(requests.post(server.api + "/v1/onboard", headers=auth(key),
                                   json={"engine": "excel"}), 400, "unsupported_engine")
    cfg = requests.get(server.api + "/v1/auth/config").json()
    assert cfg["issuer"] == server.api and cfg["password_login"] is True
    assert cfg["api_key_exchange"]["token_endpoint"] == server.api + "/v1/tokens"

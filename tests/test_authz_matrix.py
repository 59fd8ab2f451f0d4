"""The authorisation matrix: every control-plane route that checks rights, called by each of
eight callers, each cell asserted on its own (status, and for a refusal the error code).

The callers, all around one organisation A (signed up by `human_admin`, with its project
and its warehouse `lake`):

  human_admin   the person who signed up: an admin of A (write on every warehouse via admin)
  human_member  a person invited to A as a member (reads A's warehouses via membership;
                admin of an organisation of their own, which does not matter here)
  agent_admin   a token of A with role admin and NO grant (role governs the organisation,
                grants govern data: it sees every warehouse, holding nothing on them)
  agent_read    a member token of A holding read on the target warehouse
  agent_write   a member token of A holding write on the target warehouse
  agent_none    a member token of A holding no grant (a warehouse it was not granted is 404)
  stranger      a person of another organisation
  operator      the deployment's bootstrap secret (X-Bootstrap-Secret) and no API key: the
                /internal routes are its own (everyone else gets the unknown-route 404), on
                the public /v1 routes it is an unauthenticated caller (401 invalid_api_key)

Expected values follow the API reference (/work/shared/spec/tablemere-api.md): its
"Auth … — admin" annotations, the error codes it lists, and the agents paragraph ("a
warehouse a member token was not granted is 404 for it; an admin token sees every warehouse
with its level"). Where the reference says nothing about a cell (which role creates
projects and catalogs, which level rotates, the code of a refusal it does not list), the
cell holds the server's current behaviour, which the other test modules pin as well.

An admin token holding no grant sees every warehouse of its organisation ("with its
level"), so the data routes refuse it with 403 forbidden rather than hiding the warehouse;
a member token not granted a warehouse gets 404.

Cells that mutate build fresh targets (a project and warehouse, an agent, a member) or make
an idempotent change, so the order of the cells does not matter.
"""

import uuid
from dataclasses import dataclass
from typing import Callable, Optional

import pytest
import requests

from conftest import BOOTSTRAP_SECRET, Server
from test_control_api import assert_api_error, auth

CALLERS = ["human_admin", "human_member", "agent_admin", "agent_read", "agent_write",
           "agent_none", "stranger", "operator"]

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": False}]}

# ------------------------------------------------------------------- expected outcomes

UNAUTH = (401, "invalid_api_key")          # the operator on a public /v1 route
HIDDEN = (404, "route_not_found")          # an /internal route without the secret
ROLE = (403, "insufficient_role")
FORBIDDEN = (403, "forbidden")
NO_WAREHOUSE = (404, "warehouse_not_found")
NO_ORG = (404, "org_not_found")
NO_PROJECT = (404, "project_not_found")


def row(human_admin, human_member, agent_admin, agent_read, agent_write, agent_none,
        stranger, operator=UNAUTH):
    return dict(zip(CALLERS, [human_admin, human_member, agent_admin, agent_read, agent_write,
                              agent_none, stranger, operator]))


def internal_row():
    return row(*([HIDDEN] * 7), operator=200)


def uid():
    return uuid.uuid4().hex[:10]


# ------------------------------------------------------------------- the world

class World:
    """Organisation A with its callers, a table in `lake`, and a few shared targets."""

    def __init__(self, srv):
        self.srv = srv
        owner = srv.signup()
        self.owner_key = owner["api_key"]
        self.org = owner["organization"]["org_id"]
        self.project = owner["project_id"]
        self.wid = owner["warehouse_id"]
        self.keys = {"human_admin": self.owner_key}
        self.ids = {"human_admin": owner["principal_id"]}

        member = self.invited_member()
        self.keys["human_member"], self.ids["human_member"] = member

        for caller, role, grants in [
                ("agent_admin", "admin", []),
                ("agent_read", "member", [{"warehouse_id": self.wid, "level": "read"}]),
                ("agent_write", "member", [{"warehouse_id": self.wid, "level": "write"}]),
                ("agent_none", "member", [])]:
            a = self.agent(role=role, grants=grants)
            self.keys[caller], self.ids[caller] = a["api_key"], a["agent_id"]

        stranger = srv.signup()
        self.keys["stranger"], self.ids["stranger"] = stranger["api_key"], stranger["principal_id"]

        # A table in `lake` for the table routes and credential vending.
        self.ns, self.table = "m", "t"
        r = self.call("POST", "/v1/tables", json={"warehouse_id": self.wid, "namespace": self.ns,
                                                  "name": self.table, "schema": SCHEMA})
        assert r.status_code == 201, r.text
        # Shared targets of idempotent changes.
        self.grantee = self.agent()["agent_id"]             # PUT grants: read, again and again
        self.role_target = self.invited_member()[1]         # PATCH member: role member, again
        self.throwaway = srv.signup()["principal_id"]       # the operator suspends it
        # A pending signup code for the operator to read.
        self.code_email = f"code-{uid()}@example.com"
        r = requests.post(srv.api + "/v1/signup/start", json={"email": self.code_email})
        assert r.status_code == 202, r.text

    # ---- helpers acting as the organisation's admin

    def call(self, method, path, key=None, **kw):
        r = requests.request(method, self.srv.api + path, headers=auth(key or self.owner_key),
                             timeout=30, **kw)
        return r

    def invited_member(self):
        email = f"member-{uid()}@example.com"
        r = self.call("POST", f"/v1/orgs/{self.org}/invitations",
                      json={"email": email, "role": "member"})
        assert r.status_code == 201, r.text
        s = self.srv.signup(email=email)
        return s["api_key"], s["principal_id"]

    def agent(self, role="member", grants=()):
        r = self.call("POST", f"/v1/orgs/{self.org}/agents",
                      json={"name": "m-" + uid(), "role": role, "grants": list(grants)})
        assert r.status_code == 201, r.text
        return r.json()

    def grant(self, wid, principal, level):
        r = self.call("PUT", f"/v1/warehouses/{wid}/grants/{principal}", json={"level": level})
        assert r.status_code == 200, r.text

    def fresh_project(self):
        r = self.call("POST", "/v1/projects", json={"name": "p-" + uid(), "org_id": self.org})
        assert r.status_code == 201, r.text
        return r.json()["project_id"]

    def fresh_warehouse(self, publish=False):
        """A new project and warehouse of A (each project holds at most 3), on which the
        read agent holds read and the write agent write, as on `lake`."""
        project = self.fresh_project()
        name = "w-" + uid()
        r = self.call("POST", "/v1/warehouses", json={"project_id": project, "name": name})
        assert r.status_code == 201, r.text
        wid = r.json()["warehouse_id"]
        self.grant(wid, self.ids["agent_read"], "read")
        self.grant(wid, self.ids["agent_write"], "write")
        if publish:
            r = self.call("POST", f"/v1/warehouses/{wid}/public", json={"confirm": name})
            assert r.status_code == 200 and r.json()["public"] is True, r.text
        return {"fresh_wid": wid, "fresh_name": name}

    def headers(self, caller):
        if caller == "operator":
            return {"X-Bootstrap-Secret": BOOTSTRAP_SECRET}
        return auth(self.keys[caller])

    def vals(self):
        return {"org": self.org, "project": self.project, "wid": self.wid, "ns": self.ns,
                "table": self.table, "grantee": self.grantee, "role_target": self.role_target,
                "throwaway": self.throwaway, "code_email": self.code_email}


@pytest.fixture(scope="module")
def srv():
    s = Server(extra_env={"TABLEMERE_BOOTSTRAP_SECRET": BOOTSTRAP_SECRET})
    yield s
    s.cleanup()


@pytest.fixture(scope="module")
def world(srv):
    return World(srv)


# ------------------------------------------------------------------- checks of allowed calls

LAKE_LEVEL = {"human_admin": ("write", "admin"), "human_member": ("read", "membership"),
              "agent_admin": ("none", None), "agent_read": ("read", "grant"),
              "agent_write": ("write", "grant")}


def check_warehouse_list(world, caller, body):
    lake = [w for w in body["warehouses"] if w["warehouse_id"] == world.wid]
    if caller == "agent_none":
        assert lake == [], body  # a member token does not see what it was not granted
    else:
        [lake] = lake
        assert (lake["my_level"], lake["my_via"]) == LAKE_LEVEL[caller], lake


def check_connection(world, caller, body):
    level = LAKE_LEVEL[caller][0]
    assert body["warehouse_id"] == world.wid and body["level"] == level, body
    assert body["identity"] == f"t-{world.wid}" + ("" if level == "write" else "-ro"), body


def check_orgs(world, caller, body):
    orgs = {o["org_id"]: o["role"] for o in body["organizations"]}
    if caller == "stranger":
        assert world.org not in orgs, body
    else:
        assert orgs.get(world.org) == ("admin" if caller.endswith("admin") else "member"), body


def check_audit(world, caller, body):
    assert body["scope"] == "organization" and body["org_id"] == world.org, body


def check_grant(world, caller, body):
    assert body["principal_id"] == world.grantee and body["level"] == "read", body


def check_suspend(world, caller, body):
    assert body == {"principal_id": world.throwaway, "suspended": True}, body


def check_code(world, caller, body):
    assert body["email"] == world.code_email and len(body["signup_code"]) == 6, body


# ------------------------------------------------------------------- the routes

@dataclass
class Route:
    id: str
    method: str
    path: str                                  # formatted with World.vals() and prepare()
    expect: dict
    body: Optional[Callable[[dict], dict]] = None
    params: Optional[Callable[[dict], dict]] = None
    prepare: Optional[Callable[[World], dict]] = None
    check: Optional[Callable] = None


def fresh_agent_with_read(world):
    a = world.agent(grants=[{"warehouse_id": world.wid, "level": "read"}])
    return {"target": a["agent_id"]}


ROUTES = [
    # ---- projects and warehouses
    Route("GET warehouses", "GET", "/v1/warehouses",
          params=lambda v: {"project": v["project"]},
          expect=row(200, 200, 200, 200, 200, 200, NO_PROJECT),
          check=check_warehouse_list),
    # The reference puts no role on POST /v1/warehouses; the server lets any human member and
    # an admin token create, and refuses member tokens (test_warehouse_lifecycle pins it).
    Route("POST warehouses", "POST", "/v1/warehouses",
          prepare=lambda w: {"fresh_project": w.fresh_project()},
          body=lambda v: {"project_id": v["fresh_project"], "name": "c-" + uid()},
          expect=row(201, 201, 201, ROLE, ROLE, ROLE, NO_PROJECT)),
    # Reference: "Auth — admin of the organisation … 403 forbidden (not an admin)".
    Route("DELETE warehouse", "DELETE", "/v1/warehouses/{fresh_wid}",
          prepare=lambda w: w.fresh_warehouse(),
          body=lambda v: {"confirm": v["fresh_name"]},
          expect=row(200, FORBIDDEN, 200, FORBIDDEN, FORBIDDEN, NO_WAREHOUSE, NO_WAREHOUSE)),
    # The reference names no level for rotation; the server asks for write.
    Route("POST rotate", "POST", "/v1/warehouses/{fresh_wid}/rotate",
          prepare=lambda w: w.fresh_warehouse(),
          expect=row(200, FORBIDDEN, FORBIDDEN, FORBIDDEN, 200, NO_WAREHOUSE, NO_WAREHOUSE)),
    # Reference: "admin only" (no refusal code listed; the server's is insufficient_role).
    Route("POST public", "POST", "/v1/warehouses/{fresh_wid}/public",
          prepare=lambda w: w.fresh_warehouse(),
          body=lambda v: {"confirm": v["fresh_name"]},
          expect=row(200, ROLE, 200, ROLE, ROLE, NO_WAREHOUSE, NO_WAREHOUSE)),
    Route("DELETE public", "DELETE", "/v1/warehouses/{fresh_wid}/public",
          prepare=lambda w: w.fresh_warehouse(publish=True),
          expect=row(200, ROLE, 200, ROLE, ROLE, NO_WAREHOUSE, NO_WAREHOUSE)),
    # ---- grants ("any member"; a member token not granted the warehouse gets 404)
    Route("GET grants", "GET", "/v1/warehouses/{wid}/grants",
          expect=row(200, 200, 200, 200, 200, NO_WAREHOUSE, NO_WAREHOUSE)),
    # "admin, or a human holding write": the human member reads, the write agent is a token.
    Route("PUT grants", "PUT", "/v1/warehouses/{wid}/grants/{grantee}",
          body=lambda v: {"level": "read"},
          expect=row(200, FORBIDDEN, 200, FORBIDDEN, FORBIDDEN, NO_WAREHOUSE, NO_WAREHOUSE),
          check=check_grant),
    # "admin, or the person who made the grant" (the admin made it).
    Route("DELETE grants", "DELETE", "/v1/warehouses/{wid}/grants/{target}",
          prepare=fresh_agent_with_read,
          expect=row(200, FORBIDDEN, 200, FORBIDDEN, FORBIDDEN, NO_WAREHOUSE, NO_WAREHOUSE)),
    # ---- recipes and tables on `lake`
    # "403 forbidden (no grant on the warehouse)"; an admin token sees every warehouse.
    Route("GET connection", "GET", "/v1/connection",
          params=lambda v: {"warehouse_id": v["wid"]},
          expect=row(200, 200, FORBIDDEN, 200, 200, NO_WAREHOUSE, NO_WAREHOUSE),
          check=check_connection),
    # "Write holders only … 403 forbidden (level read or none)".
    Route("POST credentials", "POST", "/v1/credentials",
          body=lambda v: {"warehouse_id": v["wid"], "namespace": v["ns"], "name": v["table"]},
          expect=row(200, FORBIDDEN, FORBIDDEN, FORBIDDEN, 200, NO_WAREHOUSE, NO_WAREHOUSE)),
    Route("POST tables", "POST", "/v1/tables",
          body=lambda v: {"warehouse_id": v["wid"], "namespace": v["ns"], "name": "t" + uid(),
                          "schema": SCHEMA},
          expect=row(201, FORBIDDEN, FORBIDDEN, FORBIDDEN, 201, NO_WAREHOUSE, NO_WAREHOUSE)),
    Route("GET tables", "GET", "/v1/tables",
          params=lambda v: {"warehouse": v["wid"]},
          expect=row(200, 200, FORBIDDEN, 200, 200, NO_WAREHOUSE, NO_WAREHOUSE)),
    Route("GET table", "GET", "/v1/table",
          params=lambda v: {"warehouse": v["wid"], "namespace": v["ns"], "name": v["table"]},
          expect=row(200, 200, FORBIDDEN, 200, 200, NO_WAREHOUSE, NO_WAREHOUSE)),
    Route("GET namespaces", "GET", "/v1/namespaces",
          params=lambda v: {"warehouse": v["wid"]},
          expect=row(200, 200, FORBIDDEN, 200, 200, NO_WAREHOUSE, NO_WAREHOUSE)),
    # ---- the organisation
    Route("GET orgs", "GET", "/v1/orgs",
          expect=row(200, 200, 200, 200, 200, 200, 200), check=check_orgs),
    Route("PATCH org", "PATCH", "/v1/orgs/{org}",
          body=lambda v: {"name": "Matrix Org"},
          expect=row(200, ROLE, 200, ROLE, ROLE, ROLE, NO_ORG)),
    Route("GET members", "GET", "/v1/orgs/{org}/members",
          expect=row(200, 200, 200, 200, 200, 200, NO_ORG)),
    Route("PATCH member", "PATCH", "/v1/orgs/{org}/members/{role_target}",
          body=lambda v: {"role": "member"},
          expect=row(200, ROLE, 200, ROLE, ROLE, ROLE, NO_ORG)),
    Route("DELETE member", "DELETE", "/v1/orgs/{org}/members/{target}",
          prepare=lambda w: {"target": w.invited_member()[1]},
          expect=row(200, ROLE, 200, ROLE, ROLE, ROLE, NO_ORG)),
    Route("POST invitations", "POST", "/v1/orgs/{org}/invitations",
          body=lambda v: {"email": f"inv-{uid()}@example.com", "role": "member"},
          expect=row(201, ROLE, 201, ROLE, ROLE, ROLE, NO_ORG)),
    # ---- agents: "admin, or a member within their own grants and role"
    Route("GET agents", "GET", "/v1/orgs/{org}/agents",
          expect=row(200, 200, 200, 200, 200, 200, NO_ORG)),
    Route("POST agents read-grant", "POST", "/v1/orgs/{org}/agents",
          body=lambda v: {"name": "a-" + uid(),
                          "grants": [{"warehouse_id": v["wid"], "level": "read"}]},
          expect=row(201, 201, 201, 201, 201, NO_WAREHOUSE, NO_ORG)),
    Route("POST agents write-grant", "POST", "/v1/orgs/{org}/agents",
          body=lambda v: {"name": "a-" + uid(),
                          "grants": [{"warehouse_id": v["wid"], "level": "write"}]},
          expect=row(201, FORBIDDEN, 201, FORBIDDEN, 201, NO_WAREHOUSE, NO_ORG)),
    Route("POST agents admin-role", "POST", "/v1/orgs/{org}/agents",
          body=lambda v: {"name": "a-" + uid(), "role": "admin"},
          expect=row(201, ROLE, 201, ROLE, ROLE, ROLE, NO_ORG)),
    # "admin, or the member who created it" (the admin created these).
    Route("PATCH agent", "PATCH", "/v1/orgs/{org}/agents/{target}",
          prepare=lambda w: {"target": w.agent()["agent_id"]},
          body=lambda v: {"name": "renamed-" + uid()},
          expect=row(200, FORBIDDEN, 200, FORBIDDEN, FORBIDDEN, FORBIDDEN, NO_ORG)),
    Route("DELETE agent", "DELETE", "/v1/orgs/{org}/agents/{target}",
          prepare=lambda w: {"target": w.agent()["agent_id"]},
          expect=row(200, FORBIDDEN, 200, FORBIDDEN, FORBIDDEN, FORBIDDEN, NO_ORG)),
    # ---- audit, usage, projects
    Route("GET audit", "GET", "/v1/audit",
          params=lambda v: {"org_id": v["org"]},
          expect=row(200, 200, 200, 200, 200, 200, NO_ORG), check=check_audit),
    Route("GET usage", "GET", "/v1/usage",
          params=lambda v: {"project_id": v["project"]},
          expect=row(200, 200, 200, 200, 200, 200, NO_PROJECT)),
    # The reference puts no role on POST /v1/projects; the server is admin-only.
    Route("POST projects", "POST", "/v1/projects",
          body=lambda v: {"name": "p-" + uid(), "org_id": v["org"]},
          expect=row(201, ROLE, 201, ROLE, ROLE, ROLE, NO_ORG)),
    # ---- operator routes
    Route("GET internal signup-codes", "GET", "/internal/signup-codes/{code_email}",
          expect=internal_row(), check=check_code),
    Route("POST internal suspend", "POST", "/internal/principals/{throwaway}/suspend",
          body=lambda v: {"suspended": True},
          expect=internal_row(), check=check_suspend),
]


def cells():
    for route in ROUTES:
        assert set(route.expect) == set(CALLERS), route.id
        for caller in CALLERS:
            yield pytest.param(route, caller, id=f"{route.id}-{caller}")


@pytest.mark.parametrize("route,caller", list(cells()))
def test_cell(world, route, caller):
    v = world.vals()
    if route.prepare:
        v.update(route.prepare(world))
    kw = {}
    if route.body:
        kw["json"] = route.body(v)
    if route.params:
        kw["params"] = route.params(v)
    r = requests.request(route.method, world.srv.api + route.path.format(**v),
                         headers=world.headers(caller), timeout=30, **kw)
    expected = route.expect[caller]
    if isinstance(expected, int):
        assert r.status_code == expected, f"{r.status_code} {r.text}"
        if route.check:
            route.check(world, caller, r.json())
    else:
        assert_api_error(r, *expected)

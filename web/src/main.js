// The account page: boots the session, routes /app/… paths to views, keeps the header.
import { Account } from "./account.js";
import { h, notice } from "./dom.js";
import { Session } from "./session.js";
import { catalogsView } from "./views/catalogs.js";
import { deviceView } from "./views/device.js";
import { loginView } from "./views/login.js";
import { membersView } from "./views/members.js";
import { resetView, welcomeView } from "./views/password.js";
import { sqlView } from "./views/sql.js";
import { tokensView } from "./views/tokens.js";
import { usageView } from "./views/usage.js";

// Views reachable without a session, and those that need one.
const OPEN = { welcome: welcomeView, reset: resetView };
const AUTHED = {
  catalogs: catalogsView,
  tokens: tokensView,
  members: membersView,
  usage: usageView,
  sql: sqlView,
  device: deviceView,
};

const session = new Session(renderHeader);
const account = new Account(session);

function viewName() {
  const rest = location.pathname.replace(/^\/app\/?/, "").split("/")[0];
  return rest || "catalogs";
}

function renderHeader() {
  const nav = document.getElementById("nav");
  const logout = document.getElementById("logout");
  const who = document.getElementById("who");
  nav.hidden = !session.loggedIn;
  if (!session.loggedIn) document.getElementById("org").hidden = true;
  logout.hidden = !session.loggedIn;
  who.textContent = session.loggedIn && session.principal ? session.principal.email || "" : "";
  for (const a of nav.querySelectorAll("a")) a.classList.toggle("active", a.dataset.view === viewName());
}

// A person in several organisations picks the one the views show.
function renderOrgs() {
  const select = document.getElementById("org");
  select.hidden = account.orgs.length < 2;
  select.replaceChildren(...account.orgs.map((o) => h("option", { value: o.org_id, selected: account.org && o.org_id === account.org.org_id }, `${o.name} (${o.role})`)));
}

export function go(path) {
  history.pushState(null, "", path);
  route();
}

async function route() {
  notice(null);
  renderHeader();
  const main = document.getElementById("view");
  const name = viewName();
  const ctx = { session, account, go, params: new URLSearchParams(location.search) };
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  try {
    if (OPEN[name]) {
      await OPEN[name](main, ctx);
      return;
    }
    if (!session.loggedIn && !(await session.resume())) {
      await loginView(main, { ...ctx, next: location.pathname + location.search });
      return;
    }
    await account.load();
    renderOrgs();
    const view = AUTHED[name];
    if (!view) {
      main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "/app/" }, "Your catalogs")));
      return;
    }
    await view(main, ctx);
  } catch (e) {
    if (e && e.status === 401) {
      session.clear();
      await loginView(main, { ...ctx, next: location.pathname + location.search });
      notice("Your session ended; log in again.");
      return;
    }
    main.replaceChildren(h("p", { class: "error" }, String(e.message || e)));
  }
}

document.addEventListener("click", (event) => {
  const a = event.target.closest && event.target.closest("a[href^='/app']");
  if (!a || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  go(a.getAttribute("href"));
});
window.addEventListener("popstate", route);
document.getElementById("org").addEventListener("change", (event) => {
  account.choose(event.target.value);
  route();
});
document.getElementById("logout").addEventListener("click", async () => {
  try {
    await session.logout();
  } finally {
    go("/app/");
    notice("You are logged out.", "info");
  }
});
route();

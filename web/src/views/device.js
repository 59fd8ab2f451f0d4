// The consent screen `tablemere login` sends a person to: who asks, for which catalogs,
// at which level (the person may lower write to read), approve or deny.
import { busy, h, notice } from "../dom.js";

export async function deviceView(main, ctx) {
  let code = (ctx.params.get("user_code") || "").trim().toUpperCase();
  if (!code) {
    const input = h("input", { name: "user_code", placeholder: "XXXX-XXXX", required: true });
    const form = h("form", { id: "device-code" }, h("label", {}, "The code your terminal shows", input), h("button", { type: "submit" }, "Continue"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      ctx.go(`/app/device?user_code=${encodeURIComponent(input.value.trim().toUpperCase())}`);
    });
    main.replaceChildren(h("h1", {}, "Connect a machine"), h("section", { class: "card" }, form));
    return;
  }
  let pending;
  try {
    pending = await ctx.session.api("GET", `/v1/auth/device/pending?user_code=${encodeURIComponent(code)}`);
  } catch (e) {
    if (e.status !== 404) throw e;
    main.replaceChildren(
      h("h1", {}, "Connect a machine"),
      h("p", { class: "error", id: "device-missing" }, `No pending request has the code ${code}: it was mistyped, has expired (15 minutes) or was already decided. Run tablemere login again for a new one.`),
    );
    return;
  }
  const warehouses = pending.warehouses || [];
  const level = h(
    "select",
    { name: "level" },
    (pending.level === "write" ? ["write", "read"] : ["read"]).map((l) => h("option", { value: l }, l === "write" ? "read and write" : "read only")),
  );
  const picks = warehouses.map((w) => ({ w, box: h("input", { type: "checkbox", name: "warehouse", value: w.warehouse_id, checked: true }) }));
  const decided = h("div", { id: "device-result" });
  const form = h(
    "form",
    { class: "stack", id: "device-approve" },
    h("p", {}, h("strong", {}, pending.client_name || pending.hostname || "A machine"), ` (${pending.client || "cli"} on ${pending.hostname || "an unnamed host"}) asks to connect to ${pending.organization && pending.organization.name ? pending.organization.name : "your organisation"}.`),
    h("p", { class: "muted" }, `Code ${pending.user_code}. It asks for ${pending.requested_level === "write" ? "read and write" : "read only"}.`),
    picks.map(({ w, box }) => h("label", {}, h("span", {}, box, ` ${w.name} (you hold ${w.my_level}${w.capped ? "; capped to your level" : ""})`))),
    h("label", {}, "Access", level),
    h("div", {}, h("button", { type: "submit", name: "approve" }, "Approve"), " ", h("button", { type: "button", class: "quiet", name: "deny", onclick: () => decide(true) }, "Deny")),
  );
  const decide = (deny) =>
    busy(form, async () => {
      const body = { user_code: pending.user_code, deny };
      if (!deny) {
        body.level = level.value;
        body.warehouse_ids = picks.filter(({ box }) => box.checked).map(({ w }) => w.warehouse_id);
      }
      const answer = await ctx.session.api("POST", "/v1/auth/device/approve", body);
      form.hidden = true;
      decided.replaceChildren(
        deny
          ? h("p", { class: "ok" }, "Refused. The terminal is told so.")
          : h("p", { class: "ok" }, `Approved: ${answer.connection ? answer.connection.name : pending.client_name} is connected with ${answer.connection ? answer.connection.level : level.value} access. Go back to your terminal.`),
      );
      notice(deny ? "Connection refused." : "Connection approved.", "info");
    });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    decide(false);
  });
  main.replaceChildren(h("h1", {}, "Connect a machine"), h("section", { class: "card" }, form, decided));
}

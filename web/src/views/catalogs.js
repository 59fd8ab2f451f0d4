// The organisation's catalogs with the person's level on each; create one; delete one by
// typing its name.
import { busy, h, notice, table } from "../dom.js";

function deleter(ctx, w, refresh) {
  const typed = h("input", { name: "confirm", placeholder: w.name, "aria-label": `Type ${w.name} to delete it` });
  const button = h("button", { type: "submit", class: "danger", disabled: true }, "Delete for good");
  const form = h("form", { class: "delete", "data-catalog": w.name }, typed, button);
  typed.addEventListener("input", () => {
    button.disabled = typed.value !== w.name;
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (typed.value !== w.name) return;
    busy(form, async () => {
      const answer = await ctx.session.api("DELETE", `/v1/warehouses/${encodeURIComponent(w.warehouse_id)}`, { confirm: w.name });
      await refresh();
      notice(`Deleted ${w.name} (${answer.tables_dropped ?? 0} tables dropped).`, "info");
    });
  });
  form.hidden = true;
  const open = h("button", { type: "button", class: "quiet", onclick: () => { form.hidden = !form.hidden; if (!form.hidden) typed.focus(); } }, "Delete…");
  return h("div", {}, open, form);
}

export async function catalogsView(main, ctx) {
  const list = h("div", {});
  const refresh = async () => {
    const catalogs = await ctx.account.catalogs();
    if (!catalogs.length) {
      list.replaceChildren(h("p", { class: "muted" }, "No catalogs yet: create one below."));
      return;
    }
    list.replaceChildren(
      table(
        ["Catalog", "Your level", "Project", "Created", ""],
        catalogs.map((w) => [
          h("strong", { "data-name": w.name }, w.name),
          h("span", { "data-level": w.my_level }, w.my_via ? `${w.my_level} (via ${w.my_via})` : w.my_level),
          w.project || "",
          w.created_at ? new Date(w.created_at).toLocaleDateString() : "",
          ctx.account.isAdmin ? deleter(ctx, w, refresh) : "",
        ]),
      ),
    );
  };
  const name = h("input", { name: "name", required: true, placeholder: "sales" });
  const create = h("form", { id: "create-catalog" }, h("label", {}, "New catalog's name", name), h("button", { type: "submit" }, "Create"));
  create.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(create, async () => {
      const project = await ctx.account.projectForNewCatalog();
      const w = await ctx.session.api("POST", "/v1/warehouses", { project_id: project.project_id, name: name.value.trim() });
      name.value = "";
      await refresh();
      notice(`Created ${w.name}.`, "info");
    });
  });
  const org = ctx.account.org;
  main.replaceChildren(
    h("h1", {}, "Catalogs"),
    org ? h("p", { class: "muted" }, `${org.name} (${org.handle}) — you are ${org.role === "admin" ? "an admin" : "a member"}`) : null,
    h("section", { class: "card" }, list),
    h("h2", {}, "Create a catalog"),
    h("section", { class: "card" }, create),
  );
  await refresh();
}

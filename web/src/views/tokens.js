// Tokens for agents: a name and read or write per catalog; the key is shown once.
import { busy, h, notice, secretBox, table } from "../dom.js";

export async function tokensView(main, ctx) {
  const org = ctx.account.org;
  if (!org) {
    main.replaceChildren(h("h1", {}, "Tokens"), h("p", {}, "You belong to no organisation yet."));
    return;
  }
  const catalogs = (await ctx.account.catalogs()).filter((w) => w.my_level === "read" || w.my_level === "write");
  const list = h("div", {});
  const shown = h("div", { id: "new-key" });
  const refresh = async () => {
    const answer = await ctx.session.api("GET", `/v1/orgs/${encodeURIComponent(org.org_id)}/agents`);
    const agents = (answer.agents || []).filter((a) => !a.suspended);
    list.replaceChildren(
      agents.length
        ? table(
            ["Token", "Access", "Created by", "Last used", ""],
            agents.map((a) => [
              h("strong", { "data-agent": a.name }, a.name),
              (a.grants || []).map((g) => `${g.name}: ${g.level}`).join(", ") || "no catalog",
              a.created_by_display || "",
              a.last_used_at ? new Date(a.last_used_at).toLocaleString() : "never",
              h(
                "button",
                {
                  type: "button",
                  class: "quiet",
                  onclick: async (event) => {
                    if (!confirm(`Revoke ${a.name}? It stops at once.`)) return;
                    await busy(event.target.closest("td"), async () => {
                      await ctx.session.api("DELETE", `/v1/orgs/${encodeURIComponent(org.org_id)}/agents/${encodeURIComponent(a.agent_id)}`);
                      await refresh();
                      notice(`Revoked ${a.name}.`, "info");
                    });
                  },
                },
                "Revoke",
              ),
            ]),
          )
        : h("p", { class: "muted" }, "No tokens yet."),
    );
  };
  const name = h("input", { name: "name", required: true, placeholder: "laptop-agent" });
  const levels = catalogs.map((w) => {
    const options = ["none", "read"].concat(w.my_level === "write" ? ["write"] : []);
    return { w, select: h("select", { name: `level-${w.name}`, "data-catalog": w.name }, options.map((o) => h("option", { value: o }, o))) };
  });
  const create = h(
    "form",
    { id: "create-token" },
    h("label", {}, "Token name", name),
    levels.map(({ w, select }) => h("label", {}, w.name, select)),
    h("button", { type: "submit" }, "Create token"),
  );
  create.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(create, async () => {
      const grants = levels.filter(({ select }) => select.value !== "none").map(({ w, select }) => ({ warehouse_id: w.warehouse_id, level: select.value }));
      const agent = await ctx.session.api("POST", `/v1/orgs/${encodeURIComponent(org.org_id)}/agents`, { name: name.value.trim(), grants });
      name.value = "";
      shown.replaceChildren(secretBox(`The key of ${agent.name}:`, agent.api_key));
      await refresh();
    });
  });
  main.replaceChildren(
    h("h1", {}, "Tokens for agents"),
    h("p", { class: "muted" }, "A token is a machine identity of your organisation holding exactly the access you give it here, never more than your own."),
    h("section", { class: "card" }, create, shown),
    h("h2", {}, "Tokens"),
    h("section", { class: "card" }, list),
  );
  await refresh();
}

// Members and invitations: invite an address, change a role, remove a member.
import { busy, h, notice, secretBox, table } from "../dom.js";

export async function membersView(main, ctx) {
  const org = ctx.account.org;
  if (!org) {
    main.replaceChildren(h("h1", {}, "Members"), h("p", {}, "You belong to no organisation yet."));
    return;
  }
  const base = `/v1/orgs/${encodeURIComponent(org.org_id)}`;
  const admin = ctx.account.isAdmin;
  const list = h("div", {});
  const refresh = async () => {
    const answer = await ctx.session.api("GET", `${base}/members`);
    const people = (answer.members || []).filter((m) => m.kind !== "agent");
    list.replaceChildren(
      table(
        ["Member", "Role", ""],
        people.map((m) => {
          const label = m.display_name ? `${m.display_name} <${m.email}>` : m.email || m.principal_id;
          const role = h(
            "select",
            { name: "role", "data-member": m.email, disabled: !admin },
            ["member", "admin"].map((r) => h("option", { value: r, selected: r === m.role }, r)),
          );
          role.addEventListener("change", () =>
            busy(list, async () => {
              try {
                await ctx.session.api("PATCH", `${base}/members/${encodeURIComponent(m.principal_id)}`, { role: role.value });
                notice(`${label} is now ${role.value === "admin" ? "an admin" : "a member"}.`, "info");
              } finally {
                await refresh();
              }
            }),
          );
          const remove = admin
            ? h(
                "button",
                {
                  type: "button",
                  class: "quiet",
                  "data-remove": m.email,
                  onclick: () => {
                    if (!confirm(`Remove ${label} from ${org.name}?`)) return;
                    busy(list, async () => {
                      await ctx.session.api("DELETE", `${base}/members/${encodeURIComponent(m.principal_id)}`);
                      await refresh();
                      notice(`Removed ${label}.`, "info");
                    });
                  },
                },
                "Remove",
              )
            : "";
          return [label, role, remove];
        }),
      ),
    );
  };
  const email = h("input", { type: "email", name: "email", required: true });
  const role = h("select", { name: "invite-role" }, h("option", { value: "member" }, "member"), h("option", { value: "admin" }, "admin"));
  const shown = h("div", { id: "invitation" });
  const invite = h("form", { id: "invite" }, h("label", {}, "Email", email), h("label", {}, "Role", role), h("button", { type: "submit" }, "Invite"));
  invite.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(invite, async () => {
      const answer = await ctx.session.api("POST", `${base}/invitations`, { email: email.value.trim(), role: role.value });
      email.value = "";
      shown.replaceChildren(
        h("p", { class: "ok" }, `Invited ${answer.email} as ${answer.role}${answer.mailed ? "; the invitation was mailed" : ""}. If they sign up with that address they join at once.`),
        secretBox("The invitation token (for tablemere org accept --token …):", answer.token),
      );
    });
  });
  main.replaceChildren(
    h("h1", {}, `Members of ${org.name}`),
    h("section", { class: "card" }, list),
    admin ? h("h2", {}, "Invite someone") : null,
    admin ? h("section", { class: "card" }, invite, shown) : h("p", { class: "muted" }, "Only admins invite and change roles."),
  );
  await refresh();
}

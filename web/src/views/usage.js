// Usage against the limits: the organisation's storage, then each catalog.
import { formatBytes, h, table } from "../dom.js";

function meter(label, used, limit, unmetered) {
  const share = limit ? Math.min(100, (100 * (used || 0)) / limit) : 0;
  // Set through the CSSOM: the page's policy refuses inline style attributes.
  const fill = h("span", {});
  fill.style.width = `${share.toFixed(1)}%`;
  return h(
    "div",
    { class: "meter", "data-meter": label },
    h("strong", {}, label),
    " ",
    unmetered ? h("span", { class: "muted" }, `not measured yet (storage is metered hourly); the limit is ${formatBytes(limit)}`) : `${formatBytes(used)} of ${formatBytes(limit)}`,
    h("div", { class: "bar" }, fill),
  );
}

export async function usageView(main, ctx) {
  const usage = await ctx.session.api("GET", "/v1/usage");
  const org = ctx.account.org;
  const orgUsage = (usage.organizations || []).find((o) => org && o.org_id === org.org_id);
  const projects = (usage.projects || []).filter((p) => !org || p.org_id === org.org_id);
  const rows = [];
  for (const p of projects) {
    for (const w of p.warehouse_storage || []) {
      rows.push([w.name, w.unmetered ? "—" : formatBytes(w.bytes), w.unmetered ? "—" : String(w.objects ?? ""), w.public ? "public" : "private", w.measured_at ? new Date(w.measured_at).toLocaleString() : "not yet"]);
    }
  }
  const storage = orgUsage ? orgUsage.storage_bytes : projects[0] && projects[0].storage_bytes;
  const limits = usage.limits || {};
  const warehouseCounts = projects.map((p) => p.warehouses).filter(Boolean);
  main.replaceChildren(
    h("h1", {}, "Usage"),
    h(
      "section",
      { class: "card" },
      storage ? meter("Storage", storage.current, storage.limit, storage.unmetered) : h("p", { class: "muted" }, "No storage measured yet."),
      warehouseCounts.map((c) => h("p", {}, `Catalogs: ${c.current} of ${c.limit}`)),
      h("p", { class: "muted" }, `Commits per month: ${limits.commits_per_month ?? "—"}; tables: ${limits.tables ?? "—"}; snapshots kept ${limits.snapshot_retention_days ?? "—"} days.`),
    ),
    h("h2", {}, "Per catalog"),
    h("section", { class: "card" }, rows.length ? table(["Catalog", "Bytes", "Objects", "Tier", "Measured"], rows) : h("p", { class: "muted" }, "No catalogs.")),
    usage.note ? h("p", { class: "muted" }, usage.note) : null,
  );
}

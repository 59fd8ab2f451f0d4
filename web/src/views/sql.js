// SQL in the browser: pick a catalog and a table, run a read query in DuckDB-WASM over the
// table's current snapshot (or one you name). The data goes from the object store to this
// tab with your own vended credentials; the server never sees it or the query.
import { h, explain, table } from "../dom.js";
import { CatalogClient } from "../sql/catalog.js";
import { TableReader, checkReadOnly, engine, loadTable, quoteIdent, runQuery } from "../sql/engine.js";

const SHOWN_ROWS = 1000;

export async function sqlView(main, ctx) {
  const catalogs = (await ctx.account.catalogs()).filter((w) => w.my_level === "read" || w.my_level === "write");
  const clients = new Map();  // warehouse_id → CatalogClient
  // "warehouse/ns/table" → {loaded, reader}: the table's metadata and vended credentials,
  // reused until the store refuses them or a query no longer binds (the schema moved).
  const loadedTables = new Map();

  const catalogSelect = h("select", { name: "catalog" }, h("option", { value: "" }, "choose a catalog"), catalogs.map((w) => h("option", { value: w.warehouse_id }, `${w.name} (${w.my_level})`)));
  const tableSelect = h("select", { name: "table", disabled: true }, h("option", { value: "" }, "choose a table"));
  const snapshot = h("input", { name: "snapshot", placeholder: "current snapshot", inputmode: "numeric", size: 20 });
  const sql = h("textarea", { name: "sql", spellcheck: "false" }, "");
  const run = h("button", { type: "submit", name: "run", disabled: true }, "Run");
  const status = h("p", { class: "muted", id: "sql-status" });
  const output = h("div", { class: "results", id: "sql-results" });
  const form = h(
    "form",
    { id: "sql" },
    h("label", {}, "Catalog", catalogSelect),
    h("label", {}, "Table", tableSelect),
    h("label", {}, "Snapshot id", snapshot),
    h("label", { class: "wide" }, "Query", sql),
    run,
  );

  const fail = (message) => {
    output.replaceChildren(h("p", { class: "error", id: "sql-error" }, message));
    status.textContent = "";
  };

  const client = async (warehouseId) => {
    if (!clients.has(warehouseId)) {
      const connection = await ctx.session.api("GET", `/v1/connection?engine=duckdb&warehouse_id=${encodeURIComponent(warehouseId)}`);
      clients.set(warehouseId, new CatalogClient(connection));
    }
    return clients.get(warehouseId);
  };

  catalogSelect.addEventListener("change", async () => {
    tableSelect.replaceChildren(h("option", { value: "" }, "choose a table"));
    tableSelect.disabled = true;
    run.disabled = true;
    if (!catalogSelect.value) return;
    status.textContent = "Listing tables…";
    try {
      const tables = await (await client(catalogSelect.value)).tables();
      for (const t of tables) tableSelect.append(h("option", { value: JSON.stringify(t) }, `${t.namespace.join(".")}.${t.name}`));
      tableSelect.disabled = false;
      status.textContent = tables.length ? "" : "This catalog has no tables yet.";
    } catch (e) {
      fail(explain(e));
    }
  });
  tableSelect.addEventListener("change", () => {
    run.disabled = !tableSelect.value;
    if (tableSelect.value) {
      const t = JSON.parse(tableSelect.value);
      if (!sql.value.trim() || sql.dataset.auto === "1") {
        sql.value = `SELECT * FROM ${quoteIdent(t.name)} LIMIT 100`;
        sql.dataset.auto = "1";
      }
    }
  });
  sql.addEventListener("input", () => {
    sql.dataset.auto = "0";
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const checked = checkReadOnly(sql.value);
    if (!checked.ok) {
      fail(checked.message);
      return;
    }
    const snapshotId = snapshot.value.trim();
    if (snapshotId && !/^-?\d+$/.test(snapshotId)) {
      fail("A snapshot id is a whole number (see the table's snapshots), or leave it empty for the current one.");
      return;
    }
    const ident = JSON.parse(tableSelect.value);
    run.disabled = true;
    delete status.dataset.rows;
    output.replaceChildren();
    const started = performance.now();
    try {
      const catalog = await client(catalogSelect.value);
      const key = `${catalogSelect.value}/${ident.namespace.join("\u001f")}/${ident.name}`;
      const load = async () => {
        status.textContent = "Loading the table…";
        const entry = { loaded: await catalog.loadTable(ident) };
        entry.reader = new TableReader(entry.loaded, async () => {
          entry.loaded = await catalog.loadTable(ident);
          return entry.loaded;
        });
        loadedTables.set(key, entry);
        return entry;
      };
      const materialize = async (entry) => {
        status.textContent = "Planning the scan…";
        const tasks = await catalog.planScan(ident, snapshotId || null);
        status.textContent = `Reading ${tasks.length} file${tasks.length === 1 ? "" : "s"}…`;
        const { conn } = await engine();
        const metadata = entry.loaded.metadata;
        let schemaId = metadata["current-schema-id"];
        if (snapshotId) {
          const snap = (metadata.snapshots || []).find((s) => String(s["snapshot-id"]) === snapshotId);
          if (snap && snap["schema-id"] !== undefined) schemaId = snap["schema-id"];
        }
        const schema = (metadata.schemas || []).find((s) => s["schema-id"] === schemaId) || metadata.schemas[0];
        await loadTable(conn, { tasks, reader: entry.reader, schema, name: ident.name });
        return conn;
      };
      const cached = loadedTables.get(key);
      let conn = await materialize(cached || (await load()));
      status.textContent = "Running…";
      let answer;
      try {
        answer = await runQuery(conn, checked.text);
      } catch (e) {
        // A column the cached schema lacks: the table may have changed; once more, afresh.
        if (!cached || !/Binder Error/.test(String(e.message))) throw e;
        conn = await materialize(await load());
        answer = await runQuery(conn, checked.text);
      }
      const { columns, rows } = answer;
      const ms = Math.round(performance.now() - started);
      status.textContent = `${rows.length} row${rows.length === 1 ? "" : "s"} in ${ms} ms${rows.length > SHOWN_ROWS ? ` (the first ${SHOWN_ROWS} shown)` : ""}`;
      status.dataset.rows = String(rows.length);
      const numeric = columns.map((c) => /INT|DECIMAL|DOUBLE|FLOAT|REAL|NUMERIC/.test(c.type));
      output.replaceChildren(
        table(
          columns.map((c) => c.name),
          rows.slice(0, SHOWN_ROWS).map((r) => r.map((v, i) => (v === null ? h("td", { class: "null" }, "NULL") : h("td", { class: numeric[i] ? "num" : "" }, v)))),
        ),
      );
    } catch (e) {
      fail(explain(e));
    } finally {
      run.disabled = !tableSelect.value;
    }
  });

  main.replaceChildren(
    h("h1", {}, "SQL"),
    h("p", { class: "muted" }, "DuckDB runs in this tab over the table's files, read with your own short-lived credentials. This page only reads."),
    catalogs.length ? h("section", { class: "card" }, form, status, output) : h("p", {}, "You hold no catalog to read."),
  );
}

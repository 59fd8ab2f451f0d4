// DuckDB-WASM over a table's files: the page plans the scan through the catalog, fetches
// each data file from the object store itself with the table's vended credentials (SigV4
// signed here), decodes the Parquet in WebAssembly (parquet-wasm) and hands DuckDB the
// Arrow data, applying the scan's delete files. DuckDB-WASM loads no extension: Parquet,
// httpfs and Iceberg would be downloaded from DuckDB's site at run time, which a page of
// this deployment never contacts.
import * as duckdb from "@duckdb/duckdb-wasm";
import { AwsClient } from "aws4fetch";
import initParquet, { readParquet } from "parquet-wasm/esm/parquet_wasm.js";

let ready = null;

// One database per tab, started on first use.
export function engine() {
  if (!ready) {
    ready = (async () => {
      await initParquet({ module_or_path: __PARQUET_WASM__ });
      const worker = new Worker(__DUCKDB_WORKER__);
      const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
      await db.instantiate(__DUCKDB_WASM__);
      await db.open({ query: { castBigIntToDouble: false, castDecimalToDouble: false } });
      const conn = await db.connect();
      // Never reach for an extension over the network.
      await conn.query("SET autoinstall_known_extensions = false");
      await conn.query("SET autoload_known_extensions = false");
      return { db, conn };
    })();
    ready.catch(() => {
      ready = null;
    });
  }
  return ready;
}

export function quoteIdent(name) {
  return `"${String(name).replaceAll('"', '""')}"`;
}

function quoteString(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

function parseS3(uri) {
  const m = /^s3a?:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!m) throw new Error(`Not an s3:// location: ${uri}`);
  return { bucket: m[1], key: m[2] };
}

// The vended storage credentials of a loadTable answer (config, or storage-credentials
// whose prefix covers the table's location).
function storageOf(loaded) {
  const config = { ...(loaded.config || {}) };
  for (const c of loaded["storage-credentials"] || []) {
    if (loaded.metadata && String(loaded.metadata.location || "").startsWith(c.prefix)) Object.assign(config, c.config);
  }
  if (!config["s3.access-key-id"]) throw new Error("The catalog vended no storage credentials for this table");
  return {
    endpoint: (config["s3.endpoint"] || "").replace(/\/+$/, ""),
    client: new AwsClient({
      accessKeyId: config["s3.access-key-id"],
      secretAccessKey: config["s3.secret-access-key"],
      sessionToken: config["s3.session-token"],
      service: "s3",
      region: config["s3.region"] || config["client.region"] || "us-east-1",
    }),
  };
}

export class StorageExpired extends Error {}

// One table's scan, with the credentials it was vended; `renew` loads the table again
// for fresh ones when the store says they ran out.
export class TableReader {
  constructor(loaded, renew) {
    this.storage = storageOf(loaded);
    this.renew = renew;
  }

  async fetchFile(uri) {
    const { bucket, key } = parseS3(uri);
    const path = `/${encodeURIComponent(bucket)}/${key.split("/").map(encodeURIComponent).join("/")}`;
    for (let attempt = 0; ; attempt++) {
      let response;
      try {
        response = await this.storage.client.fetch(`${this.storage.endpoint}${path}`);
      } catch (e) {
        throw new Error(`The object store at ${this.storage.endpoint} could not be reached from this page (${e.message}); check its CORS`);
      }
      if (response.ok) return new Uint8Array(await response.arrayBuffer());
      const text = await response.text();
      const code = (/<Code>([^<]+)<\/Code>/.exec(text) || [])[1] || `HTTP ${response.status}`;
      if ((response.status === 403 || response.status === 400) && attempt === 0 && /Expired|InvalidAccessKeyId|InvalidToken|AccessDenied/.test(code)) {
        // The vended session ran out: new credentials from the catalog, once.
        this.storage = storageOf(await this.renew());
        continue;
      }
      throw new Error(`The object store refused ${key.split("/").pop()}: ${code}`);
    }
  }
}

async function insertParquet(conn, bytes, name) {
  const table = readParquet(bytes);
  const ipc = table.intoIPCStream();
  await conn.query(`DROP TABLE IF EXISTS ${quoteIdent(name)}`);
  await conn.insertArrowFromIPCStream(ipc, { name, create: true });
}

function fieldNames(schema) {
  const byId = new Map();
  for (const f of schema.fields || []) byId.set(f.id, f.name);
  return byId;
}

// Loads a snapshot of a table into DuckDB as `name`: every data file of the plan with
// its position and equality deletes applied. Answers the rows and files loaded.
export async function loadTable(conn, { tasks, reader, schema, name }) {
  const names = fieldNames(schema);
  const columns = (schema.fields || []).map((f) => f.name);
  const parts = [];
  const deleteTables = new Map();
  const temp = [];
  const deleteTable = async (d) => {
    if (!deleteTables.has(d["file-path"])) {
      if (String(d["file-format"]).toLowerCase() !== "parquet") {
        throw new Error(`This table has deletion vectors (${d["file-format"]}); the browser reads Parquet delete files only — query it with an engine`);
      }
      const t = `__tm_d${deleteTables.size}`;
      await insertParquet(conn, await reader.fetchFile(d["file-path"]), t);
      deleteTables.set(d["file-path"], t);
      temp.push(t);
    }
    return deleteTables.get(d["file-path"]);
  };
  for (let i = 0; i < tasks.length; i++) {
    const { task, deletes } = tasks[i];
    const file = task["data-file"];
    if (String(file["file-format"]).toLowerCase() !== "parquet") {
      throw new Error(`A data file is ${file["file-format"]}; the browser reads Parquet only`);
    }
    const t = `__tm_f${i}`;
    await insertParquet(conn, await reader.fetchFile(file["file-path"]), t);
    temp.push(t);
    const conditions = [];
    for (const ref of task["delete-file-references"] || []) {
      const d = deletes[ref];
      const dt = await deleteTable(d);
      if (d.content === "position-deletes") {
        conditions.push(`rowid NOT IN (SELECT pos FROM ${quoteIdent(dt)} WHERE file_path = ${quoteString(file["file-path"])})`);
      } else {
        const keys = (d["equality-ids"] || []).map((id) => names.get(id));
        const match = keys.map((k) => `d.${quoteIdent(k)} IS NOT DISTINCT FROM f.${quoteIdent(k)}`).join(" AND ");
        conditions.push(`NOT EXISTS (SELECT 1 FROM ${quoteIdent(dt)} d WHERE ${match})`);
      }
    }
    parts.push(`SELECT * FROM ${quoteIdent(t)} f${conditions.length ? ` WHERE ${conditions.join(" AND ")}` : ""}`);
  }
  await conn.query(`DROP TABLE IF EXISTS ${quoteIdent(name)}`);
  if (parts.length === 0) {
    // No data files: an empty table with no rows (the columns as text).
    const cols = columns.length ? columns.map((c) => `${quoteIdent(c)} VARCHAR`).join(", ") : `"empty" VARCHAR`;
    await conn.query(`CREATE TABLE ${quoteIdent(name)} (${cols})`);
  } else {
    // Files written before a column existed lack it: union by name, then the table's
    // current columns in order.
    const select = columns.map(quoteIdent).join(", ") || "*";
    await conn.query(`CREATE TABLE ${quoteIdent(name)} AS SELECT ${select} FROM (${parts.join(" UNION ALL BY NAME ")})`);
  }
  for (const t of temp) await conn.query(`DROP TABLE IF EXISTS ${quoteIdent(t)}`);
  return { files: tasks.length };
}

const READS = new Set(["select", "with", "from", "values", "table", "describe", "show", "summarize", "pivot", "unpivot"]);

// The page only reads: anything but one query is refused before DuckDB sees it. A
// courtesy, not a permission (the person's credential decides what the catalog allows).
export function checkReadOnly(sql) {
  const text = sql.replace(/--[^\n]*/g, " ").replace(/\/\*[\s\S]*?\*\//g, " ").trim().replace(/;\s*$/, "");
  if (!text) return { ok: false, message: "Type a query first." };
  const first = text.split(/[\s(]+/)[0].toLowerCase();
  if (!READS.has(first)) {
    return { ok: false, message: `This page only reads: "${first.toUpperCase()}" changes data or settings. Use an engine or the CLI with your token to write.` };
  }
  // A second statement after a semicolon (outside quotes) could write.
  const unquoted = text.replace(/'(?:[^']|'')*'/g, "''").replace(/"(?:[^"]|"")*"/g, '""');
  if (unquoted.includes(";")) return { ok: false, message: "This page only runs one statement at a time." };
  return { ok: true, text };
}

// Runs a read query and answers its columns and rows with every value as DuckDB's own
// text (so decimals, 64-bit integers and timestamps are exact) or null.
export async function runQuery(conn, text) {
  let types = [];
  try {
    types = (await conn.query(`DESCRIBE ${text}`)).toArray().map((r) => String(r.column_type));
  } catch {
    // DESCRIBE of SHOW or DESCRIBE itself: the columns stay untyped.
  }
  const result = await conn.query(`SELECT COLUMNS(*)::VARCHAR FROM (${text})`);
  const columns = result.schema.fields.map((f, i) => ({ name: f.name, type: types[i] || "" }));
  const rows = [];
  for (let r = 0; r < result.numRows; r++) {
    const row = new Array(columns.length);
    for (let c = 0; c < columns.length; c++) {
      const v = result.getChildAt(c).get(r);
      row[c] = v === null || v === undefined ? null : String(v);
    }
    rows.push(row);
  }
  return { columns, rows };
}

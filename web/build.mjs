// Builds the account page into one folder the server serves at /app/ (default
// ../build/web): the bundled page with a content hash in its name, DuckDB-WASM's module
// and worker, parquet-wasm's module, the static pages, and a .gz beside every large file
// (the server sends it to browsers that accept gzip). Nothing is fetched at run time from
// anywhere but this deployment.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(here, "..", "build", "web"));
const assets = path.join(out, "assets");
const modules = path.join(here, "node_modules");

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(assets, { recursive: true });

function hashed(file, name) {
  const bytes = fs.readFileSync(file);
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 12);
  const ext = path.extname(name);
  const target = `${path.basename(name, ext)}-${digest}${ext}`;
  fs.writeFileSync(path.join(assets, target), bytes);
  return target;
}

// The runtime pieces the page loads by URL: copied under content-hashed names, so they
// can be cached for a year.
const duckdbWasm = hashed(path.join(modules, "@duckdb/duckdb-wasm/dist/duckdb-eh.wasm"), "duckdb-eh.wasm");
const duckdbWorker = hashed(
  path.join(modules, "@duckdb/duckdb-wasm/dist/duckdb-browser-eh.worker.js"),
  "duckdb-browser-eh.worker.js",
);
const parquetWasm = hashed(path.join(modules, "parquet-wasm/esm/parquet_wasm_bg.wasm"), "parquet_wasm_bg.wasm");

const result = await build({
  entryPoints: [path.join(here, "src", "main.js")],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  sourcemap: true,
  outdir: assets,
  entryNames: "app-[hash]",
  metafile: true,
  logLevel: "warning",
  define: {
    __DUCKDB_WASM__: JSON.stringify(`/app/assets/${duckdbWasm}`),
    __DUCKDB_WORKER__: JSON.stringify(`/app/assets/${duckdbWorker}`),
    __PARQUET_WASM__: JSON.stringify(`/app/assets/${parquetWasm}`),
  },
});
const script = Object.keys(result.metafile.outputs)
  .map((p) => path.basename(p))
  .find((p) => p.startsWith("app-") && p.endsWith(".js"));
const style = hashed(path.join(here, "static", "style.css"), "style.css");

for (const page of ["index.html", "terms.html", "privacy.html"]) {
  const html = fs
    .readFileSync(path.join(here, "static", page), "utf8")
    .replaceAll("%SCRIPT%", `/app/assets/${script}`)
    .replaceAll("%STYLE%", `/app/assets/${style}`);
  fs.writeFileSync(path.join(out, page), html);
}

// Precompressed copies of everything big enough to matter.
for (const name of fs.readdirSync(assets)) {
  const file = path.join(assets, name);
  if (fs.statSync(file).size < 4096 || name.endsWith(".map")) continue;
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(fs.readFileSync(file), { level: 9 }));
}
console.log(`account page built into ${out}`);

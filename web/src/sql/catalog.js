// The Iceberg REST catalog as the SQL page uses it, with the person's own credential for
// one catalog (GET /v1/connection: the catalog credential at the person's level): a
// catalog token, the table with vended storage credentials, and server-side scan
// planning. An expired token is replaced and the call retried once.

export class CatalogError extends Error {
  constructor(status, body, what) {
    const err = (body && body.error) || {};
    super(`${what}: ${err.message || `HTTP ${status}`}${err.type ? ` (${err.type})` : ""}`);
    this.status = status;
    this.body = body;
  }
}

// Iceberg's ids (snapshots, sequence numbers) are 64-bit: an integer past 2^53 keeps its
// exact text instead of becoming a rounded Number.
export function parseJson(text) {
  return JSON.parse(text, (key, value, context) =>
    typeof value === "number" && !Number.isSafeInteger(value) && context && /^-?\d+$/.test(context.source) ? context.source : value,
  );
}

function encodeNamespace(ns) {
  return encodeURIComponent(ns.join("\u001f"));
}

export class CatalogClient {
  // `connection` is GET /v1/connection's answer for the catalog.
  constructor(connection) {
    this.uri = connection.catalog_uri.replace(/\/+$/, "");
    this.credential = connection.catalog_credential;
    this.warehouse = connection.warehouse;
    this.token = null;
    this.prefix = null;
  }

  async mintToken() {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: this.credential.client_id,
      client_secret: this.credential.client_secret,
      scope: "PRINCIPAL_ROLE:ALL",
    });
    let response;
    try {
      response = await fetch(`${this.uri}/v1/oauth/tokens`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form,
      });
    } catch (e) {
      throw new Error(`The catalog at ${this.uri} could not be reached from this page (${e.message}); check that its CORS allows this site's origin`);
    }
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new CatalogError(response.status, body, "The catalog refused the credential");
    this.token = body.access_token;
  }

  async request(method, path, body, extraHeaders = {}, retried = false) {
    if (!this.token) await this.mintToken();
    const init = { method, headers: { Authorization: `Bearer ${this.token}`, ...extraHeaders } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(`${this.uri}${path}`, init);
    } catch (e) {
      throw new Error(`The catalog at ${this.uri} could not be reached from this page (${e.message}); check that its CORS allows this site's origin`);
    }
    if (response.status === 401 && !retried) {
      // The catalog token ran out: a new one, once.
      this.token = null;
      return this.request(method, path, body, extraHeaders, true);
    }
    const text = await response.text();
    const json = text ? parseJson(text) : null;
    if (!response.ok) throw new CatalogError(response.status, json, `${method} ${path.split("?")[0]}`);
    return json;
  }

  async base() {
    if (this.prefix === null) {
      const config = await this.request("GET", `/v1/config?warehouse=${encodeURIComponent(this.warehouse)}`);
      const prefix = (config.overrides && config.overrides.prefix) || (config.defaults && config.defaults.prefix) || "";
      this.prefix = prefix ? `/v1/${encodeURIComponent(prefix)}` : "/v1";
    }
    return this.prefix;
  }

  async tables() {
    const base = await this.base();
    const out = [];
    const walk = async (parent) => {
      const query = parent ? `?parent=${encodeNamespace(parent)}` : "";
      const answer = await this.request("GET", `${base}/namespaces${query}`);
      for (const ns of answer.namespaces || []) {
        const listed = await this.request("GET", `${base}/namespaces/${encodeNamespace(ns)}/tables`);
        for (const t of listed.identifiers || []) out.push({ namespace: t.namespace, name: t.name });
        await walk(ns);
      }
    };
    await walk(null);
    return out;
  }

  tablePath(base, ident) {
    return `${base}/namespaces/${encodeNamespace(ident.namespace)}/tables/${encodeURIComponent(ident.name)}`;
  }

  // The table's metadata and its vended storage credentials.
  async loadTable(ident) {
    const base = await this.base();
    return this.request("GET", this.tablePath(base, ident), undefined, { "X-Iceberg-Access-Delegation": "vended-credentials" });
  }

  // Every file scan task of a snapshot (the current one when `snapshotId` is null).
  async planScan(ident, snapshotId) {
    const base = await this.base();
    const path = this.tablePath(base, ident);
    // The snapshot id goes as the exact digits typed (checked to be an integer).
    const request = snapshotId ? `{"case-sensitive":true,"snapshot-id":${snapshotId}}` : `{"case-sensitive":true}`;
    let answer = await this.request("POST", `${path}/plan`, request);
    for (let waited = 0; answer.status === "submitted"; waited++) {
      if (waited > 600) throw new Error("The catalog is still planning the scan after a minute; try again");
      await new Promise((r) => setTimeout(r, 100));
      answer = await this.request("GET", `${path}/plan/${encodeURIComponent(answer["plan-id"])}`);
    }
    if (answer.status !== "completed") {
      throw new Error(`The catalog could not plan the scan: ${(answer.error && answer.error.message) || answer.status}`);
    }
    const deleteFiles = [...(answer["delete-files"] || [])];
    const tasks = [...(answer["file-scan-tasks"] || [])].map((t) => ({ task: t, deletes: deleteFiles }));
    const pending = [...(answer["plan-tasks"] || [])];
    while (pending.length) {
      const more = await this.request("POST", `${path}/tasks`, { "plan-task": pending.shift() });
      const moreDeletes = more["delete-files"] || [];
      for (const t of more["file-scan-tasks"] || []) tasks.push({ task: t, deletes: moreDeletes });
      pending.push(...(more["plan-tasks"] || []));
    }
    return tasks;
  }
}

// What the views share about the person: their organisation (the first, or the one chosen)
// and its catalogs across its projects, with the person's level on each.

const ORG_KEY = "tablemere.org";

export class Account {
  constructor(session) {
    this.session = session;
    this.orgs = [];
    this.org = null;
  }

  async load() {
    const answer = await this.session.api("GET", "/v1/orgs");
    this.orgs = answer.organizations || [];
    const wanted = sessionStorage.getItem(ORG_KEY);
    this.org = this.orgs.find((o) => o.org_id === wanted) || this.orgs[0] || null;
    return this;
  }

  // The organisation the views show, kept for this tab.
  choose(orgId) {
    sessionStorage.setItem(ORG_KEY, orgId);
  }

  get isAdmin() {
    return Boolean(this.org && this.org.role === "admin");
  }

  async projects() {
    const answer = await this.session.api("GET", "/v1/projects");
    return (answer.projects || []).filter((p) => !this.org || !p.org_id || p.org_id === this.org.org_id);
  }

  // Every catalog of the organisation: [{warehouse_id, name, my_level, project_id, …}].
  async catalogs() {
    const out = [];
    for (const p of await this.projects()) {
      const answer = await this.session.api("GET", `/v1/warehouses?project=${encodeURIComponent(p.project_id)}`);
      for (const w of answer.warehouses || []) out.push({ ...w, project_id: p.project_id, project: p.name });
    }
    return out;
  }

  // The project a new catalog goes into: the organisation's first, made when it has none.
  async projectForNewCatalog() {
    const projects = await this.projects();
    if (projects.length) return projects[0];
    return this.session.api("POST", "/v1/projects", { name: "default", org_id: this.org && this.org.org_id });
  }
}

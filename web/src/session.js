// The person's login session: the access token lives only in memory; the refresh token
// stays in this tab (sessionStorage) so a reload keeps you logged in and closing the tab
// ends it. Every refresh rotates the refresh token, as POST /v1/auth/refresh does.

const REFRESH_KEY = "tablemere.refresh";

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code || `http_${status}`;
    this.body = body;
  }
}

async function parse(response) {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { error: { code: "bad_answer", message: text.slice(0, 200) } };
  }
}

// One call to the control API (same origin), without a session.
export async function call(method, path, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const json = await parse(response);
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
}

export class Session {
  constructor(onChange) {
    this.onChange = onChange;
    this.access = null;
    this.accessExpires = 0;
    this.principal = null;
    this.refreshing = null;
  }

  get refreshToken() {
    return sessionStorage.getItem(REFRESH_KEY);
  }

  get loggedIn() {
    return this.access !== null;
  }

  // Takes the session shape (login, password set or reset, refresh).
  adopt(grant) {
    this.access = grant.access_token;
    this.accessExpires = Date.now() + (grant.expires_in - 30) * 1000;
    sessionStorage.setItem(REFRESH_KEY, grant.refresh_token);
    if (grant.principal) this.principal = grant.principal;
    this.onChange(this);
  }

  clear() {
    this.access = null;
    this.principal = null;
    sessionStorage.removeItem(REFRESH_KEY);
    this.onChange(this);
  }

  async login(email, password) {
    this.adopt(await call("POST", "/v1/auth/login", { email, password }));
  }

  // Resumes the tab's session after a reload; false when there is none or it ended.
  async resume() {
    if (!this.refreshToken) return false;
    try {
      await this.refresh();
      return true;
    } catch {
      this.clear();
      return false;
    }
  }

  // One refresh at a time: concurrent callers share it, since presenting a rotated-out
  // refresh token again would revoke the whole session.
  refresh() {
    if (!this.refreshing) {
      const token = this.refreshToken;
      this.refreshing = (async () => {
        if (!token) throw new ApiError(401, { error: { code: "session_ended", message: "Log in again" } });
        const grant = await call("POST", "/v1/auth/refresh", { refresh_token: token });
        this.adopt(grant);
      })().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  async logout() {
    const token = this.refreshToken;
    try {
      if (token) await call("POST", "/v1/auth/logout", { refresh_token: token });
    } finally {
      this.clear();
    }
  }

  // A call with the person's access token, refreshed first when it is about to run out
  // and once more when the API answers 401.
  async api(method, path, body) {
    if (!this.access) throw new ApiError(401, { error: { code: "session_ended", message: "Log in again" } });
    if (Date.now() >= this.accessExpires) await this.refresh();
    try {
      return await call(method, path, body, { Authorization: `Bearer ${this.access}` });
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) throw e;
      try {
        await this.refresh();
      } catch (refreshError) {
        this.clear();
        throw refreshError;
      }
      return call(method, path, body, { Authorization: `Bearer ${this.access}` });
    }
  }
}

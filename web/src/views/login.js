// Log in with email and password, or ask for a reset link.
import { busy, h, notice } from "../dom.js";
import { call } from "../session.js";

export async function loginView(main, ctx) {
  let config = { password_login: true, external_issuers: [] };
  try {
    config = await call("GET", "/v1/auth/config");
  } catch {
    // The form still works; the API answers the login itself.
  }
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const form = h(
    "form",
    { class: "stack", id: "login" },
    h("label", {}, "Email", email),
    h("label", {}, "Password", password),
    h("button", { type: "submit" }, "Log in"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(form, async () => {
      await ctx.session.login(email.value.trim(), password.value);
      ctx.go(ctx.next && ctx.next.startsWith("/app/") ? ctx.next : "/app/");
    });
  });
  const resetEmail = h("input", { type: "email", name: "reset-email", required: true });
  const reset = h(
    "form",
    { class: "stack", id: "reset-start" },
    h("label", {}, "Email", resetEmail),
    h("button", { type: "submit", class: "quiet" }, "Mail me a reset link"),
  );
  reset.addEventListener("submit", (event) => {
    event.preventDefault();
    busy(reset, async () => {
      await call("POST", "/v1/auth/password/reset/start", { email: resetEmail.value.trim() });
      notice("If the address has an account, a reset link is on its way (valid 30 minutes).", "info");
    });
  });
  const issuers = (config.external_issuers || []).map((i) =>
    h("p", { class: "muted" }, `This deployment also trusts ${i.issuer}: log in with it through tablemere login --issuer.`),
  );
  main.replaceChildren(
    h("h1", {}, "Log in"),
    config.password_login === false
      ? h("p", {}, "This deployment logs people in through its identity provider only.")
      : h("section", { class: "card" }, form),
    ...issuers,
    h("h2", {}, "Forgot your password?"),
    h("section", { class: "card" }, reset),
  );
  email.focus();
}

// The pages the mails link to: /app/welcome?token=… (set the first password, finishing
// signup) and /app/reset?token=… (a new password; every other session ends).
import { busy, h, notice } from "../dom.js";
import { call } from "../session.js";

function passwordPage(main, ctx, { title, intro, endpoint, done }) {
  const token = ctx.params.get("token") || "";
  if (!token) {
    main.replaceChildren(h("h1", {}, title), h("p", { class: "error" }, "This link has no token; open the link from the mail."));
    return;
  }
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", minlength: 12, required: true });
  const again = h("input", { type: "password", name: "password-again", autocomplete: "new-password", required: true });
  const form = h(
    "form",
    { class: "stack", id: "password" },
    h("label", {}, "New password (12 characters or more)", password),
    h("label", {}, "The same again", again),
    h("button", { type: "submit" }, title),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (password.value !== again.value) {
      notice("The two passwords differ.");
      return;
    }
    busy(form, async () => {
      const grant = await call("POST", endpoint, { token, password: password.value });
      ctx.session.adopt(grant);
      // The link is spent: keep the token out of the address bar and history.
      const next = grant.return_to && grant.return_to.startsWith("/app/") && !grant.return_to.includes("//") ? grant.return_to : "/app/";
      ctx.go(next);
      notice(done, "info");
    });
  });
  main.replaceChildren(h("h1", {}, title), h("p", {}, intro), h("section", { class: "card" }, form));
}

export async function welcomeView(main, ctx) {
  passwordPage(main, ctx, {
    title: "Set your password",
    intro: "Choose the password you will log in with. It may not contain your address or your organisation's name.",
    endpoint: "/v1/auth/password/set",
    done: "Your password is set and you are logged in.",
  });
}

export async function resetView(main, ctx) {
  passwordPage(main, ctx, {
    title: "Reset your password",
    intro: "Choose a new password. Every other session of yours ends.",
    endpoint: "/v1/auth/password/reset",
    done: "Your password is changed; other sessions were logged out.",
  });
}

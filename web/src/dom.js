// A few DOM helpers: elements from a tag, attributes and children; tables; the notice
// line; the copy button beside a secret shown once.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function table(headers, rows) {
  return h(
    "table",
    {},
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => (c instanceof Node && c.tagName === "TD" ? c : h("td", {}, c)))))),
  );
}

export function notice(message, kind = "error") {
  const el = document.getElementById("notice");
  if (!message) {
    el.hidden = true;
    el.textContent = "";
    return;
  }
  el.className = kind === "error" ? "" : "info";
  el.textContent = message;
  el.hidden = false;
}

// An error as a person can act on it: the API's message and its remedy when it has one.
export function explain(e) {
  const err = (e && e.body && e.body.error) || {};
  const remedy = err.remedy ? ` ${err.remedy}` : "";
  if (e && e.code) return `${e.message}${remedy} (${e.code})`;
  return String((e && e.message) || e);
}

export function secretBox(label, value) {
  const code = h("code", { "data-secret": "" }, value);
  const status = h("span", { class: "muted" });
  const copy = h(
    "button",
    {
      type: "button",
      class: "quiet",
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(value);
          status.textContent = "Copied";
        } catch {
          const range = document.createRange();
          range.selectNodeContents(code);
          getSelection().removeAllRanges();
          getSelection().addRange(range);
          status.textContent = "Selected: press Ctrl+C";
        }
      },
    },
    "Copy",
  );
  return h(
    "div",
    {},
    h("p", {}, label, h("strong", {}, " It is shown once: copy it now.")),
    h("div", { class: "secret" }, code, copy, status),
  );
}

// Runs an async action from a form: disables its buttons meanwhile and shows a failure
// in the notice line, leaving the page usable.
export async function busy(form, action) {
  const buttons = [...form.querySelectorAll("button")];
  buttons.forEach((b) => (b.disabled = true));
  notice(null);
  try {
    return await action();
  } catch (e) {
    notice(explain(e));
    return undefined;
  } finally {
    buttons.forEach((b) => (b.disabled = false));
  }
}

export function formatBytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = Number(n);
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

// The host's rulings (server/web/govern.py): #/host signs a host in with a token from
// `maag host add NAME` (an HttpOnly cookie of its own; the page keeps no token) and lists every
// ruling; a signed-in host also sees a "void this game" form on a replay page and a "pardon"
// form on a bot's page. Everyone else sees neither form.
import { el } from "./util.js";

async function json(res) {
  try { return await res.json(); } catch { return { error: `${res.status} ${res.statusText}` }; }
}

export async function signedInHost() {
  const d = await json(await fetch("/api/host/session"));
  return d.host || null;
}

function rulingsList(rulings) {
  if (!rulings.length) return el("p", { class: "none" }, "no ruling yet");
  return el("ul", { id: "rulings" }, rulings.map((r) => el("li", {},
    r.kind === "void" ? el("span", {}, "game ", el("a", { href: `#/replay/${r.game_id}` }, `#${r.game_id}`), " voided")
      : el("span", {}, el("a", { href: `#/bot/${encodeURIComponent(r.bot)}` }, r.bot), ` pardoned (its games up to #${r.upto})`),
    ` by ${r.who} at ${r.at}: ${r.why}`)));
}

export function showHost(main) {
  const box = el("div", { id: "host" }, "loading…");
  main.append(el("h2", {}, "the host's rulings"), box);
  let alive = true;
  async function load() {
    const host = await signedInHost();
    const d = await json(await fetch("/api/rulings"));
    if (!alive) return;
    const account = host
      ? el("div", { class: "panel", id: "host-account" }, `Signed in as host ${host}. `,
        el("button", { id: "host-signout", onclick: async () => { await fetch("/api/host/session", { method: "DELETE" }); load(); } }, "sign out"))
      : signInForm(load);
    box.replaceChildren(account, el("h2", {}, "Rulings"), rulingsList(d.rulings || []));
  }
  load();
  return () => { alive = false; };
}

function signInForm(onDone) {
  const token = el("input", { type: "password", id: "host-token", autocomplete: "off", size: 40,
    placeholder: "a host's token (maag_host_...)" });
  const msg = el("span", { class: "msg", id: "host-signin-msg" });
  const form = el("form", { id: "host-signin", class: "panel" },
    el("label", {}, "Host? Sign in with a token from `maag host add NAME`: ", token), " ",
    el("button", { type: "submit" }, "sign in"), " ", msg);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "signing in…";
    const res = await fetch("/api/host/session", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: token.value.trim() }) });
    token.value = "";
    const d = await json(res);
    if (res.ok) onDone(); else msg.textContent = d.error;
  });
  return form;
}

// A ruling's form (void a game, pardon a bot) for a signed-in host, or nothing. `path` is the
// ruling's URL; `onDone(ruling)` runs when it is recorded.
function rulingForm(id, label, path, onDone) {
  const why = el("input", { type: "text", id: `${id}-why`, size: 50, placeholder: "why (kept with the ruling)" });
  const msg = el("span", { class: "msg", id: `${id}-msg` });
  const form = el("form", { id, class: "panel" }, el("label", {}, `Host: ${label} `, why), " ",
    el("button", { type: "submit" }, label), " ", msg);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (!why.value.trim()) { msg.textContent = "say why"; return; }
    msg.textContent = "recording…";
    const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ why: why.value.trim() }) });
    const d = await json(res);
    if (!res.ok) { msg.textContent = d.error; return; }
    why.value = "";
    msg.textContent = `recorded: by ${d.who} at ${d.at}`;
    if (onDone) onDone(d);
  });
  return form;
}

// A placeholder element that becomes the form once the page knows a host is signed in.
function forHost(make) {
  const slot = el("div", { class: "host-tools" });
  signedInHost().then((host) => { if (host) slot.replaceChildren(make()); });
  return slot;
}

export function voidForm(gid, onDone) {
  return forHost(() => rulingForm("void", "void this game", `/api/games/${encodeURIComponent(gid)}/void`, onDone));
}

export function pardonForm(name, onDone) {
  return forHost(() => rulingForm("pardon", `pardon ${name}'s strikes`, `/api/bots/${encodeURIComponent(name)}/pardon`, onDone));
}

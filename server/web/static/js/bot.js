// A bot's page (#/bot/NAME): its submitted versions with status, reason, build and
// validation reports; its score over its games as a plot; its recent games with verdicts
// and replays. Its owner signs in with the bot's token (POST /api/session: an HttpOnly
// session cookie, the token is never kept by the page nor put in a URL) and then also sees
// the build logs and the bot's log for each game, and an upload form for a new version.
import { el, resultText } from "./util.js";
import { pardonForm } from "./host.js";

const FINAL = ["active", "rejected", "retired"];

async function json(res) {
  const text = await res.text();
  try { return JSON.parse(text); } catch { return { error: text || res.statusText }; }
}

// The rating history: the bot's online Elo after each of its games (the ladder's online step,
// maag.stats.live, over every stored game: a trend, whose end need not be the standings' fit
// shown above it; one line per name it played under, NAME@VERSION for hosted versions), each game a dot
// coloured by its result; the running score in the title. An SVG like util.js's valueGraph.
export function historyGraph(history) {
  const W = 420, H = 160, NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "graph history");
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  const elos = history.map((p) => p.elo).concat([0]);
  const lo = Math.min(...elos) - 10, hi = Math.max(...elos) + 10;
  const n = Math.max(1, history.length - 1);
  const x = (i) => 8 + (W - 16) * i / n;
  const y = (e) => H - 8 - (H - 30) * (e - lo) / (hi - lo);
  add("line", { x1: 0, x2: W, y1: y(0), y2: y(0), stroke: "#bbb" });
  add("text", { x: W - 4, y: y(0) - 3, "font-size": 10, "text-anchor": "end", fill: "#888" }, "Elo 0");
  const colours = ["#2f6fd0", "#8a4fc0", "#1c8c8c", "#c07a1c"];
  const names = [...new Set(history.map((p) => p.as))];
  names.forEach((name, k) => {
    const pts = history.map((p, i) => [p, i]).filter(([p]) => p.as === name);
    add("polyline", { points: pts.map(([p, i]) => `${x(i).toFixed(1)},${y(p.elo).toFixed(1)}`).join(" "),
      fill: "none", stroke: colours[k % colours.length], "stroke-width": 2, "data-as": name });
    const [lp, li] = pts[pts.length - 1];
    add("text", { x: Math.min(x(li) + 3, W - 60), y: y(lp.elo) - 5, "font-size": 10, fill: colours[k % colours.length] },
      name);
  });
  history.forEach((p, i) => add("circle", { cx: x(i).toFixed(1), cy: y(p.elo).toFixed(1), r: 2.5,
    fill: p.score === 1 ? "#1c8c3a" : p.score === 0 ? "#c8462f" : "#888", "data-game": p.game_id }));
  const last = history.length ? history[history.length - 1].score_pct.toFixed(1) + "%" : "";
  add("text", { x: 6, y: 13, "font-size": 11 },
    `online Elo (the trend) after each of ${history.length} games; score ${last}`);
  return svg;
}

// The bot's Elo is the standings' (the same row as on the games page), so that one bot has
// one figure; the graph below is the trend of the online steps between the standings' fits.
function standingLine(row) {
  if (!row) return el("p", { id: "bot-standing", class: "none" }, "not in the standings yet");
  const ci = row.elo_ci95 ? ` (95%: ${row.elo_ci95.map((x) => x === null ? "?" : Math.round(x)).join(" to ")})` : "";
  const rank = row.rank !== undefined && row.rank !== null ? `, rank ${row.rank}` : "";
  const score = typeof row.score_pct === "number" ? `, score ${row.score_pct.toFixed(1)}%` : "";
  return el("p", { id: "bot-standing" }, `Elo ${Math.round(row.elo)}${ci}${rank}${score}`,
    row.games !== undefined ? ` over ${row.games} games` : "", " in the standings");
}

function reportBox(v) {
  const r = v.report;
  if (!r) return null;
  // A version rejected by `maag bot check` has a report of the check alone (no game, no time
  // control, no smoke games): say only what the report holds.
  const what = r.checks ?? (r.check ? "maag bot check's situations" : "validation");
  const where = [r.game, r.tc].filter((x) => x !== undefined && x !== null);
  const failed = ((r.check && r.check.situations) || []).filter((s) => s.ok === false).map((s) => s.name);
  return el("div", { class: "report" },
    el("div", {}, `${what}${where.length ? ` (${where.join(", ")})` : ""}: ${r.passed ? "passed" : "failed"}`,
      failed.length ? ` (situations failed: ${failed.join(", ")})` : ""),
    // The bot's own output where a stage rejected it: its owner's only (the server sends it
    // to a signed-in owner alone, escaped).
    r.bot_output && r.bot_output.text ? el("details", { class: "bot-output", open: true },
      el("summary", {}, `the bot's output in ${r.bot_output.stage}`), el("pre", { class: "log-text" }, r.bot_output.text)) : null,
    el("ul", {}, (r.games || []).map((g) => el("li", { class: g.passed ? "ok" : "bad" },
      el("a", { href: `#/replay/${g.game_id}` }, `game ${g.game_id}`), ` against ${g.opponent}: ${g.reason}`,
      g.verdict ? ` — ${g.verdict.kind}${g.verdict.detail ? ": " + g.verdict.detail : ""}` : "",
      g.passed ? "" : " (failed)"))));
}

function versionsTable(d) {
  if (d.versions.length === 0) return el("p", { class: "none" }, "no version uploaded yet");
  return el("table", { id: "versions" },
    el("tr", {}, ["version", "status", "uploaded", "size", "manifest", "reason and report"].map((h) => el("th", {}, h))),
    d.versions.map((v) => el("tr", { "data-version": v.version, "data-status": v.status, class: `st-${v.status}` },
      el("td", { class: "num" }, v.version),
      el("td", { class: "status" }, v.status),
      el("td", {}, v.created.replace("T", " ").slice(0, 19)),
      el("td", { class: "num" }, v.size),
      el("td", {}, el("code", {}, v.manifest.run), v.manifest.build ? el("div", {}, "build: ", el("code", {}, v.manifest.build)) : null),
      el("td", {}, v.reason ? el("div", { class: "reason" }, v.reason) : null, reportBox(v),
        d.owner && v.build_log ? el("details", { class: "build-log" }, el("summary", {}, "build log"),
          el("pre", { class: "log-text" }, v.build_log)) : null,
        d.owner && v.logs_url ? el("details", { class: "version-logs", "data-url": v.logs_url, ontoggle: loadLogs },
          el("summary", {}, "logs of the build and the smoke games")) : null))));
}

async function loadLogs(ev) {
  const box = ev.currentTarget;
  if (!box.open || box.dataset.loaded) return;
  box.dataset.loaded = "1";
  const d = await json(await fetch(box.dataset.url));
  if (d.error) { box.append(el("p", { class: "msg" }, d.error)); return; }
  if (d.files.length === 0) box.append(el("p", { class: "none" }, "no log files kept"));
  d.files.forEach((f) => box.append(el("div", { class: "log-file" }, el("b", {}, f.file),
    f.truncated ? ` (last ${f.text.length} of ${f.size} bytes)` : "", el("pre", { class: "log-text" }, f.text || "(empty)"))));
}

function gamesTable(d) {
  if (d.games.length === 0) return el("p", { class: "none" }, "no games yet");
  return el("table", { id: "bot-games" },
    el("tr", {}, ["game", "seats", "result", "actions", "", d.owner ? "the bot's log" : null].filter((h) => h !== null).map((h) => el("th", {}, h))),
    d.games.map((g) => el("tr", { "data-game": g.game_id },
      el("td", {}, `${g.game} #${g.game_id}`, g.validation ? el("span", { class: "tag" }, " smoke game") : ""),
      el("td", {}, `${g.seats[0]} – ${g.seats[1]}`),
      el("td", {}, g.status === "running" ? "running" :
        resultText(g.status === "aborted" ? { winner: null, reason: "aborted" } : g, g.seats)),
      el("td", { class: "num" }, g.plies ?? ""),
      el("td", {}, g.status === "running" ? el("a", { href: `#/game/${g.game_id}` }, "watch") :
        el("a", { href: `#/replay/${g.game_id}` }, "replay")),
      d.owner ? el("td", {}, Object.keys(g.log_tails || {}).length === 0 ? el("span", { class: "none" }, "—") : "",
        Object.entries(g.log_tails || {}).map(([seat, text]) =>
        el("details", { class: "log-tail", "data-seat": seat }, el("summary", {}, `seat ${seat}`),
          el("pre", { class: "log-text" }, text || "(empty)")))) : null)));
}

function signInForm(name, onDone) {
  const token = el("input", { type: "password", id: "token", name: "token", autocomplete: "off", size: 40,
    placeholder: "the bot's token (maag_...)" });
  const msg = el("span", { class: "msg", id: "signin-msg" });
  const form = el("form", { id: "signin", class: "panel" },
    el("label", {}, `Owner of ${name}? Sign in with the bot's token: `, token), " ",
    el("button", { type: "submit" }, "sign in"), " ", msg);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "signing in…";
    const res = await fetch("/api/session", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: token.value.trim() }) });
    token.value = "";
    const d = await json(res);
    if (!res.ok) { msg.textContent = d.error || "refused"; return; }
    msg.textContent = "";
    onDone(d.bot);
  });
  return form;
}

function uploadForm(d, onStored) {
  const file = el("input", { type: "file", id: "package", name: "package", accept: ".tar.gz,.tgz,.zip" });
  const msg = el("div", { class: "msg", id: "upload-msg" });
  const form = el("form", { id: "upload", class: "panel" },
    el("label", {}, "New version (a .tar.gz or .zip of the package's folder, at most ",
      `${(d.limits.max_bytes / 1e6).toFixed(d.limits.max_bytes < 1e6 ? 3 : 0)} MB): `, file), " ",
    el("button", { type: "submit" }, "upload"), msg);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = file.files[0];
    if (!f) { msg.textContent = "choose a package file first"; return; }
    if (f.size > d.limits.max_bytes) { msg.textContent = `${f.size} bytes: more than the limit of ${d.limits.max_bytes}`; return; }
    const body = new FormData();
    body.append("package", f, f.name);
    msg.className = "msg";
    msg.textContent = "uploading…";
    const res = await fetch(`/api/bots/${encodeURIComponent(d.bot)}/versions`, { method: "POST", body });
    const r = await json(res);
    if (!res.ok) { msg.textContent = `rejected: ${r.error}`; return; }
    msg.className = "msg ok";
    msg.textContent = `stored as version ${r.version.version}: ${r.version.status}` +
      (r.warnings || []).map((w) => ` (warning: ${w})`).join("");
    onStored(r);
  });
  return form;
}

export function showBot(main, rawName) {
  const name = decodeURIComponent(rawName || "");
  const head = el("h2", {}, `bot ${name}`);
  const account = el("div", { id: "account" });
  const body = el("div", { id: "bot-body" }, "loading…");
  main.append(head, account, pardonForm(name, () => load()), body);
  let alive = true;
  let timer = null;
  let shownOwner = null;
  let gen = 0;  // the latest load: an older one's answer and polling stop

  async function load() {
    const my = ++gen;
    const res = await fetch(`/api/bots/${encodeURIComponent(name)}`);
    const d = await json(res);
    if (!alive || my !== gen) return;
    if (!res.ok) { body.replaceChildren(el("p", { class: "msg" }, d.error)); return; }
    if (d.owner !== shownOwner) account.replaceChildren(d.owner ?
      el("div", { class: "panel", id: "owner" }, `Signed in as the owner of ${name}. `,
        el("button", { id: "signout", onclick: async () => { await fetch("/api/session", { method: "DELETE" }); load(); } }, "sign out"),
        uploadForm(d, () => { load(); })) :
      signInForm(name, () => load()));
    shownOwner = d.owner;  // the forms stay (with their messages) while the page reloads its data
    const active = d.versions.find((v) => v.status === "active");
    body.replaceChildren(
      el("p", { id: "bot-summary" }, active ? `active version: ${active.version}` : "no active version",
        d.processing ? ` — processing ${d.processing}` : ""),
      standingLine(d.standing),
      el("h2", {}, "Versions"), versionsTable(d),
      el("div", { class: "cols" },
        el("div", {}, el("h2", {}, "Rating over its games"),
          d.history.length ? historyGraph(d.history) : el("p", { class: "none" }, "no finished game against another bot yet")),
        el("div", {}, el("h2", {}, "Recent games"), gamesTable(d))));
    clearTimeout(timer);
    const waiting = d.versions.filter((v) => !FINAL.includes(v.status)).pop();  // the oldest not done
    if (waiting) follow(waiting, my);
  }

  // A version being built or validated: its own (small) URL is polled, the page reloaded when
  // its status changes.
  function follow(v, my) {
    timer = setTimeout(async () => {
      if (!alive || my !== gen) return;
      const now = await json(await fetch(v.url));
      if (!alive || my !== gen) return;
      if (now.status !== v.status) load(); else follow(v, my);
    }, 1000);
  }
  load();
  return () => { alive = false; clearTimeout(timer); };
}

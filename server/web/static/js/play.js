// A person's seat: the short form (opponent, seat, experience), then the game over
// /ws/play?token=T. The page shows the seat's own observation (its hand included), the legal
// actions as clickable squares and cards and as buttons, and sends one action at a time or
// a planned turn; the referee answers as it answers a bot.
import { el, fmtMs, leave, socket } from "./util.js";
import { renderer } from "./draw.js";

const EXPERIENCE = ["new", "played a few games", "played often", "expert"];
const SUGGESTED = ["greedy-action", "random", "first", "greedy-turn", "mcts", "oep"];

function form(main) {
  const msg = el("div", { class: "msg", id: "play-error" });
  const f = el("form", { class: "play panel", id: "play-form" },
    el("h2", {}, "Play against a bot"),
    el("label", {}, "Opponent (a bundled agent, or bot:NAME for a connected bot) ",
      el("input", { name: "opponent", value: "greedy-action", list: "agents", required: true }),
      el("datalist", { id: "agents" }, SUGGESTED.map((a) => el("option", { value: a })))),
    el("label", {}, "Your seat ", el("select", { name: "seat" },
      el("option", { value: "1" }, "1 (moves first)"), el("option", { value: "2" }, "2"))),
    el("fieldset", {}, el("legend", {}, "How much have you played this game? (optional, stored with the game)"),
      EXPERIENCE.map((e) => el("label", {}, el("input", { type: "radio", name: "experience", value: e }), " " + e))),
    el("button", { type: "submit", id: "start" }, "Start"), msg);
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const d = new FormData(f);
    const res = await fetch("/api/play", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ opponent: d.get("opponent"), seat: Number(d.get("seat")), experience: d.get("experience") || "" }),
    });
    const out = await res.json();
    if (!res.ok) { msg.textContent = out.error; return; }
    location.hash = `#/play/${out.token}`;
  });
  main.append(f);
  return () => {};
}

function seat(main, token) {
  const head = el("h2", { id: "play-head" }, "waiting for the game to start…");
  const board = el("div", { id: "board" });
  const clock = el("div", { id: "clock", class: "panel clock" });
  const legalBox = el("div", { class: "legal panel", id: "legal" });
  const planBox = el("div", { class: "panel", id: "plan" });
  const msg = el("div", { class: "msg", id: "play-msg" });
  const log = el("div", { class: "log panel", id: "play-log" });
  main.append(head, el("div", { class: "cols" }, board,
    el("div", {}, clock, msg, el("h2", {}, "your legal actions"), legalBox, planBox, el("h2", {}, "actions"), log)));
  const st = { me: null, game: null, obs: null, legal: [], myTurn: false, left: null, bank: 0, at: 0, plan: [], mode: "act", r: null };
  const pick = { seat: null, legal: [], selected: null, onAction: (a) => choose(a), redraw: () => redraw() };
  // Its messages are queued in order (below), not handled as util.js's socket() would.
  const ws = socket(`/ws/play?token=${encodeURIComponent(token)}`, null, "seated");
  const tick = setInterval(drawClock, 250);

  function send(m) { ws.send(JSON.stringify(m)); }
  function addLog(who, text) {
    log.append(el("div", { class: who }, text));
    log.scrollTop = log.scrollHeight;
  }
  function choose(a) {
    msg.textContent = "";
    if (st.mode === "turn") { st.plan.push(a); redraw(); return; }
    if (!st.myTurn) return;
    st.myTurn = false;
    addLog(`seat${st.me}`, `you: ${st.r.describe(a, null, st.obs)}`);
    send({ type: "act", action: a });
    redraw();
  }
  function drawClock() {
    if (!st.myTurn || st.left === null) { clock.textContent = st.myTurn ? "your turn" : "opponent's turn"; return; }
    clock.textContent = `your turn: ${fmtMs(st.left - (performance.now() - st.at))} left (bank ${fmtMs(st.bank)})`;
  }
  function redraw() {
    if (!st.r || !st.obs) return;
    pick.seat = st.me;
    pick.legal = st.myTurn && st.mode === "act" || st.mode === "turn" ? st.legal : [];
    board.replaceChildren(st.r.draw(st.obs, { layout: st.layout, seats: st.seats, me: st.me, pick }));
    legalBox.replaceChildren(
      el("div", {}, el("label", {}, el("input", { type: "checkbox", id: "plan-mode", checked: st.mode === "turn",
        onchange: (e) => { st.mode = e.target.checked ? "turn" : "act"; st.plan = []; redraw(); } }), " plan the whole turn, then send it")),
      ...(st.myTurn ? st.legal.map((a, i) => el("button", { class: a.type === "end_turn" ? "end-turn" : "action", "data-i": i,
        onclick: () => choose(a) }, st.r.describe(a, null, st.obs))) : [el("span", {}, "wait for your turn")]),
      st.myTurn ? el("button", { id: "resign", onclick: () => send({ type: "resign" }) }, "resign") : "");
    planBox.replaceChildren(st.mode !== "turn" ? "" : el("div", {}, `plan: ${st.plan.map((a) => st.r.describe(a)).join("; ") || "(empty)"} `,
      el("button", { id: "send-turn", disabled: !st.myTurn || st.plan.length === 0,
        onclick: () => { st.myTurn = false; addLog(`seat${st.me}`, `you: ${st.plan.map((a) => st.r.describe(a)).join("; ")}`);
          send({ type: "turn", actions: st.plan }); st.plan = []; redraw(); } }, "send turn"),
      el("button", { onclick: () => { st.plan = []; redraw(); } }, "clear")));
  }
  // One message at a time, in order (drawing waits for the game's renderer and layout).
  let queue = Promise.resolve();
  ws.addEventListener("message", (ev) => { queue = queue.then(() => handle(JSON.parse(ev.data))); });
  async function handle(m) {
    if (m.type === "seat") { st.me = m.seat; head.textContent = `you (seat ${m.seat}) vs ${m.opponent}: waiting for the game`; }
    else if (m.type === "game_start") {
      st.game = m.game; st.r = await renderer(m.game); st.seats = m.seat === 1 ? ["you", m.opponent] : [m.opponent, "you"];
      const lay = await fetch(`/api/layout/${encodeURIComponent(m.game)}?config=${encodeURIComponent(JSON.stringify(m.config))}`);
      st.layout = lay.ok ? await lay.json() : null;
      head.textContent = `game ${m.game_id}: you are seat ${m.seat}, against ${m.opponent}`;
      main.dataset.game = m.game_id;
    } else if (m.type === "your_turn") {
      if (!st.r) st.r = await renderer(st.game || "heroes");
      st.obs = m.observation; st.legal = m.legal || []; st.myTurn = true;
      st.left = m.time_left_ms >= 2147483647 ? null : m.time_left_ms; st.bank = m.bank_ms; st.at = performance.now();
      pick.selected = null;
      redraw();
    } else if (m.type === "result") {
      if (m.error) msg.textContent = `${m.error}: ${m.message ?? ""} (${m.accepted} accepted)`;
    } else if (m.type === "event") {
      if (m.kind === "action" && m.action) addLog(`seat${m.seat}`, `opponent: ${st.r ? st.r.describe(m.action) : JSON.stringify(m.action)}`);
      else addLog("", `${m.kind} (seat ${m.seat})`);
    } else if (m.type === "game_over") {
      st.myTurn = false;
      const res = m.winner === null || m.winner === undefined ? "no result" : m.winner === st.me ? "you won" : "you lost";
      head.replaceChildren(`game ${m.game_id} over: ${res} (${m.reason}) `, m.replay_id ? el("a", { id: "replay-link", href: `#/replay/${m.replay_id}` }, "replay") : "");
      main.dataset.over = res;
      redraw();
    } else if (m.type === "error") {
      msg.textContent = m.message;
    }
  }
  return () => { clearInterval(tick); leave(ws); };
}

export function showPlay(main, token) {
  return token ? seat(main, token) : form(main);
}

// A running game as a spectator sees it: pushed snapshots over /ws/game/ID (the public view:
// no hidden hand), the action log, the clocks and the evaluation graph.
import { el, socket, leave, fmtMs, valueGraph, logList, resultText } from "./util.js";
import { renderer } from "./draw.js";

export function showGame(main, gid) {
  const head = el("h2", {}, `game ${gid}`);
  const board = el("div", { id: "board" });
  const side = el("div", { id: "side" });
  main.append(head, el("div", { class: "cols" }, board, side));
  let snap = null;
  let got = 0;
  const tick = setInterval(() => { if (snap) drawClocks(); }, 250);
  const clocks = el("div", { id: "clocks", class: "panel" });

  function drawClocks() {
    const passed = performance.now() - got;
    clocks.replaceChildren(...snap.clocks.map((c, i) => el("div", { class: `clock seat${i + 1}` },
      `${i + 1}. ${c.name}: `, c.to_move ? `turn ${fmtMs(c.turn_left_ms === null ? null : c.turn_left_ms - passed)} ` : "",
      `bank ${fmtMs(c.bank_ms)}, thought ${fmtMs(c.think_ms)}`)));
  }

  const ws = socket(`/ws/game/${encodeURIComponent(gid)}`, async (m) => {
    if (m.type === "gone") {
      head.textContent = `game ${gid} is not running`;
      board.replaceChildren(el("a", { href: `#/replay/${gid}` }, "see its replay"));
      return;
    }
    if (m.type !== "game") return;
    // a push carries the log from entry log_from on; the entries before it came earlier
    m.log = (snap && m.log_from ? snap.log.slice(0, m.log_from) : []).concat(m.log);
    snap = m;
    got = performance.now();
    const r = await renderer(m.game);
    head.replaceChildren(`${m.game} #${m.game_id}: `, el("span", { class: "seat1" }, m.seats[0]), " vs ",
      el("span", { class: "seat2" }, m.seats[1]), ` — ${resultText(m.result, m.seats)}`,
      m.result ? el("span", {}, " ", el("a", { href: `#/replay/${m.game_id}` }, "replay")) : "");
    board.replaceChildren(r.draw(m.view, { layout: m.layout, seats: m.seats, me: null }));
    drawClocks();
    side.replaceChildren(clocks, valueGraph(m.values, m.value_scale, Math.max(m.log.length, 1)),
      el("h2", {}, "actions"), logList(m.log, r.describe));
    const log = side.querySelector(".log");
    if (log) log.scrollTop = log.scrollHeight;
  });
  return () => { clearInterval(tick); leave(ws); };
}

// Small helpers every view shares: elements, WebSockets, clocks, the evaluation graph.

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

// A view's live connection. The header says "live" while it is open and "disconnected" when
// the server closes it; a view that closes its own socket on leaving (`leave(ws)`) says
// nothing, so that the next view (a replay, a bot's page: nothing live) is not marked
// "disconnected" by the socket of the view before it.
export function socket(path, onMessage, opened = "live") {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}${path}`);
  if (onMessage) ws.addEventListener("message", (ev) => onMessage(JSON.parse(ev.data)));
  ws.addEventListener("close", () => { if (!ws.maagLeft) setStatus("disconnected"); });
  ws.addEventListener("open", () => { if (!ws.maagLeft) setStatus(opened); });
  return ws;
}

export function leave(ws) {
  ws.maagLeft = true;
  ws.close();
}

export function setStatus(text) {
  const s = document.getElementById("status");
  if (s) s.textContent = text;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return "∞";
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export function resultText(result, seats) {
  if (!result) return "running";
  if (result.winner === null || result.winner === undefined) return `aborted (${result.reason})`;
  if (result.winner === -1) return `draw (${result.reason})`;
  const won = `${seats[result.winner] ?? "seat " + (result.winner + 1)} won (${result.reason})`;
  // A forfeit says why (docs/hosting.md, verdicts): e.g. "… won (disconnect; B: crash, killed by SIGSEGV)".
  const v = result.verdict;
  if (!v) return won;
  const loser = seats[v.seat - 1] ?? "seat " + v.seat;
  return `${won.slice(0, -1)}; ${loser}: ${v.kind}${v.detail ? ", " + v.detail : ""})`;
}

// values: [[ply, value or null], ...] for seat 1; scale: what a won game is worth.
export function valueGraph(values, scale, plies, marker = null) {
  const W = 420, H = 120, NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "graph");
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const n = Math.max(1, plies);
  const x = (p) => 4 + (W - 8) * p / n;
  const y = (v) => H / 2 - (H / 2 - 6) * Math.max(-1, Math.min(1, v / (scale || 1)));
  const mid = document.createElementNS(NS, "line");
  Object.entries({ x1: 0, x2: W, y1: H / 2, y2: H / 2, stroke: "#bbb" }).forEach(([k, v]) => mid.setAttribute(k, v));
  svg.append(mid);
  const pts = values.filter((p) => p[1] !== null).map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`);
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("points", pts.join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "#2f6fd0");
  line.setAttribute("stroke-width", "2");
  svg.append(line);
  if (marker !== null) {
    const m = document.createElementNS(NS, "line");
    Object.entries({ x1: x(marker), x2: x(marker), y1: 0, y2: H, stroke: "#c8462f" }).forEach(([k, v]) => m.setAttribute(k, v));
    svg.append(m);
  }
  const t = document.createElementNS(NS, "text");
  t.setAttribute("x", 6); t.setAttribute("y", 14); t.setAttribute("font-size", "11");
  t.textContent = "evaluation for seat 1";
  svg.append(t);
  return svg;
}

export function logList(entries, describe, current = null) {
  const box = el("div", { class: "log panel" });
  entries.forEach((e, i) => {
    box.append(el("div", { class: i === current ? "cur" : "", "data-ply": i + 1 },
      el("span", { class: `seat${e.seat}` }, `${i + 1}. seat ${e.seat}: `), describe(e.action, e), e.auto ? " (time ran out)" : ""));
  });
  return box;
}

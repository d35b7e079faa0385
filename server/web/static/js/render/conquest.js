// Conquest (a TripleA-like map): the territories at the places the game's `layout` computes
// (map files carry no coordinates), lines for the borders, each territory in its owner's
// colour with the units in it by type (both sides' when a battle is pending), the capitals,
// the territories taken this turn; above it the round, the player to move and the phase, and
// each player's territories and army. The map has no money, production or sea zones.
//
// Playing: click a territory with a unit that may move, then one of the territories it may
// go to (dashed), then the kind of unit to send; one click moves one unit. The selection stays
// after the move, so sending more units the same way is one click each. Ending a phase is a
// button of the list of legal actions.
import { el } from "../util.js";

const NS = "http://www.w3.org/2000/svg";
const W = 96, H = 56; // a territory's box, around its centre
// Players are drawn in their seats' colours, as the header, the clocks and the log draw the
// seats: a map's player named "Red" may be seat 1, drawn in seat 1's blue, so that a colour
// on the page means one bot everywhere (the panels name the player and its seat).
const SEAT = ["#2f6fd0", "#c8462f"];

// unit id -> type, from the last position drawn: a unit keeps its id and type for the whole
// game, and describe() is given the action alone.
let typeOf = new Map();
// the last source and target of a move chosen on the map (see the comment at the top)
let keep = null;

function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, v);
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

export function describe(a) {
  if (a.type === "end_phase") return "end phase";
  if (a.type !== "move") return JSON.stringify(a);
  return `move ${typeOf.get(a.unit) ?? "unit"} ${a.unit}: ${a.path.join(" → ")}${a.join ? " (joining)" : ""}`;
}

export function squaresOf(a) {
  if (a.type !== "move") return { from: null, card: null, to: null };
  return { from: a.path[0], card: null, to: a.path[a.path.length - 1], via: a.path.length === 3 ? a.path[1] : null };
}

function colours(players) {
  return players.map((_, i) => SEAT[i] ?? "#777");
}

// Shortest distinct prefixes of the type names: i, a, t for infantry, artillery, tank.
function abbreviations(types) {
  const out = new Map();
  for (const t of types) {
    let n = 1;
    while (n < t.length && types.some((o) => o !== t && o.startsWith(t.slice(0, n)))) n++;
    out.set(t, t.slice(0, n));
  }
  return out;
}

// {player: {type: count}} of a list of unit ids
function countByPlayer(ids, unitOwner) {
  const out = {};
  for (const u of ids) {
    const [p, t] = unitOwner.get(u) ?? ["?", "unit"];
    out[p] = out[p] || {};
    out[p][t] = (out[p][t] || 0) + 1;
  }
  return out;
}

function countText(counts, types, abbr) {
  return types.filter((t) => counts[t]).map((t) => `${counts[t]}${abbr.get(t)}`).join(" ");
}

// A layout made from the position when the page has none (the map's places are unknown):
// the territories in a circle, no borders.
function fallbackLayout(view) {
  const names = Object.values(view.owner || {}).flat();
  const r = 40 + names.length * 22;
  return { width: 2 * r + 120, height: 2 * r + 80, players: Object.keys(view.owner || {}), capitals: [], edges: [],
    types: Object.keys(Object.values(view.roster || {})[0] || {}),
    territories: names.map((n, i) => ({ name: n, x: Math.round(r + 60 + r * Math.cos(2 * Math.PI * i / names.length)),
      y: Math.round(r + 40 + r * Math.sin(2 * Math.PI * i / names.length)) })) };
}

export function draw(view, ctx) {
  const layout = ctx.layout && ctx.layout.territories ? ctx.layout : fallbackLayout(view);
  const seats = ctx.seats || ["seat 1", "seat 2"];
  const players = layout.players;
  const col = colours(players);
  const colourOf = (p) => col[players.indexOf(p)] ?? "#777";
  const types = layout.types;
  const abbr = abbreviations(types);
  const unitOwner = new Map();
  for (const [p, kinds] of Object.entries(view.roster || {})) {
    for (const [t, ids] of Object.entries(kinds)) for (const u of ids) unitOwner.set(u, [p, t]);
  }
  typeOf = new Map([...unitOwner].map(([u, pt]) => [u, pt[1]]));
  const owner = new Map();
  for (const [p, ts] of Object.entries(view.owner || {})) for (const t of ts) owner.set(t, p);
  const units = view.units || {};
  const taken = new Set(view.conquered || []);
  const over = view.phase === "over";

  // Playing: the sources of legal moves, the targets of the selected source, the choices.
  const pick = ctx.pick && ctx.pick.legal ? ctx.pick : null;
  const moves = pick ? pick.legal.filter((a) => a.type === "move") : [];
  const sources = new Set(moves.map((a) => squaresOf(a).from));
  if (pick && !pick.selected && keep && sources.has(keep.from)) pick.selected = "t:" + keep.from;
  const from = moves.length && pick.selected ? pick.selected.slice(2) : null; // none while waiting
  const targets = new Set(moves.filter((a) => squaresOf(a).from === from).map((a) => squaresOf(a).to));
  const to = from && keep && keep.from === from && targets.has(keep.to) ? keep.to : null;
  const choose = (t) => {
    if (from && targets.has(t)) keep = { from, to: t };
    else if (sources.has(t) && t !== from) { keep = { from: t, to: null }; pick.selected = "t:" + t; }
    else { keep = null; pick.selected = null; }
    pick.redraw();
  };

  const at = new Map(layout.territories.map((t) => [t.name, t]));
  const map = svg("svg", { class: "cq-map", viewBox: `0 0 ${layout.width} ${layout.height}`,
    width: layout.width, height: layout.height, role: "img", "aria-label": "the map" });
  // the borders first, so the boxes cover their ends; a pending join's path drawn thick
  const joinPath = view.join ? view.join.path : [];
  const onJoin = (a, b) => joinPath.some((t, i) => i > 0 && [joinPath[i - 1], t].sort().join() === [a, b].sort().join());
  for (const [a, b] of layout.edges) {
    const p = at.get(a), q = at.get(b);
    map.append(svg("line", { class: `border${onJoin(a, b) ? " join" : ""}`, x1: p.x, y1: p.y, x2: q.x, y2: q.y,
      "data-a": a, "data-b": b }));
  }
  for (const t of layout.territories) {
    const own = owner.get(t.name);
    const ids = units[t.name] || [];
    const counts = countByPlayer(ids, unitOwner);
    const cap = layout.capitals.indexOf(t.name);
    const cls = ["terr"];
    if (cap >= 0) cls.push("capital");
    if (taken.has(t.name)) cls.push("taken");
    if (pick) {
      if (t.name === from) cls.push("selected");
      else if (targets.has(t.name)) cls.push(t.name === to ? "target chosen" : "target");
      else if (sources.has(t.name)) cls.push("pick");
    }
    const present = players.filter((p) => counts[p]);
    const battle = present.length > 1;
    const g = svg("g", { class: cls.join(" "), "data-name": t.name, "data-owner": own,
      transform: `translate(${t.x - W / 2},${t.y - H / 2})` },
    svg("title", {}, `${t.name}: ${own}'s${cap >= 0 ? `, ${players[cap]}'s capital` : ""}` +
      `${taken.has(t.name) ? ", taken this turn" : ""}; ` +
      (present.map((p) => `${p}: ${types.filter((k) => counts[p][k]).map((k) => `${counts[p][k]} ${k}`).join(", ")}`)
        .join("; ") || "no units")),
    svg("rect", { class: "under", width: W, height: H, rx: 7 }), // hides the borders' ends under the tint
    svg("rect", { class: "box", width: W, height: H, rx: 7, fill: colourOf(own), stroke: colourOf(own) }),
    svg("text", { class: "name", x: 8, y: 16 }, (cap >= 0 ? "★ " : "") + t.name),
    svg("text", { class: "badge", x: W - 6, y: 14, "text-anchor": "end" },
      [taken.has(t.name) ? "taken" : "", battle && !over ? "battle" : ""].filter(Boolean).join(", ")),
    present.map((p, i) => svg("text", { class: "units", x: 8, y: 34 + 15 * i, fill: colourOf(p), "data-player": p },
      countText(counts[p], types, abbr))));
    if (pick) g.addEventListener("click", () => choose(t.name));
    map.append(g);
  }

  // the player panels: each player's seat, territories and army
  const army = {};
  for (const ids of Object.values(units)) {
    for (const [p, c] of Object.entries(countByPlayer(ids, unitOwner))) {
      army[p] = army[p] || {};
      for (const [k, n] of Object.entries(c)) army[p][k] = (army[p][k] || 0) + n;
    }
  }
  const panels = el("div", { class: "players" }, players.map((p, i) => {
    const a = army[p] || {};
    const total = Object.values(a).reduce((x, y) => x + y, 0);
    const toMove = view.player === p && !over;
    const capital = layout.capitals[i];
    // no seatN class: its colour is the seat's, the player's may differ (Red is seat 1)
    return el("div", { class: `player${toMove ? " to-move" : ""}`, "data-seat": i + 1, "data-player": p },
      el("b", { style: `color:${col[i]}` }, `${p}`), ` — seat ${i + 1}: ${seats[i] ?? ""}`,
      el("div", { class: "cq-held" }, `${(view.owner?.[p] || []).length} territories` +
        (capital ? `; capital ${capital} ${owner.get(capital) === p ? "held" : "lost"}` : "")),
      el("div", { class: "cq-army" }, total ? `${total} units: ${types.filter((k) => a[k]).map((k) => `${a[k]} ${k}`).join(", ")}`
        : "no units"));
  }));

  let turn;
  if (over) {
    const r = view.result || {};
    turn = `round ${view.round}: over, ${r.winner ? `${r.winner} wins by ${r.by}` : `a draw (${String(r.by).replace("_", " ")})`}`;
  } else {
    turn = `round ${view.round} of ${view.rounds}; ${view.player} to move: ${view.phase} move` +
      (view.phase === "combat" ? " (battles when it ends)" : "") + `; victory: ${view.victory}`;
  }
  const legend = el("div", { class: "cq-legend" }, "units: ",
    types.map((k) => el("span", { "data-type": k, "data-abbr": abbr.get(k) }, `${abbr.get(k)} ${k}`)).flatMap((s) => [s, " · "]).slice(0, -1),
    "; ★ capital");

  // the choices for the chosen source and target: one button per kind of move
  let choices = null;
  if (pick && from && to) {
    const kinds = new Map();
    for (const a of moves) {
      const sq = squaresOf(a);
      if (sq.from !== from || sq.to !== to) continue;
      const k = `${typeOf.get(a.unit) ?? "unit"}${sq.via ? ` via ${sq.via}` : ""}${a.join ? " (joining)" : ""}`;
      if (!kinds.has(k)) kinds.set(k, []);
      kinds.get(k).push(a);
    }
    choices = el("div", { class: "cq-choices panel" }, `${from} → ${to}: `,
      [...kinds].map(([k, as]) => el("button", { class: "cq-choice", onclick: () => pick.onAction(as[0]) },
        `${k}: ${as.length} can go`)));
  } else if (pick && from) {
    choices = el("div", { class: "cq-choices panel" }, `from ${from}: click a dashed territory`);
  }
  return el("div", { class: "conquest" }, el("div", { class: "turninfo" }, turn), panels, legend, map, choices);
}

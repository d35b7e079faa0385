// Heroes (Hero Academy): the board with its special squares, the units with their health
// and items, the crystals, both players' action points and hands (a hidden hand shows as its
// size only: the spectator's view has no cards in it).
import { el } from "../util.js";

const SQUARE_NAMES = { deploy1: "deploy 1", deploy2: "deploy 2", defense: "defense", assault: "assault", power: "power" };
const SHORT = { dragonscale: "dragon", runemetal: "rune", shining_helmet: "helm", scroll: "scroll" };

export function describe(a) {
  const sq = (p) => `(${p[0]},${p[1]})`;
  if (a.type === "end_turn") return "end turn";
  if (a.type === "swap_card") return `swap ${a.card ?? "a card"}`;
  if (a.card) return `${a.type} ${a.card} on ${sq(a.to)}`;
  if (a.from) return `${a.type} ${sq(a.from)} → ${sq(a.to)}`;
  return JSON.stringify(a);
}

export function squaresOf(a) {
  return { from: a.from ?? null, card: a.card ?? null, to: a.to ?? null };
}

const key = (p) => `${p[0]},${p[1]}`;

function sourceKey(a) {
  if (a.from) return "sq:" + key(a.from);
  if (a.card && a.to) return "card:" + a.card;
  return null;
}

function unitBox(u) {
  const pct = Math.max(0, Math.min(100, Math.round(100 * u.hp / (u.max_hp || 1))));
  return el("div", { class: `unit o${u.owner} ${u.kind}${u.hp <= 0 ? " ko" : ""}`, "data-kind": u.kind, "data-owner": u.owner },
    el("div", { class: "kind" }, u.kind),
    el("div", { class: "hp" }, `${u.hp}/${u.max_hp}`),
    el("div", { class: "bar" }, el("i", { style: `width:${pct}%` })),
    u.items && u.items.length ? el("div", { class: "items" }, u.items.map((i) => SHORT[i] ?? i).join(" ")) : null);
}

function handOf(view, seat, pick) {
  const cards = view.hands ? view.hands[String(seat)] : null;
  const sizes = view.hand_sizes ? view.hand_sizes[String(seat)] : (cards ? cards.length : null);
  const box = el("div", { class: "hand", "data-seat": seat });
  if (!cards || (cards.length === 0 && sizes)) {
    box.append(el("span", { class: "hidden-hand" }, sizes === null ? "hand hidden" : `${sizes} card(s), hidden`));
    return box;
  }
  const sources = pick ? new Set(pick.legal.map(sourceKey).filter(Boolean)) : new Set();
  cards.forEach((c) => {
    const can = sources.has("card:" + c);
    const selected = pick && pick.selected === "card:" + c;
    box.append(el("span", {
      class: `card${can ? " pick" : ""}${selected ? " selected" : ""}`, "data-card": c,
      onclick: can ? () => { pick.selected = selected ? null : "card:" + c; pick.redraw(); } : null,
    }, c));
  });
  if (cards.length === 0) box.append(el("span", { class: "hidden-hand" }, "no cards"));
  return box;
}

export function draw(view, ctx) {
  const layout = ctx.layout || { width: 9, height: 5, squares: [] };
  const pick = ctx.pick || null;
  const special = new Map(layout.squares.map((s) => [key([s.x, s.y]), s.kind]));
  const units = new Map((view.board || []).map((u) => [key([u.x, u.y]), u]));
  const sources = pick ? new Set(pick.legal.map(sourceKey).filter(Boolean)) : new Set();
  const targets = new Map();
  if (pick && pick.selected) {
    for (const a of pick.legal) if (sourceKey(a) === pick.selected && a.to) targets.set(key(a.to), a);
  }
  const board = el("div", { class: "board", style: `grid-template-columns: repeat(${layout.width}, 78px)` });
  for (let y = 0; y < layout.height; y++) {
    for (let x = 0; x < layout.width; x++) {
      const k = key([x, y]);
      const kind = special.get(k) || "";
      const cls = ["sq", kind];
      const target = targets.get(k);
      if (target) cls.push("target");
      else if (sources.has("sq:" + k)) cls.push(pick.selected === "sq:" + k ? "selected" : "pick");
      const sq = el("div", { class: cls.join(" "), "data-x": x, "data-y": y },
        kind ? el("span", { class: "label" }, SQUARE_NAMES[kind] ?? kind) : null);
      const u = units.get(k);
      if (u) sq.append(unitBox(u));
      if (pick) {
        sq.addEventListener("click", () => {
          if (target) { pick.selected = null; pick.onAction(target); }
          else if (sources.has("sq:" + k)) { pick.selected = pick.selected === "sq:" + k ? null : "sq:" + k; pick.redraw(); }
        });
      }
      board.append(sq);
    }
  }
  const seats = ctx.seats || ["seat 1", "seat 2"];
  const players = el("div", { class: "players" });
  for (const s of [1, 2]) {
    const toMove = view.current === s && !view.terminal;
    const ap = toMove ? `${view.ap} AP left` : `${view.ap_per_turn} AP next turn`;
    const deck = view.deck_sizes ? view.deck_sizes[String(s)]
      : (view.decks && view.decks[String(s)] ? Object.values(view.decks[String(s)]).reduce((a, b) => a + b, 0) : "?");
    players.append(el("div", { class: `player seat${s}${toMove ? " to-move" : ""}`, "data-seat": s },
      el("b", {}, `${s}. ${seats[s - 1] ?? ""}`), el("div", { class: "ap", "data-ap": toMove ? view.ap : "" }, ap),
      el("div", {}, `deck: ${deck} card(s)`),
      handOf(view, s, pick && pick.seat === s ? pick : null)));
  }
  const crystals = (view.board || []).filter((u) => u.kind === "crystal");
  const turn = el("div", { class: "turninfo" },
    `turn ${view.turn} of ${view.turn_limit}; seat ${view.current} to move; crystals: `,
    crystals.map((c) => `seat ${c.owner} ${c.hp}`).join(", ") || "none");
  return el("div", { class: "heroes" }, turn, players, board);
}

// The card game: each seat's hero, weapon, mana, hand (its size only when hidden), deck
// and secrets, and the minions on its side of the board. Actions are played from the list
// of legal actions (no squares to click in this game).
import { el } from "../util.js";

const FLAGS = ["taunt", "charge", "ds", "stealth", "windfury", "frozen", "silenced"];

function target(t) {
  if (!t) return "";
  if (t.hero) return ` → hero ${t.player}`;
  return ` → ${Object.entries(t).map(([k, v]) => `${k} ${v}`).join(" ")}`;
}

export function describe(a) {
  if (a.type === "end_turn") return "end turn";
  return `${a.type}${a.card ? " " + a.card : ""}${target(a.target)}`;
}

export function squaresOf() {
  return { from: null, card: null, to: null };
}

function side(view, i, seats) {
  const p = view.players ? view.players[i] : null;
  const seat = i + 1;
  if (!p) return el("div", { class: "player" }, `seat ${seat}: hidden`);
  const h = p.hero || {};
  const hand = Array.isArray(p.hand)
    ? el("div", { class: "hand" }, p.hand.map((c) => el("span", { class: "card", "data-card": c }, c)))
    : el("div", { class: "hand" }, el("span", { class: "hidden-hand" }, `${p.hand_count ?? "?"} card(s), hidden`));
  const toMove = view.current === seat && !view.terminal;
  return el("div", { class: `player seat${seat}${toMove ? " to-move" : ""}`, "data-seat": seat },
    el("b", {}, `${seat}. ${seats[i] ?? ""}`),
    el("div", {}, `${h.class ?? "hero"}: ${h.hp}/${h.max_hp} hp${h.armor ? `, ${h.armor} armor` : ""}${h.atk ? `, ${h.atk} attack` : ""}`),
    el("div", {}, `mana ${p.mana}/${p.max_mana}; deck ${p.deck_count}; secrets ${p.secret_count}`),
    p.weapon ? el("div", {}, `weapon: ${JSON.stringify(p.weapon)}`) : null,
    hand,
    el("div", { class: "hand minions" }, (p.board || []).map((m) => el("span", { class: "card", "data-kind": m.card },
      `${m.card} ${m.atk}/${m.hp}`, FLAGS.filter((f) => m[f]).map((f) => " " + f).join("")))));
}

export function draw(view, ctx) {
  const seats = ctx.seats || ["seat 1", "seat 2"];
  return el("div", { class: "cards" },
    el("div", { class: "turninfo" }, `ply ${view.ply} of ${view.ply_limit}; seat ${view.current} to move`),
    el("div", { class: "players" }, side(view, 1, seats)),
    el("div", { class: "players" }, side(view, 0, seats)));
}

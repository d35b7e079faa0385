// The card game as people know it from Hearthstone: each side's hand (face-up where the view
// holds it, else as many card backs as its count, never more), hero with health, armor,
// attack, weapon and hero power, mana crystals, deck and secrets (face-down unless the view
// holds them), and the minions with attack, health (damage in red, buffs in green), keywords
// and enchantments. The seat at the bottom is the person's (else seat 1).
//
// Cards are drawn from the card table the server sends once (GET /api/catalog/cards: names,
// costs, types, stats, text, the heroes' powers), fetched when this module loads; a frame
// carries card ids only.
//
// Playing by clicking (ctx.pick): what can act is outlined (a card of the hand, a minion or
// the hero that can attack, the hero power); a click on it plays it when it needs no target,
// else selects it and outlines its targets (dashed); a click on a target plays. "End turn"
// is a button on the board. Every click is one legal action of the list, sent as a bot's.
import { el } from "../util.js";

let CAT = { cards: {}, heroes: {}, keywords: {} };
try {
  const res = await fetch("/api/catalog/cards");
  if (res.ok) CAT = await res.json();
} catch (e) {
  // without the table, cards are drawn by their ids
}

const KW = ["taunt", "charge", "ds", "stealth", "windfury", "frozen", "silenced"];
const card = (id) => CAT.cards[id] || { name: id, cost: "?", type: "", text: "" };
const nameOf = (id) => card(id).name;
const heroName = (cls) => (CAT.heroes[cls] ? CAT.heroes[cls].hero : cls);
const kwName = (k) => CAT.keywords[k] || k;

// ---- actions: their source (what is clicked first) and target ------------------------------

function sourceKey(a) {
  if (a.type === "play") return `hand:${a.hand_index}`;
  if (a.type === "attack") return a.attacker && a.attacker.hero ? "hero" : `minion:${a.attacker.pos}`;
  if (a.type === "power") return "power";
  return null;
}

function targetKey(t) {
  if (!t) return "none";
  return t.hero ? `hero:${t.player}` : `m:${t.player}:${t.pos}`;
}

function refText(t, view) {
  if (!t) return "";
  if (t.hero) return ` → seat ${t.player} hero`;
  const m = view && view.players ? (view.players[t.player - 1].board || [])[t.pos] : null;
  return ` → seat ${t.player} ${m ? nameOf(m.card) : `minion ${t.pos + 1}`}`;
}

// An action in words. A replay's log entry may carry the server's `text`, read in the position
// it was played in; `view`, the position the action is played in, names the minions.
export function describe(a, entry = null, view = null) {
  if (entry && entry.text) return entry.text;
  if (a.type === "end_turn") return "end turn";
  if (a.type === "play") {
    if (a.card === "secret") return "play a secret";
    return `play ${nameOf(a.card)} (${card(a.card).cost})${refText(a.target, view)}`;
  }
  if (a.type === "attack") {
    let who = "hero";
    if (!a.attacker.hero) {
      const me = view && view.players ? view.players[view.current - 1].board[a.attacker.pos] : null;
      who = me ? nameOf(me.card) : `minion ${a.attacker.pos + 1}`;
    }
    return `attack with ${who}${refText(a.target, view)}`;
  }
  if (a.type === "power") return `hero power${refText(a.target, view)}`;
  return JSON.stringify(a);
}

export function squaresOf() {
  return { from: null, card: null, to: null };
}

// ---- the pieces ------------------------------------------------------------------------------

function statSpan(cls, value, base, max) {
  const c = [cls];
  if (max !== undefined && value < max) c.push("damaged");
  else if (base !== undefined && (max ?? value) > base) c.push("buffed");
  return el("span", { class: c.join(" ") }, value);
}

function handCard(id, i, cls, onclick) {
  const c = card(id);
  return el("div", {
    class: `cd-card face type-${c.type || "unknown"}${cls}`, "data-card": id, "data-i": i,
    title: `${c.name} (${c.cost} mana ${c.type}): ${c.text || "no text"}`, onclick,
  },
  el("span", { class: "cost" }, c.cost),
  el("div", { class: "name" }, c.name),
  el("div", { class: "text" }, c.text),
  el("div", { class: "type" }, c.class && c.class !== "neutral" ? `${c.class} ${c.type}` : c.type),
  c.type === "minion" ? [el("span", { class: "atk" }, c.atk), el("span", { class: "hp" }, c.hp)] : null,
  c.type === "weapon" ? [el("span", { class: "atk" }, c.atk), el("span", { class: "dur" }, c.durability)] : null);
}

function enchText(e) {
  const sign = (x) => (x >= 0 ? `+${x}` : `${x}`);
  const kind = e.kind === "aura" ? " (aura)" : e.kind === "enrage" ? " (enrage)" : "";
  return `${sign(e.atk)}/${sign(e.hp)} ${nameOf(e.src)}${kind}`;
}

function minionBox(m, seat, pos, cls, onclick) {
  const c = card(m.card);
  const kws = KW.filter((k) => m[k]);
  if (m.sick) kws.push("sick");
  const classes = ["cd-minion", ...kws.map((k) => `kw-${k}`)];
  if (m.can_attack) classes.push("ready");
  return el("div", {
    class: classes.join(" ") + cls, "data-card": m.card, "data-seat": seat, "data-pos": pos,
    "data-atk": m.atk, "data-hp": m.hp, "data-max-hp": m.max_hp,
    title: `${c.name} ${m.atk}/${m.hp}${m.hp < m.max_hp ? ` (${m.max_hp} at full health)` : ""}: ${c.text || "no text"}`,
    onclick,
  },
  el("div", { class: "name" }, c.name),
  kws.length ? el("div", { class: "kw" }, kws.map(kwName).join(" · ")) : null,
  m.ench && m.ench.length ? el("div", { class: "ench" }, m.ench.map((e) => el("div", {}, enchText(e)))) : null,
  statSpan("atk", m.atk, c.atk),
  statSpan("hp", m.hp, c.hp, m.max_hp));
}

function heroBox(p, seat, name, cls, onclick) {
  const h = p.hero || {};
  const flags = ["frozen", "immune"].filter((k) => h[k]);
  return el("div", {
    class: `cd-hero cls-${h.class}${h.can_attack ? " ready" : ""}${flags.map((f) => " kw-" + f).join("")}${cls}`,
    "data-seat": seat, "data-hp": h.hp, "data-armor": h.armor, "data-atk": h.atk, onclick,
    title: `${heroName(h.class)} (${h.class}), seat ${seat}: ${h.hp} health${h.armor ? `, ${h.armor} armor` : ""}`,
  },
  el("div", { class: "name" }, heroName(h.class)),
  el("div", { class: "who" }, h.class),
  el("div", { class: "who" }, `${seat}. ${name ?? ""}`),
  flags.length ? el("div", { class: "kw" }, flags.join(" · ")) : null,
  h.atk ? el("span", { class: "atk" }, h.atk) : null,
  h.armor ? el("span", { class: "armor" }, h.armor) : null,
  el("span", { class: `hp${h.hp < h.max_hp ? " damaged" : ""}` }, h.hp));
}

function powerBox(p, cls, onclick) {
  const hp = CAT.heroes[p.hero && p.hero.class] || { power: "hero power", cost: 2, text: "" };
  return el("div", { class: `cd-power${p.power_used ? " used" : ""}${cls}`, "data-used": p.power_used ? "1" : "0",
    title: `${hp.power} (${hp.cost}): ${hp.text}${p.power_used ? " — used this turn" : ""}`, onclick },
  el("span", { class: "cost" }, hp.cost), el("div", { class: "name" }, hp.power), el("div", { class: "text" }, hp.text));
}

function manaBox(p) {
  const crystals = [];
  for (let i = 0; i < Math.max(p.max_mana, p.mana); i++) {
    crystals.push(el("i", { class: i < p.mana ? "full" : i >= p.max_mana - p.overload_locked ? "locked" : "empty" }));
  }
  return el("div", { class: "cd-mana", "data-mana": p.mana, "data-max": p.max_mana },
    el("b", {}, `${p.mana}/${p.max_mana}`), " mana ", el("span", { class: "crystals" }, crystals),
    p.overload_locked ? ` (${p.overload_locked} locked)` : "",
    p.overload_pending ? ` (${p.overload_pending} overloaded next turn)` : "");
}

function weaponBox(w) {
  if (!w) return el("div", { class: "cd-weapon none" }, "no weapon");
  return el("div", { class: "cd-weapon", "data-card": w.card, "data-atk": w.atk, "data-durability": w.durability,
    title: `${nameOf(w.card)}: ${card(w.card).text || "no text"}` },
  el("div", { class: "name" }, nameOf(w.card)), el("span", { class: "atk" }, w.atk), el("span", { class: "dur" }, w.durability));
}

function secretsBox(p) {
  const n = Math.max(0, Math.min(5, p.secret_count || 0));
  const known = Array.isArray(p.secrets) ? p.secrets : null;
  const items = [];
  for (let i = 0; i < n; i++) {
    items.push(known && known[i] ? el("span", { class: "cd-secret face", "data-card": known[i], title: card(known[i]).text }, nameOf(known[i]))
      : el("span", { class: "cd-secret back", title: "a secret, face down" }, "?"));
  }
  return el("div", { class: "cd-secrets", "data-count": n }, n ? "secrets: " : "", items);
}

// ---- the table -------------------------------------------------------------------------------

export function draw(view, ctx) {
  const seats = ctx.seats || ["seat 1", "seat 2"];
  const pick = ctx.pick || null;
  const bottom = ctx.me || 1;
  const top = 3 - bottom;
  const over = view.terminal;
  const legal = pick && pick.seat === bottom ? pick.legal : [];
  const bySource = new Map();
  for (const a of legal) {
    const k = sourceKey(a);
    if (k === null) continue;
    if (!bySource.has(k)) bySource.set(k, []);
    bySource.get(k).push(a);
  }
  if (pick && pick.selected && !bySource.has(pick.selected)) pick.selected = null;
  const selected = pick ? pick.selected : null;
  const targets = new Map();
  for (const a of selected ? bySource.get(selected) : []) targets.set(targetKey(a.target), a);

  // a source: outline it; a click plays it when it needs no target, else selects it
  function asSource(key) {
    if (!bySource.has(key)) return { cls: "", on: null };
    const options = bySource.get(key);
    return {
      cls: selected === key ? " selected" : " pick",
      on: () => {
        if (options.every((a) => !a.target)) { pick.selected = null; pick.onAction(options[0]); return; }
        pick.selected = selected === key ? null : key;
        pick.redraw();
      },
    };
  }
  // a target of the selected source: outline it; a click plays
  function asTarget(key, fallback) {
    const a = targets.get(key);
    if (!a) return fallback;
    return { cls: " target", on: () => { pick.selected = null; pick.onAction(a); } };
  }

  function side(seat) {
    const p = view.players[seat - 1];
    const mine = seat === bottom;
    const own = (key) => (mine ? asSource(key) : { cls: "", on: null });
    let hand;
    const count = Math.max(0, Math.min(10, p.hand_count || 0));
    if (Array.isArray(p.hand)) {
      hand = p.hand.map((id, i) => { const s = own(`hand:${i}`); return handCard(id, i, s.cls, s.on); });
    } else {
      hand = [];
      for (let i = 0; i < count; i++) hand.push(el("div", { class: "cd-card back", title: "a card, face down" }));
    }
    const handBox = el("div", { class: `cd-hand${Array.isArray(p.hand) ? "" : " hidden"}`, "data-seat": seat, "data-count": count },
      hand.length ? hand : el("span", { class: "none" }, "no cards in hand"));
    const board = el("div", { class: "cd-board", "data-seat": seat },
      (p.board || []).map((m, i) => {
        const s = asTarget(`m:${seat}:${i}`, own(`minion:${i}`));
        return minionBox(m, seat, i, s.cls, s.on);
      }),
      (p.board || []).length ? null : el("span", { class: "none" }, "no minions"));
    const hs = asTarget(`hero:${seat}`, own("hero"));
    const ps = own("power");
    const row = el("div", { class: "cd-hero-row" },
      heroBox(p, seat, seats[seat - 1], hs.cls, hs.on), weaponBox(p.weapon), powerBox(p, ps.cls, ps.on),
      el("div", { class: "cd-counts" }, manaBox(p),
        el("div", { class: "cd-deck", "data-count": p.deck_count }, `deck: ${p.deck_count} card(s)`,
          p.fatigue ? `, fatigue ${p.fatigue}` : ""),
        el("div", { class: "cd-hand-count" }, `hand: ${count} card(s)`),
        secretsBox(p)));
    const toMove = view.current === seat && !over;
    const parts = mine ? [board, row, handBox] : [handBox, row, board];
    return el("div", { class: `cd-side seat${seat}${toMove ? " to-move" : ""}${mine ? " bottom" : " top"}`, "data-seat": seat }, parts);
  }

  let info;
  if (over) info = view.winner ? `ply ${view.ply}: game over, seat ${view.winner} (${seats[view.winner - 1] ?? ""}) won` : `ply ${view.ply}: game over, a tie`;
  else info = `ply ${view.ply} of ${view.ply_limit}; seat ${view.current} (${seats[view.current - 1] ?? ""}) to move`;
  const end = legal.find((a) => a.type === "end_turn");
  const bare = targets.get("none");
  const middle = el("div", { class: "cd-middle" }, el("span", { class: "turninfo" }, info),
    selected ? el("span", { class: "cd-hint" }, "click a dashed target") : null,
    bare ? el("button", { class: "cd-no-target", onclick: () => { pick.selected = null; pick.onAction(bare); } }, "play without a target") : null,
    end ? el("button", { class: "cd-end-turn", id: "cd-end-turn", onclick: () => { pick.selected = null; pick.onAction(end); } }, "End turn") : null);
  return el("div", { class: "cards" }, side(top), middle, side(bottom));
}

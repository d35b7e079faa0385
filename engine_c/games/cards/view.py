"""The card game in a terminal: a position and each action in words, for `maag replay ID
--show` (what a person expects to read of a game: heroes, boards, the viewer's own hand);
and `catalog`, the card table the web view draws cards with (render/cards.js)."""

from __future__ import annotations

from functools import cache
from typing import Any

from .pool import POOL, TOKENS

NAMES = {c.id: c.name for c in POOL + TOKENS}
COST = {c.id: c.cost for c in POOL + TOKENS}
FLAGS = (("taunt", "taunt"), ("ds", "shield"), ("stealth", "stealth"), ("windfury", "windfury"),
         ("frozen", "frozen"), ("silenced", "silenced"), ("sick", "sick"))


def _minion(m: dict[str, Any]) -> str:
    marks = [word for key, word in FLAGS if m.get(key)]
    return f"[{NAMES.get(m['card'], m['card'])} {m['atk']}/{m['hp']}{' ' + ','.join(marks) if marks else ''}]"


def _side(p: dict[str, Any], seat: int, show_hand: bool) -> list[str]:
    h = p["hero"]
    w = p["weapon"]
    weapon = f"  weapon {NAMES.get(w['card'], w['card'])} {w['atk']}/{w['durability']}" if w else ""
    flags = "".join(f"  {k}" for k in ("frozen", "immune") if h.get(k))
    mana = f"mana {p['mana']}/{p['max_mana']}"
    if p["overload_locked"]:
        mana += f" (locked {p['overload_locked']})"
    armor = f"+{h['armor']}" if h["armor"] else ""
    lines = [f"seat {seat} {h['class']:<7} hp {h['hp']:>2}{armor}  {mana}  "
             f"hand {p['hand_count']}  deck {p['deck_count']}  secrets {p['secret_count']}{weapon}{flags}"]
    lines.append("  board: " + (" ".join(_minion(m) for m in p["board"]) or "-"))
    if show_hand and "hand" in p:
        hand = ", ".join(f"{NAMES.get(c, c)} ({COST.get(c, '?')})" for c in p["hand"])
        lines.append("  hand:  " + (hand or "-"))
        if p.get("secrets"):
            lines.append("  secrets: " + ", ".join(NAMES.get(c, c) for c in p["secrets"]))
    return lines


def render(state: dict[str, Any]) -> str:
    """A position in a few lines: the player to act last, nearest the reader; a hand is
    shown where the JSON holds it (a full state: both; an observation: the viewer's)."""
    head = f"ply {state['ply']}, seat {state['current']} to act"
    if state["terminal"]:
        result = f"seat {state['winner']} won" if state["winner"] else "a tie"
        head = f"ply {state['ply']}, game over: {result}"
    lines = [head]
    for seat in (3 - state["current"], state["current"]):
        lines += _side(state["players"][seat - 1], seat, show_hand=True)
    return "\n".join(lines)


def _target(state: dict[str, Any], ref: dict[str, Any] | None) -> str:
    if ref is None:
        return ""
    p = state["players"][ref["player"] - 1]
    if ref.get("hero"):
        return f" -> seat {ref['player']} hero"
    board = p["board"]
    pos = ref.get("pos", -1)
    name = NAMES.get(board[pos]["card"], "?") if 0 <= pos < len(board) else f"minion {pos}"
    return f" -> seat {ref['player']} {name}"


def describe(state: dict[str, Any], action: dict[str, Any]) -> str:
    """An action in words, read against the state it was played in."""
    t = action.get("type")
    if t == "play":
        card = action.get("card", "?")
        name = "a secret" if card == "secret" else f"{NAMES.get(card, card)} ({COST.get(card, '?')})"
        return f"play {name}{_target(state, action.get('target'))}"
    if t == "attack":
        att = action.get("attacker", {})
        me = state["players"][state["current"] - 1]
        pos = att.get("pos", -1)
        who = "hero" if att.get("hero") else (NAMES.get(me["board"][pos]["card"], "?")
                                              if 0 <= pos < len(me["board"]) else f"minion {pos}")
        return f"attack with {who}{_target(state, action.get('target'))}"
    if t == "power":
        return "hero power" + _target(state, action.get("target"))
    return "end turn" if t == "end_turn" else str(action)


# ---- the card table for drawing (the web view) ---------------------------------------------

TYPES = {"Mi": "minion", "Sp": "spell", "Se": "secret", "We": "weapon"}
CLASSES = {"N": "neutral", "M": "mage", "P": "paladin", "R": "rogue", "S": "shaman", "T": "neutral"}
HERO_POWERS = {  # spec/cards.md §2
    "mage": {"hero": "Jaina", "power": "Fireblast", "cost": 2, "text": "Deal 1 damage."},
    "paladin": {"hero": "Uther", "power": "Reinforce", "cost": 2,
                "text": "Summon a 1/1 Silver Hand Recruit."},
}
KEYWORDS = {"taunt": "Taunt", "charge": "Charge", "ds": "Divine Shield", "stealth": "Stealth",
            "windfury": "Windfury", "frozen": "Frozen", "silenced": "Silenced", "sick": "asleep"}
_TOKEN_TEXT = {"T_COIN": "Gain 1 Mana Crystal this turn only."}


@cache
def catalog() -> dict[str, Any]:
    """What a drawing needs to show cards as cards, the same for every game: per card id its
    name, cost, type, class, attack and health (a weapon's durability) and text (a token's
    text is its keywords; `from` names what makes it), the heroes' names and powers, and the
    keywords' names. Constant: the web view fetches it once (`GET /api/catalog/cards`)."""
    cards: dict[str, Any] = {}
    for c in POOL + TOKENS:
        token = c.cls == "T"
        if token:
            text = _TOKEN_TEXT.get(c.id, ", ".join(w.title() for w in c.enc.split(";") if w in ("TAUNT",)))
        else:
            text = "" if c.text == "—" else c.text
        card: dict[str, Any] = {"name": c.name, "cost": c.cost, "type": TYPES[c.type],
                                "class": CLASSES[c.cls], "text": text}
        if c.type in ("Mi", "We"):
            card["atk"] = c.atk
            card["durability" if c.type == "We" else "hp"] = c.hp
        if token:
            card["token"] = True
            if c.id not in _TOKEN_TEXT:  # the card (or Reinforce, the hero power) that makes it
                card["from"] = NAMES.get(c.text, c.text)
        cards[c.id] = card
    return {"cards": cards, "heroes": HERO_POWERS, "keywords": KEYWORDS}

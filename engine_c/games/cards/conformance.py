"""Replaying the card game's reference traces (../shared/conformance/cards-README.md): for one
record, load the recorded state, compare the engine's legal-action count with `n_legal`,
apply the recorded action and compare the result with the recorded `next` as the README
says. The traces record decks as multisets, so the cards the step draws (read off `next`)
are put on top of the loaded deck first; a step whose random picks (Arcane Missiles,
Avenging Wrath, Mad Bomber, Knife Juggler) the engine makes differently is tried again with
other seeds: the recorded outcome must be one the engine can produce."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..._lowlevel import EngineError
from ...game import Game, State

PAIRS = [("M", "P"), ("P", "M"), ("M", "X"), ("X", "P"), ("P", "P"), ("M", "M")]  # by game index % 6
RETRIES = 4000  # seeds tried on a random step before the recorded outcome counts as unreachable
PER_TURN = {"mana", "cards_played_this_turn", "power_used"}  # not compared for the waiting player
HERO_PER_TURN = {"atk", "attacks_used", "can_attack"}
MINION_PER_TURN = {"sick", "attacks_used", "can_attack"}

_GAME: list[Game] = []


def _game() -> Game:
    if not _GAME:
        _GAME.append(Game("cards", {}))
    return _GAME[0]


def _ref(ref: dict[str, Any] | None) -> dict[str, Any] | None:
    """A trace reference (0-based seat) in the engine's action form (seats 1 and 2)."""
    if ref is None:
        return None
    out = {"player": ref["player"] + 1}
    out.update({"hero": True} if ref.get("hero") else {"pos": ref["pos"]})
    return out


def trace_action(a: dict[str, Any]) -> dict[str, Any]:
    t = a["type"].lower()
    if t == "play":
        return {"type": "play", "hand_index": a["hand_index"], "card": a["card"],
                "target": _ref(a.get("target"))}
    if t == "attack":
        att = a["attacker"]
        return {"type": "attack", "attacker": {"hero": True} if att.get("hero") else {"pos": att["pos"]},
                "target": _ref(a["target"])}
    if t == "power":
        return {"type": "power", "target": _ref(a.get("target"))}
    return {"type": "end_turn"}


def _drawn_first(st: dict[str, Any], nxt: dict[str, Any], action: dict[str, Any], seat: int) -> list[str]:
    """The cards `seat` draws in this step, in order: those that reach the hand, then those
    burned (a hand only grows within one action, so burns come last)."""
    hand = list(st["players"][seat]["hand"])
    if action["type"] == "PLAY" and st["active"] == seat and action["hand_index"] < len(hand):
        hand.pop(action["hand_index"])
    after = nxt["players"][seat]["hand"]
    drawn = after[len(hand):] if after[:len(hand)] == hand else []
    gone = Counter(st["players"][seat]["deck"]) - Counter(nxt["players"][seat]["deck"])
    burned = list((gone - Counter(drawn)).elements())
    return drawn + burned


def engine_state(st: dict[str, Any], game: int, drawn: list[list[str]]) -> dict[str, Any]:
    """A trace state in the engine's JSON form; each player's deck holds `drawn[seat]` on
    top, then the rest of its multiset in card order. Minion eids are renumbered from 3 in
    the order of the reference's eids, which is the order of simultaneous deaths and triggers
    (their values are not play order and are not compared)."""
    order = sorted((m["eid"], s, i) for s, p in enumerate(st["players"]) for i, m in enumerate(p["board"]))
    new_eid = {(s, i): 3 + k for k, (_, s, i) in enumerate(order)}
    players = []
    for s, p in enumerate(st["players"]):
        rest = Counter(p["deck"])
        rest.subtract(Counter(drawn[s]))
        deck = list(drawn[s]) + sorted(rest.elements(), key=lambda c: _number(c))
        board = []
        for i, m in enumerate(p["board"]):
            mm = {k: v for k, v in m.items() if k != "can_attack"}
            mm["eid"] = new_eid[(s, i)]
            board.append(mm)
        w = p["weapon"]
        players.append({
            "hero": {"class": p["hero"]["card"].lower(), **{k: p["hero"][k] for k in
                     ("hp", "armor", "frozen", "immune", "attacks_used")}},
            "weapon": None if w is None else {k: w[k] for k in ("card", "atk", "durability")},
            **{k: p[k] for k in ("mana", "max_mana", "overload_locked", "overload_pending", "power_used",
                                 "cards_played_this_turn", "fatigue", "hand", "secrets")},
            "deck": deck, "deck_list": PAIRS[game % 6][s], "board": board,
        })
    return {"ply": st["turn"], "current": st["active"] + 1, "first": st["first"] + 1, "terminal": st["over"],
            "winner": 0 if st["winner"] in (None, "tie") else st["winner"] + 1, "capped": st["capped"],
            "next_eid": 3 + len(order) + 100, "players": players}


def _number(cid: str) -> int:
    from .codec import NUMBER

    return NUMBER[cid]


def trace_view(s: dict[str, Any]) -> dict[str, Any]:
    """The engine's JSON state in the traces' form (0-based seats, decks as multisets)."""
    players = []
    for p in s["players"]:
        h = p["hero"]
        players.append({
            "hero": {"card": h["class"].upper(), **{k: h[k] for k in
                     ("hp", "max_hp", "armor", "atk", "frozen", "immune", "attacks_used", "can_attack")}},
            "weapon": None if p["weapon"] is None else {k: p["weapon"][k]
                                                        for k in ("card", "atk", "durability")},
            **{k: p[k] for k in ("mana", "max_mana", "overload_locked", "overload_pending", "power_used",
                                 "cards_played_this_turn", "fatigue", "hand", "deck_count", "secrets")},
            "deck": dict(Counter(p["deck"])), "board": p["board"],
        })
    winner: Any = None
    if s["terminal"] and not s["capped"]:
        winner = s["winner"] - 1 if s["winner"] else "tie"
    return {"turn": s["ply"], "active": s["current"] - 1, "first": s["first"] - 1, "over": s["terminal"],
            "winner": winner, "capped": s["capped"], "players": players}


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        for i, x in enumerate(obj):
            out.update(_flatten(x, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def _comparable(view: dict[str, Any], over: bool) -> dict[str, Any]:
    """The fields the README compares: all but eids, auras' enchantment entries, the
    waiting player's per-turn bookkeeping; on the step that ends the game, `over` and
    `winner` only (the reference stops when a hero dies and skips the rest of the action)."""
    v = json.loads(json.dumps(view))
    waiting = 1 - v["active"]
    for s, p in enumerate(v["players"]):
        for m in p["board"]:
            m.pop("eid", None)
            m.pop("fresh", None)
            m["ench"] = [e for e in m.get("ench", []) if e["kind"] != "aura"]
            if s == waiting:
                for k in MINION_PER_TURN:
                    m.pop(k, None)
        if s == waiting:
            for k in PER_TURN:
                p.pop(k, None)
            for k in HERO_PER_TURN:
                p["hero"].pop(k, None)
    if over:
        return {"over": v["over"], "winner": v["winner"]}
    return v


def diff(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    over = bool(expected["over"])
    exp, act = _flatten(_comparable(expected, over)), _flatten(_comparable(actual, over))
    return [f"  {k}: expected {exp.get(k, '<absent>')!r}, got {act.get(k, '<absent>')!r}"
            for k in sorted(set(exp) | set(act)) if exp.get(k, "<absent>") != act.get(k, "<absent>")]


def _load(rec: dict[str, Any]) -> State:
    st, nxt, action = rec["state"], rec["next"], rec["action"]
    drawn = [_drawn_first(st, nxt, action, seat) for seat in (0, 1)]
    return _game().state_from_json(engine_state(st, rec.get("game", 0), drawn), rng_seed=0)


def check_record(rec: dict[str, Any]) -> list[str]:
    """The differences between one recorded step and the engine's (empty: it matches)."""
    try:
        st = _load(rec)
    except (EngineError, ValueError) as e:
        return [f"  recorded state rejected: {e}"]
    problems = []
    n_legal = len(st.legal_codes())
    if n_legal != rec["n_legal"]:
        problems.append(f"  n_legal: expected {rec['n_legal']}, got {n_legal}")
    action = _game().action(trace_action(rec["action"]))
    first: list[str] | None = None
    for seed in range(RETRIES if rec.get("random") else 1):
        trial = st.clone()
        trial.seed_rng(seed)
        try:
            trial.apply(action)
        except (EngineError, ValueError) as e:
            return problems + [f"  action {json.dumps(rec['action'])} rejected: {e}"]
        found = diff(rec["next"], trace_view(trial.to_json()))
        if not found:
            return problems
        if first is None:
            first = found
    return problems + (first or [])

"""Hand-built card-game positions for the rules tests: `position(...)` fills everything a
test does not name with a quiet default (both heroes at 30, empty boards, ten cards in each
deck), so each test states only what its rule is about."""

from __future__ import annotations

import copy
from typing import Any

from maag.engine import Game, State

GAME = Game("cards", {})


def minion(card: str, **fields: Any) -> dict[str, Any]:
    from maag.engine.games.cards.codec import CARD, KW

    c = CARD[card]
    kws = set(c.enc.lower().split(";"))
    out: dict[str, Any] = {"card": card, "hp": c.hp, **{k: k in kws for k in KW}, "frozen": False,
                           "silenced": False, "sick": False, "attacks_used": 0, "ench": []}
    out.update(fields)
    return out


def player(hero: str = "mage", **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "hero": {"class": hero, "hp": 30, "armor": 0, "frozen": False, "immune": False, "attacks_used": 0},
        "weapon": None, "mana": 10, "max_mana": 10, "overload_locked": 0, "overload_pending": 0,
        "power_used": False, "cards_played_this_turn": 0, "fatigue": 0, "hand": [], "secrets": [],
        "deck": ["N09"] * 10, "board": [], "deck_list": "random",
    }
    for k, v in fields.items():
        if k in ("hp", "armor", "frozen", "immune", "attacks_used"):
            out["hero"][k] = v
        else:
            out[k] = v
    return out


def position(p1: dict[str, Any] | None = None, p2: dict[str, Any] | None = None, current: int = 1,
             ply: int = 10, seed: int = 1) -> State:
    """A full state; minions get eids in board order (seat 1's first)."""
    players = [copy.deepcopy(p1 or player()), copy.deepcopy(p2 or player("paladin"))]
    eid = 3
    for p in players:
        p["board"] = [dict(m) for m in p["board"]]  # `[minion(...)] * 7` shares one dict
        for m in p["board"]:
            m.setdefault("eid", eid)
            eid = max(eid, m["eid"]) + 1
    st = GAME.state_from_json({"ply": ply, "current": current, "first": 1, "terminal": False, "winner": 0,
                               "players": players}, rng_seed=seed)
    return st


def me(st: State, seat: int = 1) -> dict[str, Any]:
    return st.to_json()["players"][seat - 1]


def ref(seat: int, pos: int | None = None) -> dict[str, Any]:
    return {"player": seat, "hero": True} if pos is None else {"player": seat, "pos": pos}


def play(h: int, card: str, target: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "play", "hand_index": h, "card": card, "target": target}


def attack(pos: int | None, target: dict[str, Any]) -> dict[str, Any]:
    return {"type": "attack", "attacker": {"hero": True} if pos is None else {"pos": pos}, "target": target}


END = {"type": "end_turn"}

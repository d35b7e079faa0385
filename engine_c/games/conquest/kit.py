"""Conquest's situations for the bot kit (`maag bot check --game conquest`). Each one puts a
bot before something conquest does and the other games do not: two phases a turn (the
combat move, battles, then the non-combat move), an empty enemy capital within reach of a
tank blitz, and a phase where every unit has moved already. Starts are the configuration's
opening, edited as a player could meet it and checked by the engine before they are offered."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ...game import Game
from ...registry import Situation

Edit = Callable[[dict[str, Any]], None]


def situations(config: dict[str, Any], seed: int) -> list[Situation]:
    game = Game("conquest", config)
    base = game.new_state(seed).to_json()
    names = list(base["owner"])
    short = dict(base, rounds=min(3, base["rounds"]))
    out = [Situation(f"opening-seat{s}", f"three rounds from the opening, as {names[s - 1]} (seat {s})", s,
                     short) for s in (1, 2)]
    out.append(Situation("noncombat-move", "the bot's turn starts in its non-combat move: one phase to "
                         "play, then the opponent's turn", 1, _edited(game, base, _noncombat)))
    out.append(Situation("only-end-phase", "every unit of the bot moved already in this non-combat move: "
                         "only end_phase is legal", 1, _edited(game, base, _all_moved)))
    if config.get("map", "twin_k4_14") == "twin_k4_14":
        out.append(Situation("empty-capital", "the enemy capital B3 is empty and the bot's tanks stand two "
                             "steps away (a blitz through B2): taking it wins at the end of the round",
                             1, _edited(game, base, _empty_capital), _found_win))
    return out


def _edited(game: Game, base: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """`base` with the first player to move after `edit`; the engine checks the result."""
    st = json.loads(json.dumps(base))
    st["player"] = next(iter(st["owner"]))
    st["rounds"] = min(3, st["rounds"])
    edit(st)
    game.state_from_json(st)
    return st


def _noncombat(st: dict[str, Any]) -> None:
    st["phase"] = "noncombat"


def _all_moved(st: dict[str, Any]) -> None:
    st["phase"] = "noncombat"
    me = next(iter(st["roster"]))
    mine = {u for ids in st["roster"][me].values() for u in ids}
    st["moved"] = sorted(u for ids in st["units"].values() for u in ids if u in mine)


def _empty_capital(st: dict[str, Any]) -> None:
    """Red: its capital's army and 2 tanks in B7 (taken); Blue: two infantry far away in B5."""
    red, blue = st["roster"]["Red"], st["roster"]["Blue"]
    terr = [f"R{i}" for i in range(1, 8)] + [f"B{i}" for i in range(1, 8)]
    st["owner"] = {"Red": [f"R{i}" for i in range(1, 8)] + ["B7"],
                   "Blue": [t for t in terr if t.startswith("B") and t != "B7"]}
    st["units"] = {"R3": red["infantry"][:4], "B7": red["tank"][:2], "B5": blue["infantry"][:2]}
    st["moved"] = []


def _found_win(outcome: Mapping[str, Any]) -> str:
    if outcome["winner"] == outcome["seat"] and outcome["reason"] == "rules":
        return "took the capital and won at the end of the round"
    return "did not win in the first round"

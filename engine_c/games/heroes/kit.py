"""Heroes' situations for the bot kit (`maag bot check`): short games from the opening in
both seats, a position where only end_turn is legal, and one that is won by a single
attack (the game ends in the middle of the bot's plan)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...game import Game
from ...registry import Situation


def situations(config: dict[str, Any], seed: int) -> list[Situation]:
    game = Game("heroes", config)
    base = game.new_state(seed).to_json()
    out = []
    for seat in (1, 2):
        out.append(Situation(f"opening-seat{seat}", f"three turns each from the opening, as seat {seat}",
                             seat, dict(base, turn_limit=6)))
    out.append(Situation("only-end-turn", "the bot is to move with no action points: only end_turn is legal",
                         1, dict(base, ap=0, turn_limit=4)))
    win = _win_in_one(game, base)
    if win is not None:
        out.append(Situation("win-in-one", "one attack wins: the game ends in the middle of the bot's turn",
                             1, win, _found_win))
    return out


def _found_win(outcome: Mapping[str, Any]) -> str:
    if outcome["winner"] == outcome["seat"] and outcome["reason"] == "rules" and outcome["prompts"] == 1:
        return "found the winning attack at once"
    return "did not play the winning attack in its first turn"


def _win_in_one(game: Game, base: dict[str, Any]) -> dict[str, Any] | None:
    """`base` with one enemy crystal left at 1 hp and a knight of player 1 beside it."""
    st = json.loads(json.dumps(base))
    crystals = [b for b in st["board"] if b["kind"] == "crystal" and b["owner"] == 2]
    if not crystals:
        return None
    target = crystals[0]
    st["board"] = [b for b in st["board"] if b not in crystals[1:]]
    target["hp"] = 1
    taken = {(b["x"], b["y"]) for b in st["board"]}
    x, y = target["x"] - 1, target["y"]
    if (x, y) in taken or x < 0:
        return None
    knight = {"x": x, "y": y, "kind": "knight", "owner": 1, "hp": 1000, "max_hp": 1000, "items": []}
    st["board"].append(knight)
    if st["decks"]["1"].get("knight"):
        st["decks"]["1"]["knight"] -= 1
    elif "knight" in st["hands"]["1"]:
        st["hands"]["1"].remove("knight")
    st["turn_limit"] = 6
    try:
        game.state_from_json(st)
    except Exception:
        return None
    return st

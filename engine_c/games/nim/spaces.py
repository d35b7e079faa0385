"""Nim's fixed action table and its limit, for code that needs a fixed-size action space
(maag.rl): `action_codes(game)` lists every action code a game with this configuration
can ever offer, in a fixed order; `limit_reached(state_json)` says whether a finished game
was ended by the turn limit rather than played out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...game import Game


def action_codes(game: Game) -> list[int]:
    """END_TURN, then TAKE(pile, count) for every pile and every count up to the pile's
    starting size (piles only shrink)."""
    piles = game.config["piles"]
    return [0] + [1 | p << 4 | n << 8 for p, size in enumerate(piles) for n in range(1, size + 1)]


def limit_reached(state: dict[str, Any]) -> bool:
    """A draw at the turn limit (the only draw nim has)."""
    return bool(state["terminal"]) and state["winner"] == 0 and state["turn"] >= state["turn_limit"]


def max_game_length(game: Game) -> int:
    """At most this many actions in a game (OpenSpiel's MaxGameLength): `ap` takes and
    END_TURN a turn."""
    return int(game.config["turn_limit"]) * (int(game.config["ap"]) + 1)

"""The card game's fixed action table and its limit, for code that needs a fixed-size
action space (maag.rl): `action_codes(game)` lists every action code a game can ever offer,
in a fixed order (a superset of every legal list: the rules decide which are legal);
`limit_reached(state_json)` says whether a finished game was ended by the ply limit rather
than played out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codec import CARDS, HERO_SLOT

if TYPE_CHECKING:
    from ...game import Game

HAND_MAX, BOARD_MAX = 10, 7
TARGETS = range(0, 1 + 8 * 2)  # 0: none, else 1 + 8 * seat + slot (slot 7: the hero)


def action_codes(game: Game) -> list[int]:
    """END_TURN; PLAY for every hand slot, card and target (a code names the card it
    expects); ATTACK for every attacker (board slots and the hero) and target; POWER for
    every target: 12,734 codes, whatever the configuration."""
    codes = [0]
    codes += [1 | slot << 2 | target << 6 | card << 11
              for slot in range(HAND_MAX) for card in range(1, len(CARDS) + 1) for target in TARGETS]
    codes += [2 | src << 2 | target << 6 for src in [*range(BOARD_MAX), HERO_SLOT] for target in TARGETS]
    codes += [3 | target << 6 for target in TARGETS]
    return codes


def limit_reached(state: dict[str, Any]) -> bool:
    """The game was cut by the ply limit (a tie)."""
    return bool(state["terminal"]) and bool(state.get("capped"))


def max_game_length(game: Game) -> int:
    """At most this many actions in a game (OpenSpiel's MaxGameLength), a loose bound: a ply
    plays at most a full hand and the cards it draws (10 + 30), attacks with each minion and
    the hero at most twice (2 * 8), uses the power and ends: under 64 actions a ply."""
    return int(game.config["ply_limit"]) * 64

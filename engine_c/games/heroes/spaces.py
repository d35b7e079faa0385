"""Heroes' fixed action table and its limit, for code that needs a fixed-size action space
(maag.rl): `action_codes(game)` lists every action code a game with this configuration
can ever offer, in a fixed order (a superset of every legal list: the rules decide which
are legal); `limit_reached(state_json)` says whether a finished game was ended by the turn
limit rather than played out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .codec import ACTION_TYPES, CARD_TYPES, CARDS, UNIT_TYPES, _pack

if TYPE_CHECKING:
    from ...game import Game


def action_codes(game: Game) -> list[int]:
    """END_TURN; each card action (deploy, equip, spell) for every card and square; each
    unit action (move, attack, heal, teleport) for every pair of squares; SWAP_CARD for
    every card. The board is the configured map's (a 9x5: 9,597 codes; a-tiny 5x3: 1,407)."""
    st = game.new_state(seed=0).cdata
    squares = [(x, y) for x in range(st.w) for y in range(st.h)]
    codes = [0]
    for t in ACTION_TYPES:
        ti = ACTION_TYPES.index(t)
        if t in CARD_TYPES:
            codes += [_pack(ti, c, 0, 0, x, y) for c in range(len(CARDS)) for x, y in squares]
        elif t in UNIT_TYPES:
            codes += [_pack(ti, 0, fx, fy, tx, ty) for fx, fy in squares for tx, ty in squares]
        elif t == "swap_card":
            codes += [_pack(ti, c) for c in range(len(CARDS))]
    return codes


def limit_reached(state: dict[str, Any]) -> bool:
    """The game ended at the turn limit (always a draw in heroes)."""
    return bool(state["terminal"]) and state["turn"] >= state["turn_limit"]


def max_game_length(game: Game) -> int:
    """At most this many actions in a game (OpenSpiel's MaxGameLength): every action but
    END_TURN costs an action point, so a turn is at most its points and END_TURN."""
    c = game.config
    return int(c["turn_limit"]) * (max(int(c["ap"]), int(c["start_ap"])) + 1)


# Fields of the C state that are no features of a position (maag.rl.encoding): the hash.
NOT_FEATURES = ("zob",)

"""The JSON Schema of nim's actions and observations (README.md beside this file)."""

from __future__ import annotations

from ...jsonshape import array, boolean, enum, integer, nat, obj, one_of, seat
from .codec import MAX_PILE, MAX_PILES

ACTION = one_of(
    obj({"type": enum("take"), "pile": nat(MAX_PILES - 1), "count": integer(1, MAX_PILE)},
        description="take `count` objects from pile `pile` (one take per pile a turn)"),
    obj({"type": enum("end_turn")}, description="end the turn"),
)

OBSERVATION = obj({
    "piles": array(nat(MAX_PILE), 1, MAX_PILES), "current": seat(), "ap": nat(), "ap_per_turn": nat(),
    "taken": array(boolean(), 1, MAX_PILES, description="the piles taken from this turn"),
    "turn": nat(), "turn_limit": nat(), "misere": boolean(), "terminal": boolean(),
    "winner": enum(0, 1, 2), "observer": seat(),
}, description="nim: the whole state (nothing is hidden)")

__all__ = ["ACTION", "OBSERVATION"]

"""What a spectator may see of a game: a seat-less view made of the referee's own redaction.

The engine knows two observers, the seats; a spectator is neither. Its view is what both
seats' observations (the same `observation(seat).to_json()` the referee sends in
`your_turn`) agree on, compared field by field: maps are walked key by key (a key only one
side has is left out), lists of records of the same length (the seats, the units on a board)
record by record, and every other value (a list of plain values such as a hand of card
names, a number, a string, a map of plain values such as a deck's card counts) is kept only
when both observations hold exactly the same, else it is replaced by None. A hand is in one
seat's observation only, so it is never in the view; its size is, when the game puts the
sizes in both observations. Nothing is compared inside lists of plain values or count maps,
so the view never tells which parts of a hidden item two observations share. The
observer's own seat number (`observer`) is dropped.

The evaluation of a position is shown to spectators only when both seats' observations
evaluate it alike (heroes: the value counts the cards not yet played, hand and deck
together, which both seats know), else it is left out (None) while the game runs.
"""

from __future__ import annotations

from typing import Any

from maag.engine import State

__all__ = ["public_view", "public_value", "common"]


def _plain(x: Any) -> bool:
    return isinstance(x, dict) and all(not isinstance(v, (dict, list)) for v in x.values())


def common(a: Any, b: Any) -> Any:
    """What two observations' JSON agree on (see the module's docstring)."""
    if isinstance(a, dict) and isinstance(b, dict) and not (_plain(a) or _plain(b)):
        return {k: common(a[k], b[k]) for k in a if k in b and k != "observer"}
    if (isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a != b
            and all(isinstance(x, dict) for x in a + b)):
        return [common(x, y) for x, y in zip(a, b, strict=True)]
    return a if a == b and type(a) is type(b) else None


def public_view(state: State) -> dict[str, Any]:
    """A spectator's view of a full state (a map like the game's observation JSON, with
    None where the seats' views differ)."""
    view = common(state.observation(0).to_json(), state.observation(1).to_json())
    assert isinstance(view, dict)
    return view


def public_value(state: State) -> float | None:
    """The engine's evaluation for seat 1 (index 0) when both seats' observations give the
    same, else None."""
    a = state.observation(0).evaluate(0)
    b = state.observation(1).evaluate(0)
    return float(a) if a == b else None

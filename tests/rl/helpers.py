"""What the tests of maag.rl share: quick configurations of every registered game, read from
the games' options (no game named here), and a random policy over the action masks."""

from __future__ import annotations

from typing import Any

import numpy as np
from maag.engine import registry

LIMIT = 12  # turns, plies or rounds: every game ends within seconds


def quick_options(game: str) -> dict[str, Any]:
    """Options that keep a game short: the smallest map or deck a game offers (a choice
    named tiny), and a small turn, ply or round limit."""
    out: dict[str, Any] = {}
    for o in registry.get(game).options:
        tiny = [c for c in (o.choices or ()) if isinstance(c, str) and "tiny" in c]
        if tiny and o.name in ("map", "board"):
            out[o.name] = tiny[0]
        elif o.type is int and (o.name.endswith("limit") or o.name == "rounds"):
            out[o.name] = LIMIT
    return out


def random_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))

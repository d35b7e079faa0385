"""maag.engine: the C rules core and its thin Python wrapper.

    >>> from maag.engine import Game
    >>> g = Game("heroes", {"map": "a"})
    >>> s = g.new_state(seed=1)
    >>> s.apply(s.legal_actions()[0])

The names below load the compiled core on first use, not on import: `maag.engine.registry`
(which games exist, read from games/games.def) is cheap, so a command line can list the
games without loading C."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._lowlevel import (
        ConfigError,
        EngineError,
        GameOverError,
        IllegalActionError,
        OutOfMemoryError,
        StateError,
    )
    from .game import Action, Game, State
    from .observation import Observation

__all__ = ["Action", "Game", "State", "Observation", "EngineError", "IllegalActionError", "GameOverError",
           "ConfigError", "StateError", "OutOfMemoryError"]

_HOME = {"Action": "game", "Game": "game", "State": "game", "Observation": "observation"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f".{_HOME.get(name, '_lowlevel')}", __name__)
    return getattr(module, name)

"""maag.engine: the C rules core and its thin Python wrapper.

    >>> from maag.engine import Game
    >>> g = Game("heroes", {"map": "a"})
    >>> s = g.new_state(seed=1)
    >>> s.apply(s.legal_actions()[0])

The names below load the compiled core on first use, not on import: `maag.engine.registry`
(which games exist, read from games/games.def) is cheap, so a command line can list the
games without loading C.

Modules:
  registry     which games exist (games/games.def) and what generic code knows of each
               (`GameSpec`): `names()`, `default()`, `get(name)`
  game         `Game`, `State`, `Action`: the generic Python face of the C core
  observation  `Observation`: what one seat may see, and its determinizations
  search       the search kernels (mg_search.h) run on a state: `search`, `count_moves`
  hidden       the determinized kernels (mg_hidden.h) run from an observation: PIMC,
               ISMCTS, OEP on determinizations
  kernels      the timed loops of mg_kernels.h (`maag bench engine`) and the C layout of a
               game's state struct (maag.rl's observation vectors)
  evalnet      NEAT evaluation networks loaded into the C evaluator (`eval=neat:FILE`)
  conformance  reference traces replayed through a game's replayer (`maag conformance`)
  jsonshape    builders of JSON Schema fragments, for the games' schema.py
  machine      the machine a figure is measured on
  seeds        `derive_seed`: the seed of each game of a seeded run (the referee's deals,
               the lab's twins that rebuild them)
  _lowlevel    the only module that touches the compiled core: loading it, its errors
  build_engine the cffi build of the core (setup.py's cffi_modules); cdefs generates its
               declarations from the headers
  games/       one subpackage and folder per game (C rules, codec, SPEC), listed in games.def
  include/, src/  the C: the game interface, the search kernels, the RNG"""

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

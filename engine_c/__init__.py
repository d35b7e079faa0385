"""maag.engine: the C rules core and its thin Python wrapper.

    >>> from maag.engine import Game
    >>> g = Game("heroes", {"map": "a"})
    >>> s = g.new_state(seed=1)
    >>> s.apply(s.legal_actions()[0])
"""

from ._lowlevel import ConfigError, EngineError, GameOverError, IllegalActionError, StateError
from .game import Action, Game, State
from .observation import Observation

__all__ = ["Action", "Game", "State", "Observation", "EngineError", "IllegalActionError", "GameOverError",
           "ConfigError", "StateError"]

"""The timed loops of the C core (mg_kernels.h), behind `maag bench engine`: random playouts,
legal-action enumeration and clone+apply, each repeated in C for a given time so that no
Python is counted, and the C layout of a game's state struct, for code that reads states as
bytes (maag.rl's observation vectors).

    >>> from maag.engine import Game
    >>> from maag.engine.kernels import time_playouts
    >>> games, actions, elapsed = time_playouts(Game("nim").new_state(seed=1), 0.01, seed=1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._lowlevel import check, ffi, lib
from .game import Game, State

__all__ = ["time_playouts", "time_legal", "time_clone_apply", "state_type", "sizeof"]


def _back_to_back(states: Sequence[State]) -> tuple[Any, Game]:
    if not states:
        raise ValueError("no states to time")
    game = states[0].game
    if any(s.game.name != game.name for s in states):
        raise ValueError("the states must be of one game")
    return ffi.from_buffer(b"".join(s.to_bytes() for s in states)), game


def time_playouts(start: State, seconds: float, seed: int) -> tuple[int, int, float]:
    """Uniformly random playouts from `start` (left unchanged) for `seconds`: (games,
    actions, elapsed seconds)."""
    games, actions, elapsed = ffi.new("long *"), ffi.new("long *"), ffi.new("double *")
    vt = start.game.vt
    check(vt, lib.mg_bench_playouts(vt, start.cdata, seconds, seed, games, actions, elapsed))
    return int(games[0]), int(actions[0]), float(elapsed[0])


def time_legal(states: Sequence[State], seconds: float) -> tuple[int, float]:
    """Legal-action enumeration on `states` in turn for `seconds`: (calls, elapsed seconds)."""
    blob, game = _back_to_back(states)
    calls, elapsed = ffi.new("long *"), ffi.new("double *")
    check(game.vt, lib.mg_bench_legal(game.vt, blob, len(states), seconds, calls, elapsed))
    return int(calls[0]), float(elapsed[0])


def time_clone_apply(states: Sequence[State], seconds: float, seed: int) -> tuple[int, float]:
    """A memcpy clone of each of `states` in turn with one random legal action applied, for
    `seconds`: (clone+apply pairs, elapsed seconds)."""
    blob, game = _back_to_back(states)
    count, elapsed = ffi.new("long *"), ffi.new("double *")
    check(game.vt, lib.mg_bench_clone_apply(game.vt, blob, len(states), seconds, seed, count, elapsed))
    return int(count[0]), float(elapsed[0])


def state_type(game: Game) -> Any:
    """cffi's description of the game's state struct (its `kind`, `fields` with their
    offsets and types, array `item` and `length`); RuntimeError if it is not the size of
    the game's states."""
    t = ffi.typeof(game.spec.state_ctype)
    if ffi.sizeof(t) != game.vt.state_size:
        raise RuntimeError(f"{game.name}: {game.spec.state_ctype} is not the state's C struct")
    return t


def sizeof(ctype: Any) -> int:
    """The size in bytes of a C type from `state_type`'s description."""
    return int(ffi.sizeof(ctype))

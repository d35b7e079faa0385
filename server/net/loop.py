"""The event loop the referee runs on: uvloop's when it is installed (the `fast` extra), else
asyncio's own; `run(coro)` is asyncio.run on it. `tune_collector()`: the garbage collector
set for a process that is a referee (`maag serve`), once it is up."""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["new_event_loop", "run", "name", "tune_collector", "COLLECT_EVERY"]

T = TypeVar("T")


def _uvloop() -> Any:
    try:
        import uvloop  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return uvloop


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop: uvloop's if it is installed, else asyncio's default."""
    uv = _uvloop()
    return uv.new_event_loop() if uv is not None else asyncio.new_event_loop()  # type: ignore[no-any-return]


def name() -> str:
    """Which loop `new_event_loop` makes: "uvloop" or "asyncio"."""
    return "uvloop" if _uvloop() is not None else "asyncio"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(coro) on `new_event_loop()`'s kind of loop."""
    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            return runner.run(coro)
    uv = _uvloop()  # pragma: no cover (Python 3.10)
    if uv is not None:
        asyncio.set_event_loop_policy(uv.EventLoopPolicy())
    return asyncio.run(coro)


COLLECT_EVERY = 10_000
"""Allocations of container objects between two collections of the youngest generation
(Python's default: 700)."""


def tune_collector() -> None:
    """Set the garbage collector for a referee process, once it is up: what is alive now (the
    modules, the rules' tables, the caches) is frozen out of every later collection, and the
    youngest generation is collected every COLLECT_EVERY allocations. Why: measured in `maag
    bench server` (100 games, turn mode), the collections took 6% of the referee's CPU, the
    oldest generation's 27 ms each, walking the whole process; a message's objects die
    young, a game's log lives as long as the game. Not for a process that runs tests or
    other work beside a referee: what `gc.freeze` freezes is never collected."""
    gc.collect()  # (the start's garbage first: frozen, it would never be freed)
    gc.freeze()
    gc.set_threshold(COLLECT_EVERY, 10, 10)

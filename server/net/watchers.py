"""The watchers: who is told of every game change (the web view's live pages), and how.

A watcher is a function called in the event loop right after the referee acted (`watch`);
it must return quickly (the web view only marks the game for its next push), and its bugs
never stop a game."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from maag.server.net.model import GameSummary
from maag.server.referee.session import GameSession

__all__ = ["GameChange", "Watchers"]

LOG = logging.getLogger("maag.server.net.server")


@dataclass(frozen=True, slots=True)
class GameChange:
    """What a watcher of the server (`RefereeServer.watch`) is told: a game started
    (`kind` "start"), moved on ("move": actions applied, a turn ended on time, a seat left or
    came back) or is over and stored ("over", with its summary). `session` is the referee's
    own: read it, never drive it."""

    kind: str
    session: GameSession
    summary: GameSummary | None = None


class Watchers:
    """The functions told of every game change. False while there are none (the referee
    then builds no GameChange at all)."""

    def __init__(self) -> None:
        self._fns: list[Callable[[GameChange], None]] = []

    def __bool__(self) -> bool:
        return bool(self._fns)

    def add(self, fn: Callable[[GameChange], None]) -> Callable[[], None]:
        """Call `fn` on every change; returns the function that stops the calls."""
        self._fns.append(fn)
        return lambda: self._fns.remove(fn) if fn in self._fns else None

    def tell(self, kind: str, session: GameSession, summary: GameSummary | None = None) -> None:
        change = GameChange(kind, session, summary)
        for fn in list(self._fns):
            try:
                fn(change)
            except Exception:  # a watcher's bug never stops a game
                LOG.exception("a game watcher failed on %s of game %s", kind, session.game_id)

"""The seating: which connection sits in which game and seat, how many free game slots each
connection has, and since when it has been free. Part of the lobby's room (the lobby pairs on
these counts); the composition root (server.py) builds one and hands it to the lobby, the
games, the forfeits, the acts (acts.py) and the fleet, which read and change it through the
methods below only.

A connection is any object with `bot` and `closing` (the transport's `Client`, or a stand-in
in tests/server/test_lobby.py). Its record is kept weakly: it lives exactly as long as the
connection object, as the transport's own attributes did (it is dropped when the connection
is collected), so a connection never needs to be forgotten here; one that never said hello
reads as seated nowhere with no free slot.

Free slots: the `concurrency` of the connection's hello, less its games here, its seats
linked to games hosted by the fleet's other referees (fleet/links.py) and the slots reserved
for games being set up; capped by what is left of its hello's `max_games` (`begun`: the games
paired or played on it), and none once it is closing or before its hello.

Who may have a free slot (`maybe_free`) is kept as it changes, not found by asking every
connection: the lobby pairs after every game's end, and a scan of every connection there was
a twentieth of a busy referee's CPU (server/net/lobby.py). A connection enters the set when a
slot of its may have become free (its hello, a game or link given up or over, a slot given
back) and leaves it when `maybe_free` finds it with none; `closing` is for good.
"""

from __future__ import annotations

import time
import weakref
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Seated", "Seating"]

G = TypeVar("G")
"""A game a connection is seated in (games.py's LiveGame): the seating only holds it."""


class Seated(Protocol):
    """What the seating reads of a connection."""

    @property
    def bot(self) -> str | None: ...
    @property
    def closing(self) -> bool: ...


class _Record(Generic[G]):
    """One connection's seats and slots."""

    __slots__ = ("concurrency", "max_games", "begun", "reserved", "free_since", "games", "links")

    def __init__(self) -> None:
        self.concurrency = 0  # hello.concurrency: games at once
        self.max_games: int | None = None  # hello.max_games: no pairing past this many games
        self.begun = 0  # games paired on this connection (in flight or started)
        self.reserved = 0  # slots held for games being set up (or a link being opened)
        self.free_since = 0.0  # when a slot last became free (who waited longest is paired first)
        self.games: dict[str, tuple[G, list[int]]] = {}  # game -> (the game, the seats held there)
        self.links: dict[str, Any] = {}  # game -> SeatLink: seats in games hosted elsewhere


def _slots(r: _Record[Any]) -> int:
    """The games a record leaves room for (at most 0 when none), its connection's bot and
    closing aside (`Seating.free` reads those)."""
    free = r.concurrency - len(r.games) - len(r.links) - r.reserved
    return free if r.max_games is None else min(free, r.max_games - r.begun)


class Seating(Generic[G]):
    """Who is seated where, and who has a free slot (see the module)."""

    def __init__(self) -> None:
        self._of: dict[int, _Record[G]] = {}
        """id of a connection -> its record. By id, not by the connection itself: a plain
        dict's lookup (acts.py asks once or twice per act), the record dropped by a finalizer
        when the connection is collected (before its id can be reused)."""
        self._loose: dict[int, weakref.ref[Any]] = {}
        """id of a connection that may have a free slot -> the connection (weakly): every
        connection with a free slot is here, and some with none (`maybe_free` drops them)."""

    def __len__(self) -> int:
        """How many connections have a record (each goes with its connection)."""
        return len(self._of)

    def _record(self, c: Seated) -> _Record[G]:
        r = self._of.get(id(c))
        if r is None:
            r = self._of[id(c)] = _Record()
            weakref.finalize(c, self._of.pop, id(c), None)
        return r

    def _loosen(self, c: Seated) -> None:
        """A slot of `c` may have become free."""
        self._loose[id(c)] = weakref.ref(c)

    def maybe_free(self) -> list[Seated]:
        """Every connection with a free slot, and none that is closing or has no slot left
        (some may still be paired for nothing: no hello yet; the caller asks `free`); in the
        order they were loosened."""
        out: list[Seated] = []
        dropped: list[int] = []
        of = self._of
        for k, ref in self._loose.items():
            c = ref()
            r = of.get(k) if c is not None else None
            if r is None or c is None or c.closing or _slots(r) <= 0:
                dropped.append(k)  # until a slot of its frees again (`_loosen`)
            else:
                out.append(c)
        for k in dropped:
            del self._loose[k]
        return out

    # -- slots ----------------------------------------------------------------------------
    def join(self, c: Seated, *, concurrency: int, max_games: int | None, now: float | None = None) -> None:
        """`c`'s hello was welcomed: it takes `concurrency` games at once, `max_games` in all
        (None: no end), free from `now`."""
        r = self._record(c)
        r.concurrency, r.max_games = concurrency, max_games
        r.free_since = time.monotonic() if now is None else now
        self._loosen(c)

    def free(self, c: Seated) -> int:
        """How many games `c` may be paired for now (at most 0 when it may not)."""
        r = self._of.get(id(c))
        if r is None or c.bot is None or c.closing:
            return 0
        return _slots(r)

    def free_since(self, c: Seated) -> float:
        """When a slot of `c` last became free (its hello, or the end of a game or link)."""
        r = self._of.get(id(c))
        return 0.0 if r is None else r.free_since

    def reserved(self, c: Seated) -> int:
        """The slots of `c` held for games being set up."""
        r = self._of.get(id(c))
        return 0 if r is None else r.reserved

    def reserve(self, c: Seated) -> None:
        """Hold a slot of `c` (a game being set up, a link being opened: fleet/member.py)."""
        self._record(c).reserved += 1

    def release(self, c: Seated) -> None:
        """Give back a slot `reserve` held (the game has started, or will not)."""
        r = self._of.get(id(c))
        if r is not None and r.reserved > 0:
            r.reserved -= 1
            self._loosen(c)

    def paired(self, c: Seated) -> None:
        """The lobby paired `c` for a game: a slot held until the game starts, and one game
        more towards its `max_games`."""
        r = self._record(c)
        r.reserved += 1
        r.begun += 1

    def not_played(self, c: Seated) -> None:
        """A game paired on `c` did not start: it does not count towards its `max_games`."""
        self._record(c).begun -= 1
        self._loosen(c)

    def no_more_games(self, c: Seated) -> bool:
        """Pair `c` for no new game (its token was revoked while it plays); whether that
        changed anything."""
        r = self._record(c)
        if r.max_games == r.begun:
            return False
        r.max_games = r.begun
        return True

    # -- seats in games here --------------------------------------------------------------
    def sit(self, c: Seated, game_id: str, game: G, seat: int, *, again: bool = False) -> None:
        """`c` holds `seat` of `game`; `again`: a seat it gets back (its bot reconnected,
        here or through a link), which counts as a game begun on `c`."""
        r = self._record(c)
        if again:
            r.begun += 1
        r.games.setdefault(game_id, (game, []))[1].append(seat)

    def seats(self, c: Seated, game_id: str) -> tuple[G, list[int]] | None:
        """The game `game_id` and the seats `c` holds there, or None."""
        r = self._of.get(id(c))
        return None if r is None else r.games.get(game_id)

    def seated(self, c: Seated) -> list[tuple[str, G, list[int]]]:
        """(game id, game, seats) of every game `c` is seated in here (a copy)."""
        r = self._of.get(id(c))
        return [] if r is None else [(gid, g, seats) for gid, (g, seats) in r.games.items()]

    def unseat(self, c: Seated, game_id: str, *, now: float | None = None) -> None:
        """`c` holds no seat of `game_id` any more; with `now`, its slot is free from then
        (the game is over), else it was given up (a disconnection)."""
        r = self._of.get(id(c))
        if r is None:
            return
        r.games.pop(game_id, None)
        if now is not None:
            r.free_since = now
        self._loosen(c)

    def unseat_all(self, c: Seated) -> None:
        """`c` holds no seat any more (its games were handed over or dropped)."""
        r = self._of.get(id(c))
        if r is not None:
            r.games.clear()
            self._loosen(c)

    # -- seats in games hosted elsewhere (fleet/links.py) ---------------------------------
    def link(self, c: Seated, game_id: str) -> Any:
        """The link carrying `c`'s seat of `game_id`, hosted elsewhere, or None."""
        r = self._of.get(id(c))
        return None if r is None else r.links.get(game_id)

    def links(self, c: Seated) -> list[Any]:
        """Every link of `c` (a copy)."""
        r = self._of.get(id(c))
        return [] if r is None else list(r.links.values())

    def add_link(self, c: Seated, game_id: str, link: Any) -> None:
        """`link` carries `c`'s seat of `game_id`: it holds one of `c`'s slots."""
        self._record(c).links[game_id] = link

    def drop_link(self, c: Seated, game_id: str, link: Any, *, now: float | None = None) -> bool:
        """`link` no longer carries `c`'s seat of `game_id` (if it still did: True); with
        `now`, the slot is free from then."""
        r = self._of.get(id(c))
        if r is None or game_id not in r.links or r.links[game_id] is not link:
            return False  # (None for `link` included: no link is None)
        del r.links[game_id]
        if now is not None:
            r.free_since = now
        self._loosen(c)
        return True

    def drop_links(self, c: Seated) -> None:
        """`c` has no link any more (it is gone)."""
        r = self._of.get(id(c))
        if r is not None:
            r.links.clear()
            self._loosen(c)

    def holds(self, c: Seated, game_id: str) -> bool:
        """Whether `c` has a seat of `game_id`, here or through a link."""
        r = self._of.get(id(c))
        return r is not None and (game_id in r.games or game_id in r.links)

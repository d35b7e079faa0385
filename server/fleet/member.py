"""A referee as a member of a fleet's ladder: it tells the database who is free here, and
plays the games the ladder's one scheduler (compete/ladder.py, in whichever process holds the
ladder's lock) assigns to it (fleet/assignments.py), the hosted bots' among them.

Every POLL_S: the bots connected here and their free slots are published, and the hosted
games it can start (when they changed, and every REFRESH_S anyway). This referee's new
assignments are taken as soon as the database announces them (PostgreSQL's LISTEN/NOTIFY;
and every ASK_S in case an announcement was lost), or every POLL_S where it cannot (SQLite).
A game it hosts is requested like any other (the lobby starts it once both seats are there);
when a seat's bot is connected to another referee, that seat is pinned to the link that referee
opens (fleet/links.py) and the game waits for it at most LINK_WAIT_S. A seat it carries is
linked to the host (either seat: a connected bot's member without a free hosted slot links
it to a member that runs its hosted opponent). A game with a hosted seat starts that seat's
sandboxed process first (its start-up budget: `HostedGames`, the ladder's hosted bots), then
waits for the other seat as any game does. Each assignment is settled once its game has
started (with its id) or could not (the bot left, the link never came): the scheduler counts
its bots' games from those rows, the running games and the assignments not settled yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeAlias

from maag.server.fleet.assignments import Assignment, listener, publish_presence, settle, take
from maag.server.fleet.links import LINK_WAIT_S
from maag.server.net.model import GameNotStarted, GameSummary

if TYPE_CHECKING:
    from maag.server.fleet.interface import HostedGames
    from maag.server.fleet.links import Links
    from maag.server.net.games import Games, LiveGame
    from maag.server.net.keeper import StorageKeeper
    from maag.server.net.lobby import Lobby
    from maag.server.net.model import ServerConfig
    from maag.server.net.seating import Seating
    from maag.server.storage.base import AsyncStorage

__all__ = ["Member", "POLL_S"]

Pin: TypeAlias = "asyncio.Future[str] | None"
Played: TypeAlias = "asyncio.Future[GameSummary]"

LOG = logging.getLogger("maag.server.net.server")

POLL_S = 0.1
"""How often the presence is published (if changed), and new assignments are asked for when
this referee cannot listen for them."""
ASK_S = 1.0
"""While listening (PostgreSQL), assignments are also asked for this often: an announcement
lost with a connection costs at most this long."""
REFRESH_S = 2.0
"""The presence is written again this often even when unchanged."""


class Member:
    """This referee's part in a fleet's ladder (see the module)."""

    def __init__(self, config: ServerConfig, *, server_id: str, storage: AsyncStorage, lobby: Lobby,
                 seating: Seating[LiveGame], keeper: StorageKeeper, links: Links, rooms: Games,
                 spawn: Callable[[Coroutine[Any, Any, Any]], None], stopping: Callable[[], bool],
                 request_game: Callable[..., asyncio.Future[GameSummary]]) -> None:
        """`request_game`: the referee's RefereeServer.request_game (a game queued here);
        `rooms`: the games played here (a restarted hosted process takes its seat in one)."""
        self.server_id, self.storage, self.lobby, self.keeper = server_id, storage, lobby, keeper
        self.rooms = rooms
        self.seating = seating
        self.links, self.spawn, self.stopping, self.request_game = links, spawn, stopping, request_game
        self.ladder = config.fleet_ladder
        self._shown: list[tuple[str, int]] | None = None
        self._shown_at = 0.0
        self.hosted = 0  # assignments hosted here (for tests and logs)
        self.carried = 0  # assignments whose seat 2 was linked from here
        self.listening = False  # woken by the database's announcements (else: asking every POLL_S)
        self.hosting: HostedGames | None = None
        """The ladder's hosted bots, when it has them (`Fleet.host_games`)."""

    def presence(self) -> list[tuple[str, int, float]]:
        """(bot, free slots, free since) of the bots connected here that a ladder may pair."""
        free: dict[str, list[float]] = {}
        wall = time.time() - time.monotonic()
        for c in self.lobby.clients:
            if c.bot is None or c.pinned or c.closing or c.bot in self.lobby.explicit_only:
                continue
            slots = self.seating.free(c)
            if slots > 0:
                since = self.seating.free_since(c) + wall
                got = free.setdefault(c.bot, [0, since])
                got[0] += slots
                got[1] = min(got[1], since)
        return [(b, int(v[0]), v[1]) for b, v in sorted(free.items())]

    async def run(self) -> None:
        if self.ladder is None or self.links.address is None:
            return
        woken = asyncio.Event()
        listening = asyncio.get_running_loop().create_task(self._listen(woken))
        taken_at = -ASK_S
        try:
            while not self.stopping():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(woken.wait(), POLL_S)
                if not self.keeper.ok:
                    continue
                try:
                    rows = self.presence()
                    slots = self.hosting.free_slots() if self.hosting is not None else None
                    shown = [(b, n) for b, n, _ in rows] + ([("", slots)] if slots is not None else [])
                    now = time.monotonic()
                    if shown != self._shown or now - self._shown_at > REFRESH_S:
                        await self.storage.apply(publish_presence, self.server_id, rows, slots)
                        self._shown, self._shown_at = shown, now
                    if not (woken.is_set() or not self.listening or now - taken_at >= ASK_S):
                        continue
                    woken.clear()
                    taken_at = now
                    hosted, linked = await self.storage.apply(take, self.server_id)
                except Exception as e:  # the database is away: the keeper rides it out
                    LOG.debug("fleet: presence or assignments not exchanged: %s", e)
                    continue
                self._start(hosted, linked)
        finally:
            listening.cancel()

    async def _listen(self, woken: asyncio.Event) -> None:
        """Set `woken` whenever this referee is named on the assignments' channel (PostgreSQL);
        without it (SQLite, or the listening connection lost), the loop asks every POLL_S."""
        while not self.stopping():
            got = None
            try:
                got = await asyncio.to_thread(listener, self.storage.storage, self.server_id)
                if got is None:
                    return
                self.listening = True
                while not self.stopping():
                    if await asyncio.to_thread(got.wait, 1.0):
                        woken.set()
            except Exception as e:
                LOG.debug("fleet: not listening for assignments (%s); asking instead", e)
            finally:
                self.listening = False
                if got is not None:
                    with contextlib.suppress(Exception):
                        got.close()
            await asyncio.sleep(ASK_S)

    def _start(self, hosted: list[Assignment], linked: list[Assignment]) -> None:
        for a in hosted:
            self.hosted += 1
            self.spawn(self._host(a))
        for a in linked:
            self.carried += 1
            self.spawn(self._carry(a))

    async def _host(self, a: Assignment) -> None:
        """Play assignment `a` here: each seat local, hosted here, or pinned to its link."""
        seat = a.linked_seat()
        # (A hosted opponent's process starts first: the link may come before the request.)
        pin = self.links.expect(a.id, a.secret, seat, a.seats[seat]) if seat is not None else None
        pins = (pin if seat == 0 else None, pin if seat == 1 else None)
        started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if a.hosted:
            fut, request = await self._hosted(a, pins, started)
        else:
            fut = request = self.request_game(a.seats[0], a.seats[1], match_id=f"ladder:{a.ladder}",
                                              seed=a.seed, tags={"Ladder": a.ladder}, requeue=False,
                                              on_start=started.set_result,
                                              clients=pins if pin is not None else None, handover=True)
        await asyncio.wait([started, fut], timeout=LINK_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        if not started.done() and not fut.done():  # the bot left, or the link never came: call it off
            req = next((r for r in self.lobby.requests if r.future is request), None)
            if req is not None:
                self.lobby.requests.remove(req)
                request.set_exception(GameNotStarted(f"assignment {a.id}: {a.seats} not both here in time"))
        self.links.expected.pop(a.id, None)
        if pin is not None and not pin.done():
            pin.cancel()  # (the link never came)
        fut.add_done_callback(lambda f: _played(a, f))  # (not awaited: our stop must not wait for it)
        if pin is not None:  # a link that came for a game that never began lets its bot go
            fut.add_done_callback(lambda f: self._let_go(pin, started))
        await self._settle(a, started.result() if started.done() else None)

    def resumed(self, game: LiveGame) -> None:
        """A game this referee took over from a lost one (fleet/takeover.py): each seat of a
        hosted version gets a fresh sandboxed process here (the lost referee's died with it),
        seated as after a reconnection."""
        if self.hosting is not None:
            for seat in (0, 1):
                if game.clients[seat] is None:
                    self.spawn(self._rehost(self.hosting, game, seat))

    async def _rehost(self, hosting: HostedGames, game: LiveGame, seat: int) -> None:
        gid, bot = game.session.game_id, game.bots[seat]
        try:
            got = await hosting.restart(bot, int(gid), seat)
        except Exception as e:  # (no hello in time, the sandbox failed: the game's grace decides)
            LOG.warning("fleet: game %s: %s not started again here: %r", gid, bot, e)
            return
        if got is None:
            return  # (not a hosted version here: a connected bot, which reconnects on its own)
        hello, close = got
        try:
            c = next((x for x in self.lobby.clients if x.hello_future is hello and not x.closing), None)
            here = self.rooms.games.get(gid) is game and not game.ending
            if c is None or not here or game.clients[seat] is not None:
                return
            LOG.info("fleet: game %s: %s started again here for seat %d", gid, bot, seat + 1)
            self.rooms.seat_back(c, game, seat)
            # Until the game is over here, or handed over at our stop (ending, never stored
            # here: our stop waits for this task, so it must not wait for the game's end).
            while self.rooms.games.get(gid) is game and not c.closing:
                if game.ending and self.stopping():
                    break
                await asyncio.sleep(0.5)
        finally:
            await close()

    def _let_go(self, pin: asyncio.Future[str], started: asyncio.Future[int]) -> None:
        """Close the link that came for `pin` if its game never began (a hosted process failed
        to start, or the game was called off): its member frees the bot's slot."""
        if started.done():
            return
        for c in list(self.lobby.clients):
            if c.hello_future is pin and not c.closing:
                c.close()

    async def _hosted(self, a: Assignment, pins: tuple[Pin, Pin],
                      started: asyncio.Future[int]) -> tuple[Played, Played]:
        """Start assignment `a`'s hosted seats (on their own start-up budget): the game's
        future, and the referee's request's once they said hello (the game's if they failed)."""
        loop = asyncio.get_running_loop()
        requested: asyncio.Future[asyncio.Future[GameSummary]] = loop.create_future()
        if self.hosting is None:  # (the ladder here runs no hosted bots: not played)
            fut: asyncio.Future[GameSummary] = loop.create_future()
            fut.set_exception(GameNotStarted(f"assignment {a.id}: no hosted bots here"))
            return fut, fut
        fut = asyncio.ensure_future(self.hosting.play_assigned(
            a.seats, a.hosted_seats(), pins, seed=a.seed, match_id=f"ladder:{a.ladder}",
            on_start=started.set_result, on_request=requested.set_result))
        await asyncio.wait([requested, fut], return_when=asyncio.FIRST_COMPLETED)
        return fut, (requested.result() if requested.done() else fut)

    async def _carry(self, a: Assignment) -> None:
        """Link the seat of assignment `a` whose bot is connected here to its host."""
        bot = a.seats[a.linked_seat() or 0]
        c = self.lobby.free(bot)
        if c is None or a.link is None:
            LOG.info("fleet: assignment %d: %s has no free slot here any more", a.id, bot)
            return  # the host calls it off after LINK_WAIT_S
        for attempt in range(3):  # (the host took it a moment ago: it may not expect the link yet)
            if attempt:
                await asyncio.sleep(0.2)
            self.seating.reserve(c)  # until its game_start comes through the link (links.started)
            link = await self.links.open(c, a.link, self.links.token(c, f"a{a.id}", a.secret), game_id=None,
                                        reserved=True)
            if link is not None or c.closing:
                break
        self.lobby.pair()

    async def _settle(self, a: Assignment, game_id: int | None) -> None:
        try:
            await self.storage.apply(settle, a.id, game_id)
        except Exception as e:  # unsettled, it is forgotten after ASSIGNMENT_TTL_S
            LOG.warning("fleet: assignment %d not settled: %s", a.id, e)


def _played(a: Assignment, fut: asyncio.Future[GameSummary]) -> None:
    if fut.cancelled():
        LOG.info("fleet: assignment %d not played: the server stopped", a.id)
    elif isinstance(fut.exception(), GameNotStarted):
        LOG.info("fleet: assignment %d not played: %s", a.id, fut.exception())
    elif fut.exception() is not None:
        LOG.error("fleet: assignment %d: %r", a.id, fut.exception())
    else:
        LOG.info("fleet: assignment %d played as game %d", a.id, fut.result().game_id)

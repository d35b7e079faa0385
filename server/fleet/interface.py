"""What the referee server uses of the fleet (`Fleet`), and what it hands the fleet to build
one (`FleetParts`): the composition root (net/server.py) knows this module only, so that a
referee alone on its database and a member of a fleet run the same code (fleet/fleets.py
builds one or the other)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from maag.protocol import ErrorCode, Hello, Ping
    from maag.server.net.games import Games, LiveGame
    from maag.server.net.keeper import StorageKeeper
    from maag.server.net.lobby import Lobby
    from maag.server.net.model import GameSummary, ServerConfig
    from maag.server.net.seating import Seating
    from maag.server.net.transport import Client
    from maag.server.net.watchers import Watchers
    from maag.server.storage.base import AsyncStorage

__all__ = ["Fleet", "FleetParts", "HostedGames"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetParts:
    """The referee's rooms and callbacks a fleet is built from (each implementation takes
    what it needs)."""

    config: ServerConfig
    server_id: str
    storage: AsyncStorage
    keeper: StorageKeeper
    lobby: Lobby
    seating: Seating[LiveGame]
    """Who is seated where, who has a free slot (the lobby's)."""
    rooms: Games
    watchers: Watchers
    stats: dict[str, int]
    spawn: Callable[[Coroutine[Any, Any, Any]], None]
    violation: Callable[[Client, ErrorCode, str], None]
    """An error sent to a connection (fatal codes close it)."""
    drop: Callable[[Client], None]
    """A connection forgotten: its seats disconnected (the caller closes it)."""
    fail: Callable[[str], None]
    """The referee gives up, saying why."""
    stopping: Callable[[], bool]
    tasks: Callable[[], Iterable[asyncio.Task[Any]]]
    """The referee's tasks under way (a game being stored or started)."""
    request_game: Callable[..., asyncio.Future[GameSummary]]
    """RefereeServer.request_game: a game queued here."""


class HostedGames(Protocol):
    """A fleet ladder's hosted bots on this referee (`maag ladder --fleet --submitted`:
    compete/ladder_hosted.py's `HostedEntrants`): the games the scheduler assigns here with a
    hosted seat are played through it, each such seat a fresh sandboxed process."""

    def free_slots(self) -> int:
        """Hosted games this referee can start now (published for the scheduler): its slots
        less the games it plays, those taken over with their hosted bots started again too."""

    async def play_assigned(self, seats: tuple[str, str], hosted: tuple[bool, bool],
                            pins: tuple[asyncio.Future[str] | None, asyncio.Future[str] | None], *,
                            seed: int | None, match_id: str, on_start: Callable[[int], None],
                            on_request: Callable[[asyncio.Future[GameSummary]], None]) -> GameSummary:
        """Play the game (a seat not hosted: the bot connected here, or its `pins` link);
        `on_request` is told the referee's request once the hosted processes said hello."""

    async def restart(self, label: str, gid: int,
                      seat: int) -> tuple[asyncio.Future[str], Callable[[], Awaitable[None]]] | None:
        """A fresh process of hosted version `label` for `seat` of game `gid` (taken over here
        from a lost referee), once it said hello: its connection's hello future, and `close`
        to await once the game is over; None when `label` is not hosted here."""


class Fleet(Protocol):
    """The fleet as the referee server sees it."""

    def host_games(self, games: HostedGames) -> None:
        """Play the hosted seats of the fleet ladder's games assigned here through `games`."""

    @property
    def link_address(self) -> str | None:
        """Where this referee takes seat links from the fleet's others (None: it does not)."""

    async def listen(self, factory: Callable[[], asyncio.Protocol]) -> None:
        """Start taking seat links (`factory`: a connection of the link listener)."""

    def loops(self) -> list[Coroutine[Any, Any, Any]]:
        """The fleet's loops, run from the referee's start until cancelled at its stop."""

    async def hand_over(self) -> None:
        """At the referee's stop: take no more links; hand the running games over to the
        fleet's others if it can (what is left, the caller aborts)."""

    async def admit(self, c: Client, bot: str) -> bool:
        """Before `bot`'s hello is welcomed: False if its games are played elsewhere (the
        hello was refused: it connects again)."""

    async def auth_delay(self, keys: list[str]) -> float:
        """Count a failed login under `keys`; how long to wait before answering it."""

    def new_secret(self) -> str | None:
        """A new game's secret for links to its seats (None: no links here)."""

    def link_hello(self, c: Client, h: Hello) -> None:
        """A hello on the link listener (`c.via_link`)."""

    def link_pinged(self, c: Client, m: Ping) -> None:
        """A ping on a link (`c.link`): the bot's round trip from its member."""

    async def find_seats(self, c: Client) -> None:
        """Link a bot just logged in to its seats in games hosted by the fleet's others."""

    def close_links(self, c: Client) -> None:
        """A connection's links closed (it is gone)."""

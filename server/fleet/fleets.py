"""The two fleets behind fleet/interface.py's `Fleet`, and `build_fleet` choosing one:

- `DatabaseFleet`: the referees sharing one database (`Takeover`, `FleetLimits`, `Links`,
  `Member` composed); what a referee runs by default, alone or not.
- `SoloFleet`: a referee with its database to itself (`ServerConfig.fleet` False): no action
  log, no takeover, no links, no fleet ladder; the failed-login delay and the games per
  minute counted in this process only (the lobby's counts, as a fleet of one), revoked
  tokens still closed (another process may revoke them: `maag bot add --replace`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from maag.protocol import ErrorCode, Pong
from maag.server.fleet.interface import Fleet, FleetParts, HostedGames
from maag.server.fleet.limits import FleetLimits, watch_tokens
from maag.server.fleet.links import Links, new_secret
from maag.server.fleet.member import Member
from maag.server.fleet.takeover import Takeover

if TYPE_CHECKING:
    from maag.protocol import Hello, Ping
    from maag.server.net.transport import Client

__all__ = ["DatabaseFleet", "SoloFleet", "build_fleet"]


def build_fleet(parts: FleetParts) -> Fleet:
    """The fleet `parts.config` asks for (`ServerConfig.fleet`)."""
    if parts.config.fleet:
        return DatabaseFleet(parts)
    if parts.config.fleet_ladder is not None:
        raise ValueError("a referee without a fleet (fleet=False) cannot serve a fleet ladder")
    return SoloFleet(parts)


class DatabaseFleet:
    """The fleet of referees on one database (see the module)."""

    def __init__(self, p: FleetParts) -> None:
        self.links: Links
        self.takeover = Takeover(p.config, server_id=p.server_id, storage=p.storage, keeper=p.keeper,
                                 lobby=p.lobby, seating=p.seating, rooms=p.rooms, watchers=p.watchers,
                                 stats=p.stats, spawn=p.spawn, violation=p.violation,
                                 link_address=lambda: self.links.address, tasks=p.tasks, fail=p.fail)
        self.limits = FleetLimits(p.config, server_id=p.server_id, storage=p.storage, lobby=p.lobby,
                                  seating=p.seating, stopping=p.stopping, violation=p.violation, drop=p.drop)
        self.links = Links(p.config, server_id=p.server_id, storage=p.storage, lobby=p.lobby,
                           seating=p.seating, rooms=p.rooms, spawn=p.spawn, stopping=p.stopping,
                           violation=p.violation)
        self.member = Member(p.config, server_id=p.server_id, storage=p.storage, lobby=p.lobby,
                             seating=p.seating, keeper=p.keeper, links=self.links, rooms=p.rooms,
                             spawn=p.spawn,
                             stopping=p.stopping, request_game=p.request_game)

    @property
    def link_address(self) -> str | None:
        return self.links.address

    def host_games(self, games: HostedGames) -> None:
        self.member.hosting = games
        self.takeover.resumed = self.member.resumed  # (a lost member's hosted seats start again here)

    async def listen(self, factory: Callable[[], asyncio.Protocol]) -> None:
        await self.links.listen(factory)

    def loops(self) -> list[Coroutine[Any, Any, Any]]:
        return [self.limits.watch_tokens(), self.takeover.run(), self.limits.run(), self.member.run(),
                self.links.run(), self.takeover.keep_session()]

    async def hand_over(self) -> None:
        self.links.stop()
        await self.takeover.hand_over()  # (with peers on the database; what is left is aborted)

    async def admit(self, c: Client, bot: str) -> bool:
        return await self.takeover.admit(c, bot)

    async def auth_delay(self, keys: list[str]) -> float:
        return await self.limits.auth_delay(keys)

    def new_secret(self) -> str | None:
        return new_secret() if self.links.address is not None else None

    def link_hello(self, c: Client, h: Hello) -> None:
        self.links.hello(c, h)

    def link_pinged(self, c: Client, m: Ping) -> None:
        self.links.pinged(c, m)

    async def find_seats(self, c: Client) -> None:
        await self.links.find(c, patient=True)

    def close_links(self, c: Client) -> None:
        self.links.close_all(c)


class SoloFleet:
    """A fleet of one process (see the module)."""

    link_address: str | None = None  # (no link listener: nothing links here)

    def __init__(self, p: FleetParts) -> None:
        self.parts = p

    def host_games(self, games: HostedGames) -> None:
        raise ValueError("a referee without a fleet (fleet=False) plays no fleet ladder's games")

    async def listen(self, factory: Callable[[], asyncio.Protocol]) -> None:
        return None

    def loops(self) -> list[Coroutine[Any, Any, Any]]:
        p = self.parts
        return [watch_tokens(p.config, p.storage, p.lobby, p.seating, p.violation, p.drop)]

    async def hand_over(self) -> None:
        return None  # (no one to hand the games to: the caller aborts them)

    async def admit(self, c: Client, bot: str) -> bool:
        return True  # (its games are here or nowhere)

    async def auth_delay(self, keys: list[str]) -> float:
        return self.parts.lobby.auth_delay(keys)

    def new_secret(self) -> str | None:
        return None

    def link_hello(self, c: Client, h: Hello) -> None:
        self.parts.violation(c, ErrorCode.UNEXPECTED_MESSAGE, "this referee takes no links")

    def link_pinged(self, c: Client, m: Ping) -> None:
        c.queue(Pong(id=m.id))  # (never called: no connection here is a link)
        c.flush()

    async def find_seats(self, c: Client) -> None:
        return None

    def close_links(self, c: Client) -> None:
        return None

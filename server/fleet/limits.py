"""The abuse limits that hold across a fleet of referees on one database: games per bot per
minute (the other referees' recent starts, refreshed every few seconds into the lobby's count)
and the delay after failed logins (counted in the database under the address and the name);
and tokens revoked on any referee, which close their connections on every one (`watch_tokens`).

The connections per bot are counted in the database by the keeper (`count_connection`); the
lobby keeps each limit locally as well, so that a database that is away never lifts one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from maag.protocol import ErrorCode
from maag.server.fleet.store import count_auth_failure, recent_starts

if TYPE_CHECKING:
    from maag.server.net.games import LiveGame
    from maag.server.net.lobby import Lobby
    from maag.server.net.model import ServerConfig
    from maag.server.net.seating import Seating
    from maag.server.net.transport import Client
    from maag.server.storage.base import AsyncStorage

__all__ = ["FleetLimits", "watch_tokens"]

LOG = logging.getLogger("maag.server.net.server")


class FleetLimits:
    """The fleet's count of games per minute and failed logins (see the module)."""

    def __init__(self, config: ServerConfig, *, server_id: str, storage: AsyncStorage, lobby: Lobby,
                 seating: Seating[LiveGame], stopping: Callable[[], bool],
                 violation: Callable[[Client, ErrorCode, str], None], drop: Callable[[Client], None]) -> None:
        """`violation`: an error sent to a connection; `drop`: a connection forgotten (its
        seats disconnected; the caller closes it)."""
        self.config, self.server_id, self.storage, self.lobby = config, server_id, storage, lobby
        self.seating = seating
        self.stopping, self.violation, self.drop = stopping, violation, drop
        self.refresh_s = min(5.0, config.lease_s / 3)
        """How often the other referees' game starts are read: the games-per-minute limit may
        be passed by the games they started within this last moment."""

    async def run(self) -> None:
        """Keep the lobby's view of the other referees' game starts current, until cancelled
        (read without a limit too: the reading forgets the starts older than a minute)."""
        while True:
            await self.refresh()
            await asyncio.sleep(self.refresh_s)

    async def refresh(self) -> None:
        try:
            rows = await self.storage.apply(recent_starts, self.server_id)
        except Exception as e:  # the database is away: the last view holds meanwhile
            LOG.debug("the fleet's game starts not read: %s", e)
            return
        now = time.monotonic()
        elsewhere: dict[str, list[float]] = {}
        for bot, ago in rows:
            elsewhere.setdefault(bot, []).append(now - ago)
        self.lobby.elsewhere = elsewhere
        if self.config.max_games_per_minute and not self.stopping():
            self.lobby.pair()  # a bot held back by starts that are now a minute old may play

    async def auth_delay(self, keys: list[str]) -> float:
        """Record a failed login under `keys` here and for the fleet; how long to wait before
        answering it (doubled for every failure under one of the keys, on any referee)."""
        try:
            n = await self.storage.apply(count_auth_failure, keys, self.config.auth_window_s)
        except Exception as e:
            LOG.debug("failed login not counted for the fleet: %s", e)
            n = 0
        return self.lobby.auth_delay(keys, n)

    async def watch_tokens(self) -> None:
        """Close the connections whose stored token has been revoked (`watch_tokens`)."""
        await watch_tokens(self.config, self.storage, self.lobby, self.seating, self.violation, self.drop)


async def watch_tokens(config: ServerConfig, storage: AsyncStorage, lobby: Lobby, seating: Seating[LiveGame],
                       violation: Callable[[Client, ErrorCode, str], None],
                       drop: Callable[[Client], None]) -> None:
    """Close the connections whose stored token has been revoked. Tokens are never cached
    by the server: each `hello` asks storage, and this loop asks again for the live
    connections every `token_check_s`, so a revocation made by any process on the same
    database takes effect on every server (a fleet's or one alone, fleet/fleets.py)."""
    while True:
        await asyncio.sleep(config.token_check_s)
        live = [c for c in lobby.clients if c.token_hash is not None and not c.closed]
        if not live:
            continue
        try:
            valid = await storage.valid_token_hashes(sorted({str(c.token_hash) for c in live}))
        except Exception as e:  # storage away: checked again when it is back
            LOG.debug("token check skipped: %s", e)
            continue
        for c in live:
            if c.token_hash not in valid and not c.closed:
                if any(not g.ending for _, g, _ in seating.seated(c)):
                    # A token replaced (`maag bot add NAME --replace`) while its bot plays:
                    # the games in progress go on to their end on this connection (closing
                    # it would lose them on time), but it gets no new game, and it is
                    # closed at the first check after they are over.
                    if seating.no_more_games(c):
                        LOG.warning("%s: its token was revoked; closing it once its games end", c)
                    continue
                LOG.warning("%s: its token was revoked; closing", c)
                violation(c, ErrorCode.AUTH_FAILED, "your token was revoked")
                drop(c)
                c.close()

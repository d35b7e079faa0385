"""An arena: an embedded referee server (`RefereeServer`, the real one, on 127.0.0.1) plus one
process per bot, in which a tournament or a cluster worker plays the games it is given.

Bots are processes that connect to the arena's port with a token made up for this run (kept
in memory only, never stored), started exactly as `maag match` starts them
(`maag.server.compete.match.BotProcess`): a bundled agent runs as `maag bot run AGENT`; an external
command is run through the shell with these placeholders and environment variables filled
in:

    {host} {port} {connect} {token} {concurrency}      MAAG_HOST MAAG_PORT MAAG_CONNECT MAAG_TOKEN
                                                         MAAG_CONCURRENCY MAAG_BOT

e.g. `--bot mine="python3 mybot.py --connect {connect} --token {token}"`. A bot given as a
package (`--bot mine=path/to/package`) is hosted instead: a fresh sandboxed process per game
(maag.server.hosting), with the limits of `host` (HostOptions.to_dict()). A bot process that
exits while the arena runs is restarted (its games in progress are lost by disconnect, as
the referee's policy says); after `max_restarts` exits the arena gives up with BotCrashed.

Storage: the arena writes games to the database given by URL. Several arenas (cluster
workers) may share one database: each referee's games are protected by its lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maag.engine import registry
from maag.server.compete.formats import BotSpec
from maag.server.compete.match import BotProcess, bot_absence
from maag.server.hosting.api import STORED_PREFIX, Host, HostedBot, HostOptions, hosted_bot, safe_name
from maag.server.net.server import GameSummary, RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.sandbox.package import is_package
from maag.server.storage.base import Storage, open_storage

__all__ = ["Arena", "BotCrashed", "bot_spec_text"]

LOG = logging.getLogger(__name__)

STARTUP_S = 60.0
"""How long a game waits for a bot process that has not connected yet (then it forfeits)."""


class BotCrashed(RuntimeError):
    """A bot process keeps exiting."""


def bot_spec_text(bot: BotSpec) -> str:
    """The bot as `maag match` names it: a bundled agent spec, or a command line (which
    `maag match` recognises by its whitespace; a bare program gets an `exec` in front), or
    the path of a bot package."""
    if bot.command is None:
        return bot.name
    cmd = bot.command.strip()
    if is_package(cmd) or cmd.startswith(STORED_PREFIX):
        return cmd  # a bot package (or a stored one): hosted in the sandbox
    return cmd if any(ch.isspace() for ch in cmd) else f"exec {cmd}"


_LOG_DIR: Path | None = None


def _default_log_dir() -> Path:
    """One temporary folder per process for the bot logs of arenas without a log_dir."""
    global _LOG_DIR
    if _LOG_DIR is None:
        _LOG_DIR = Path(tempfile.mkdtemp(prefix="maag-arena-"))
    return _LOG_DIR


class Arena:
    """An embedded referee and the processes of `bots`, each offering `slots` game slots.

    Use as `async with Arena(...) as arena: summary = await arena.play(...)`.
    """

    def __init__(self, bots: Sequence[BotSpec], db_url: str, *, game: str | None = None,
                 game_config: dict[str, Any] | None = None, tc: str = "1s", slots: int = 1,
                 log_dir: str | os.PathLike[str] | None = None,
                 max_restarts: int = 3, server_options: dict[str, Any] | None = None,
                 host: dict[str, Any] | None = None) -> None:
        self.bots = list(bots)
        self.db_url = db_url
        self.config = ServerConfig(host="127.0.0.1", port=0, game=game or registry.default(),
                                   game_config=dict(game_config or {}), tc=TimeControl.parse(tc),
                                   auto_pair=False, **(server_options or {}))
        self.slots = slots
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.max_restarts = max_restarts
        self.server: RefereeServer | None = None
        self.procs: dict[str, BotProcess] = {}
        self.host_options = HostOptions.from_dict(host or {})
        self.hosted: dict[str, HostedBot] = {}
        self.tokens: dict[str, str] = {}
        self.host: Host | None = None
        self._workdir: Path | None = None
        self._watch: asyncio.Task[None] | None = None
        self._failed: BotCrashed | None = None

    async def __aenter__(self) -> Arena:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        storage: Storage = open_storage(self.db_url)
        self.server = RefereeServer(self.config, storage)
        await self.server.start()
        log_dir = self.log_dir or _default_log_dir()
        log_dir.mkdir(parents=True, exist_ok=True)
        self._workdir = Path(tempfile.mkdtemp(prefix="maag-hosted-"))
        for bot in self.bots:
            token = "arena_" + secrets.token_urlsafe(18)
            self.server.add_token(token, bot.name)  # in memory only: never stored
            self.tokens[bot.name] = token
            hosted = hosted_bot(bot_spec_text(bot), bot.name, self.host_options, self._workdir, self.db_url)
            if hosted is not None:  # a package: a fresh sandboxed process per game
                self.hosted[bot.name] = hosted
                continue
            p = BotProcess(bot_spec_text(bot), bot.name, token, self.slots,
                           log_dir / f"{safe_name(bot.name)}.log", pass_env=self.host_options.pass_env)
            LOG.info("bot %s: %s", bot.name, p.spec)
            p.start(self.config.host, self.server.port)
            self.procs[bot.name] = p
        if self.hosted:
            self.host = Host(self.server, self.host_options, log_dir=log_dir)
            await self.host.prepare(list(self.hosted.values()))
        self._watch = asyncio.get_running_loop().create_task(self._watchdog())

    async def _watchdog(self) -> None:
        """Restart bot processes that exit; give up after max_restarts exits of one bot."""
        assert self.server is not None
        while True:
            await asyncio.sleep(0.2)
            for p in self.procs.values():
                if p.proc is not None and p.proc.poll() is not None:
                    p.exits += 1
                    LOG.warning("bot %s exited with code %s (%d exits)", p.name, p.proc.returncode, p.exits)
                    if p.exits > self.max_restarts:
                        self._failed = BotCrashed(f"bot {p.name!r} exited {p.exits} times (last exit code "
                                                  f"{p.proc.returncode}); its log {p.log_path} ends with:\n"
                                                  f"{p.log_tail()}")
                        for r in list(self.server.requests):
                            if p.name in r.seats and r.future is not None and not r.future.done():
                                r.future.set_exception(self._failed)
                        p.proc = None
                        continue
                    p.start(self.config.host, self.server.port)

    async def play(self, seat0: str, seat1: str, *, seed: int | None = None, match_id: str | None = None,
                   tags: dict[str, Any] | None = None) -> GameSummary:
        """Play one game (seat 0 moves first) and return its summary once it is stored."""
        assert self.server is not None
        if self._failed is not None:
            raise self._failed
        # A bot process without its connection (it hung up and lives on, or never connected)
        # loses its games by forfeit instead of holding the tournament (bot_absence).
        absence = bot_absence(self.server, startup_s=STARTUP_S)
        if self.host is not None and (seat0 in self.hosted or seat1 in self.hosted):
            return await self.host.play((seat0, seat1), [self.hosted.get(seat0), self.hosted.get(seat1)],
                                        [self.tokens[seat0], self.tokens[seat1]], match_id=match_id,
                                        seed=seed, tags=tags, absence=absence)
        fut = self.server.request_game(seat0, seat1, match_id=match_id, tags=tags, seed=seed, absence=absence)
        return await fut

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        if self.server is not None:
            await self.server.stop()
        await asyncio.get_running_loop().run_in_executor(None, self._stop_procs)
        if self.host is not None:
            self.host.close()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)

    def _stop_procs(self) -> None:
        for p in self.procs.values():
            p.stop()

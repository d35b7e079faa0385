"""A hosted bot for a tool that connects bots over TCP (the bot kit): the bot runs in its
sandbox with its socket pair as always, and the host relays that socket to an address."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from maag.server.hosting.options import HostedBot, HostOptions, sandbox_env
from maag.server.sandbox import cgroups
from maag.server.sandbox.jail import Jail, JailConfig

__all__ = ["RelayedJail", "launch_relayed"]


class RelayedJail:
    """A hosted bot for a tool that connects bots over TCP (the bot kit): the bot runs in its
    sandbox with its socket pair as always, and the host relays that socket to an address.
    Looks like a process: returncode, terminate(), kill(), wait()."""

    def __init__(self, jail: Jail, pumps: list[asyncio.Task[None]]) -> None:
        self.jail = jail
        self.pumps = pumps

    @property
    def returncode(self) -> int | None:
        return None if self.jail.proc is None else self.jail.proc.returncode

    def terminate(self) -> None:
        self.jail.kill()

    def kill(self) -> None:
        self.jail.kill()

    async def wait(self) -> int | None:
        rc = await self.jail.wait()
        for t in self.pumps:
            t.cancel()
        await self.jail.close()
        return rc


async def launch_relayed(bot: HostedBot, options: HostOptions, cg: cgroups.Cgroups | None, address: str,
                         token: str, log_path: Path, game: str) -> RelayedJail:
    """Start `bot` in its sandbox and relay its connection to `address` (HOST:PORT)."""
    ours, theirs = socket.socketpair()
    env = sandbox_env(bot, token, game, theirs.fileno(), options)
    jail = Jail(JailConfig(bot.argv, bot.folder, env, options.limits, threads=bot.threads,
                           extra_fds=[theirs.fileno()]), cg, log_path)
    try:
        await jail.start()
    finally:
        theirs.close()
    host, _, port = address.rpartition(":")
    r1, w1 = await asyncio.open_connection(sock=ours)
    r2, w2 = await asyncio.open_connection(host, int(port))

    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(1 << 16):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            dst.close()

    loop = asyncio.get_running_loop()
    return RelayedJail(jail, [loop.create_task(pump(r1, w2)), loop.create_task(pump(r2, w1))])

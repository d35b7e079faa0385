"""A bot whose connection is cut in the middle of its games connects again on its own (`maag
bot run --reconnect`, the SDK's `reconnect_s`) and goes on with them: the referee keeps its
seats for the grace period and announces the games again; every game ends by the rules,
none by disconnection."""

from __future__ import annotations

import asyncio
import contextlib
from asyncio.subprocess import Process
from collections.abc import AsyncIterator

from maag.server.net.server import RefereeServer
from maag.server.referee.clock import TimeControl
from maag.server.referee.policy import Policy

from .conftest import WAIT, MakeServer, spawn_agent, stop_process, token_for, until


class CuttingProxy:
    """A TCP proxy to the referee whose connections the test cuts at will (both ends
    closed at once, as a lost network would); it keeps accepting new ones."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.pairs: list[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = []
        self.accepted = 0
        self.server: asyncio.base_events.Server | None = None
        self.port = 0
        self.refuse_until = 0.0  # loop time before which new connections are closed at once
        self.held: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _handle(self, r1: asyncio.StreamReader, w1: asyncio.StreamWriter) -> None:
        if asyncio.get_running_loop().time() < self.refuse_until:
            w1.transport.abort()
            return
        self.accepted += 1
        r2, w2 = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.pairs.append((w1, w2))

        async def pump(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            if w not in self.held:  # a side the test keeps open is closed by its own timer
                w.close()

        await asyncio.gather(pump(r1, w2), pump(r2, w1), return_exceptions=True)

    def cut(self, referee_side_after: float = 0.0) -> None:
        """Reset every connection; the referee's side `referee_side_after` seconds later (a
        network that drops packets: the referee learns of the loss late)."""
        loop = asyncio.get_running_loop()
        for bot_side, referee_side in self.pairs:
            bot_side.transport.abort()  # a reset, no goodbye
            if referee_side_after > 0:
                self.held.add(referee_side)
                loop.call_later(referee_side_after, referee_side.transport.abort)
            else:
                referee_side.transport.abort()
        self.pairs.clear()

    def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()


@contextlib.asynccontextmanager
async def far_and_near(referee: MakeServer, *, grace_ms: float, games: int,
                       reconnect_s: float) -> AsyncIterator[tuple[RefereeServer, CuttingProxy, Process]]:
    """A referee, a cutting proxy in front of it, and two bundled agents: "far" plays through
    the proxy (30 ms a turn, so a game lasts long enough to be cut) and reconnects for up to
    `reconnect_s`; "near" connects directly. Yields the referee, the proxy and far's process;
    everything is stopped afterwards."""
    srv = await referee(game_config={"map": "a-tiny"}, tc=TimeControl.parse("2s"),
                        policy=Policy(disconnect_grace_ms=grace_ms))
    proxy = CuttingProxy(srv.port)
    await proxy.start()
    agent = ("mcts", "--param", "rollout_turns=1", "--budget-ms", "30", "--games", str(games))
    far = await spawn_agent(proxy.port, token_for(srv, "far"), *agent, "--reconnect", f"{reconnect_s:g}",
                            capture=True)
    near = await spawn_agent(srv.port, token_for(srv, "near"), *agent, capture=True)
    try:
        yield srv, proxy, far
    finally:
        proxy.close()
        await stop_process(far)
        await stop_process(near)


async def test_a_bot_cut_off_mid_game_reconnects_and_finishes_its_games(referee: MakeServer) -> None:
    async with far_and_near(referee, grace_ms=10_000, games=2, reconnect_s=10) as (srv, proxy, far):
        for i in range(2):
            fut = srv.request_game(*(("far", "near") if i == 0 else ("near", "far")))
            # Twice in each game, once some plies were played: the connection goes away.
            for cut in range(2):
                plies = 6 * (cut + 1)
                await until(lambda f=fut, n=plies: f.done() or any(len(g.session.log) > n  # type: ignore[misc]
                                                                   for g in srv.games.values()), 4 * WAIT)
                if fut.done():
                    break
                proxy.cut()
                await until(lambda f=fut: proxy.pairs != [] or f.done(), WAIT)  # type: ignore[misc]
            summary = await asyncio.wait_for(fut, 4 * WAIT)
            assert summary.reason in ("rules", "turn_limit"), summary
        _, err = await asyncio.wait_for(far.communicate(), WAIT)
        assert far.returncode == 0, err.decode()
        assert b"2 game(s)" in err and b"reconnecting" in err
        assert proxy.accepted >= 3  # the first connection and at least two reconnections
        games = srv.storage.storage.list_games(status="finished")
        assert len(games) == 2 and all(g.reason in ("rules", "turn_limit") for g in games)


async def test_a_game_the_referee_gave_up_during_the_outage_is_counted_lost(referee: MakeServer) -> None:
    """Away longer than the referee's grace: the game was forfeited meanwhile, so it is not
    announced again; the bot counts it lost by disconnection and goes on."""
    async with far_and_near(referee, grace_ms=100, games=1, reconnect_s=20) as (srv, proxy, far):
        fut = srv.request_game("far", "near")
        await until(lambda: any(len(g.session.log) > 4 for g in srv.games.values()), 4 * WAIT)
        proxy.refuse_until = asyncio.get_running_loop().time() + 1.5
        proxy.cut()
        summary = await asyncio.wait_for(fut, WAIT)
        assert summary.reason == "disconnect" and summary.winner == 1, summary
        _, err = await asyncio.wait_for(far.communicate(), 2 * WAIT)
        assert far.returncode == 0, err.decode()
        assert b"not given back after the reconnection" in err and b"1 game(s), score 0" in err


async def test_a_reconnection_waits_until_the_referee_sees_the_old_one_end(referee: MakeServer) -> None:
    """The referee learns of the lost connection a second after the bot: meanwhile the bot's
    new hello is refused (already_connected, one connection per bot), and it tries again."""
    async with far_and_near(referee, grace_ms=10_000, games=1, reconnect_s=10) as (srv, proxy, far):
        fut = srv.request_game("far", "near")
        await until(lambda: fut.done() or any(len(g.session.log) > 4 for g in srv.games.values()), 4 * WAIT)
        assert not fut.done()
        proxy.cut(referee_side_after=1.0)
        summary = await asyncio.wait_for(fut, 4 * WAIT)
        assert summary.reason in ("rules", "turn_limit"), summary
        _, err = await asyncio.wait_for(far.communicate(), WAIT)
        assert far.returncode == 0, err.decode()
        assert b"1 game(s)" in err
        assert proxy.accepted >= 3  # at least one hello refused while the old connection lived

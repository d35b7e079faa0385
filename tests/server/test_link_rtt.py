"""A linked seat's network time follows its bot: the referee a bot is connected to (the
member) reads the bot's round trip again while the bot plays a game hosted elsewhere, and
tells the host when it has changed (fleet/links.py, a link's `ping` `rtt:<µs>`), so that the
host charges the bot's clock with the network time it has now, not the one of the moment the
link opened. Two referees in this process on one PostgreSQL, real sockets, two bots of this
test.

Loopback has no delay to change and this machine's kernel has no netem: the bot's round trip
as the member sees it is raised by its connection's `extra_rtt_ms`, the term that
`Client.rtt_ms` adds to the kernel's estimate (a link's own use of it)."""

from __future__ import annotations

import asyncio
import random

from maag.engine import registry
from maag.protocol import (
    Act,
    Connection,
    ConnectionClosed,
    Error,
    GameStart,
    Greeting,
    Hello,
    Message,
    Pong,
    Role,
    Welcome,
    YourTurn,
    read_events,
)
from maag.server.fleet.links import RTT_READ_S
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import open_storage


class Bot:
    """A test bot on one connection: its messages in a queue; acts only when told."""

    def __init__(self, token: str, auto: random.Random | None = None) -> None:
        self.token, self.auto = token, auto  # auto: plays every your_turn at once, with this rng
        self.got: asyncio.Queue[Message | ConnectionClosed] = asyncio.Queue()
        self.seen: list[Message] = []

    async def connect(self, port: int) -> None:
        """Connect and say hello; again while the fleet still counts the bot's last connection
        (`already_connected`, until its referee has seen it close)."""
        while True:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
            self.conn = Connection(Role.CLIENT)
            self.got = asyncio.Queue()
            self.writer.write(self.conn.send(Greeting(encoding="msgpack")))
            self.writer.write(self.conn.send(Hello(name="t", token=self.token, games=registry.names(),
                                                   want_legal=True)))
            self.task = asyncio.ensure_future(self._read())
            first = await asyncio.wait_for(self.got.get(), 30)
            if isinstance(first, Welcome):
                return
            assert isinstance(first, (Error, ConnectionClosed)), first
            assert isinstance(first, ConnectionClosed) or first.code == "already_connected", first
            self.writer.close()
            self.task.cancel()
            await asyncio.sleep(0.05)

    async def _read(self) -> None:
        async for ev in read_events(self.reader, self.conn):
            if isinstance(ev, Message):
                self.seen.append(ev)
            if isinstance(ev, YourTurn) and self.auto is not None:
                self.act(ev, self.auto)
                continue
            if isinstance(ev, (Message, ConnectionClosed)):
                await self.got.put(ev)

    async def next(self, kind: type, game: str | None = None) -> Message:
        while True:
            ev = await asyncio.wait_for(self.got.get(), 30)
            assert not isinstance(ev, ConnectionClosed), "the referee closed the connection"
            if isinstance(ev, kind) and (game is None or getattr(ev, "game_id", None) == game):
                return ev

    def act(self, turn: YourTurn, rng: random.Random) -> None:
        assert turn.legal is not None
        self.writer.write(self.conn.send(Act(game_id=turn.game_id, action=rng.choice(turn.legal))))

    async def close(self) -> None:
        self.writer.close()
        self.task.cancel()


async def test_the_bots_changed_round_trip_reaches_the_host(postgres_db: str) -> None:
    st = open_storage(postgres_db)
    try:
        tokens = {"mover": st.add_bot("mover"), "other": st.add_bot("other")}
    finally:
        st.close()

    def config() -> ServerConfig:
        return ServerConfig(port=0, game="heroes", game_config={"map": "a-tiny"}, tc=TimeControl.parse("30s"),
                            lease_s=2, max_games_per_minute=0)

    host, member = RefereeServer(config(), open_storage(postgres_db)), RefereeServer(config(),
                                                                                   open_storage(postgres_db))
    await host.start()
    await member.start()
    rng = random.Random(3)
    mover, other = Bot(tokens["mover"]), Bot(tokens["other"], auto=random.Random(4))
    try:
        await mover.connect(host.port)
        await other.connect(host.port)
        gid = (await mover.next(GameStart)).game_id
        # The mover leaves for the member once it is to move: the member links its seat to
        # the host, where the game goes on.
        await mover.next(YourTurn, gid)
        await mover.close()
        mover = Bot(tokens["mover"])
        await mover.connect(member.port)
        turn = await mover.next(YourTurn, gid)  # through the link

        def link_at_host() -> float:
            [c] = [c for c in host.clients if c.link and c.bot == "mover" and not c.closing]
            return c.extra_rtt_ms

        here = next(c for c in member.clients if c.bot == "mover" and not c.closing)
        assert link_at_host() < 5.0  # loopback: what the member measured when the link opened
        here.extra_rtt_ms = 40.0  # the bot's network got slower (see the module)
        await asyncio.sleep(RTT_READ_S)
        mover.act(turn, rng)
        await mover.next(Message, gid)  # its result
        assert 40.0 <= link_at_host() < 45.0
        here.extra_rtt_ms = 40.3  # a change within the kernel's jitter: not sent
        turn = await mover.next(YourTurn, gid)
        await asyncio.sleep(RTT_READ_S)
        mover.act(turn, rng)
        await mover.next(Message, gid)
        assert 40.0 <= link_at_host() < 45.0
        assert not [m for m in mover.seen if isinstance(m, Pong)]  # the link's pings stay between referees
    finally:
        for b in (mover, other):
            await b.close()
        for srv in (member, host):
            await srv.stop()
            srv.storage.storage.close()

"""Connect addresses: HOST:PORT, unix:PATH and fd:N (an inherited, already connected socket,
as a sandboxed bot gets its referee connection). The forms and their errors; the client
over a socket pair and a Unix socket against a tiny peer speaking maag.protocol; and whole
games on a real referee by bot processes that hold nothing but an inherited fd: the SDK's
example-style bot and `maag bot run` with $MAAG_CONNECT=fd:N."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import pytest
from client_helpers import fd_to_referee, sandbox_env
from maag.clients import Bot as SdkBot
from maag.clients import (
    BotError,
    BotTerminatedError,
    Client,
    FdAddress,
    Limit,
    Observation,
    TcpAddress,
    TurnResult,
    UnixAddress,
    parse_address,
    run_bot,
)
from maag.protocol import NEED_DATA, Connection, ConnectionClosed, Greeting, Hello, Role, Welcome
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

WAIT = 60.0  # hang guard only


# ---- the forms --------------------------------------------------------------------------------

def test_address_forms() -> None:
    assert parse_address("example.org:7878") == TcpAddress("example.org", 7878) == ("example.org", 7878)
    assert parse_address("[::1]:80") == TcpAddress("::1", 80)
    assert parse_address(":9") == TcpAddress("127.0.0.1", 9)
    assert parse_address("fd:3") == FdAddress(3)
    assert parse_address("fd:0") == FdAddress(0)
    assert parse_address("unix:/run/maag/bot.sock") == UnixAddress("/run/maag/bot.sock")
    assert parse_address("unix:rel/a:b") == UnixAddress("rel/a:b")
    assert parse_address("[unix]:80") == TcpAddress("unix", 80)  # a host really named unix
    for text in ("example.org:7878", "[::1]:80", "fd:3", "unix:/x/y.sock", "[unix]:80", "[fd]:3"):
        assert str(parse_address(text)) == text
    fd12 = parse_address("fd:12")
    assert isinstance(fd12, FdAddress) and not isinstance(fd12, TcpAddress)


@pytest.mark.parametrize("text, why", [
    ("fd:", "fd:N needs"), ("fd:x", "fd:N needs"), ("fd:-1", "fd:N needs"), ("fd:3.0", "fd:N needs"),
    ("fd:\u0663", "fd:N needs"), ("fd: 3", "fd:N needs"), ("unix:", "unix:PATH needs"),
    ("unix:a\0b", "unix:PATH needs"), ("localhost", "HOST:PORT"), ("host:0", "HOST:PORT"),
    ("host:70000", "HOST:PORT"), ("", "unix:PATH or fd:N"),
])
def test_bad_addresses_are_refused_clearly(text: str, why: str) -> None:
    with pytest.raises(BotError, match=why):
        parse_address(text)


# ---- a tiny peer: greeting, hello, welcome, one game_over, close -------------------------------

class PeerLog:
    def __init__(self) -> None:
        self.got: list[object] = []
        self.eof = False


async def tiny_peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, log: PeerLog,
                    game_over: bool = True) -> None:
    """The server side of a login (maag.protocol's Connection), then, if `game_over`, closes;
    else waits for the client to close (log.eof)."""
    conn = Connection(Role.SERVER)

    async def next_event() -> object:
        while True:
            ev = conn.next_event()
            if ev is not NEED_DATA:
                log.got.append(ev)
                return ev
            conn.receive_data(await reader.read(65536))

    assert isinstance(await next_event(), Greeting)
    assert isinstance(await next_event(), Hello)
    writer.write(conn.send(Welcome(bot="b", server="tiny", max_frame=1 << 20)))
    await writer.drain()
    if game_over:
        writer.close()
        return
    log.eof = isinstance(await next_event(), ConnectionClosed)
    writer.close()


class EndTurnBot(SdkBot):
    games = ("nim",)

    def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
        return TurnResult([{"type": "end_turn"}])


async def test_fd_address_over_a_socketpair_and_the_client_owns_the_fd() -> None:
    ours, theirs = socket.socketpair()
    fd = ours.detach()  # the client takes the descriptor over, as a bot inheriting it does
    log = PeerLog()
    reader, writer = await asyncio.open_connection(sock=theirs)
    peer = asyncio.create_task(tiny_peer(reader, writer, log, game_over=False))
    client = Client(EndTurnBot, token="tok", name="fd-bot")
    welcome = await asyncio.wait_for(client.connect(f"fd:{fd}"), WAIT)
    assert welcome.server == "tiny"
    hello = log.got[1]
    assert isinstance(hello, Hello) and hello.token == "tok" and hello.games == ("nim",)
    await client.close()
    await asyncio.wait_for(peer, WAIT)
    assert log.eof, "the peer saw the client close the inherited socket"
    with pytest.raises(OSError):
        os.fstat(fd)  # closed by the client (nothing else in this test opens descriptors)


async def test_unix_address(tmp_path: Path) -> None:
    path = tmp_path / "ref.sock"
    log = PeerLog()
    server = await asyncio.start_unix_server(lambda r, w: tiny_peer(r, w, log), str(path))
    try:
        client = Client(EndTurnBot, token="tok")
        assert (await asyncio.wait_for(client.connect(f"unix:{path}"), WAIT)).server == "tiny"
        stats = await asyncio.wait_for(client.run(), WAIT)
        assert stats.games == [] and isinstance(log.got[1], Hello)
        # an Address object works as well as its text
        client = Client(EndTurnBot, token="tok")
        assert (await asyncio.wait_for(client.connect(UnixAddress(str(path))), WAIT)).server == "tiny"
        await client.close()
    finally:
        server.close()
        await server.wait_closed()
    with pytest.raises(BotTerminatedError, match=r"cannot connect to unix:.*missing\.sock"):
        await Client(EndTurnBot, token="tok").connect(f"unix:{tmp_path / 'missing.sock'}", timeout=5)


async def test_fd_that_is_no_stream_socket_is_a_clear_error_and_is_left_open() -> None:
    r, w = os.pipe()
    d1, d2 = socket.socketpair(type=socket.SOCK_DGRAM)
    try:
        with pytest.raises(BotError, match=f"fd:{r} is not a socket"):
            await Client(EndTurnBot, token="t").connect(f"fd:{r}")
        with pytest.raises(BotError, match=f"fd:{d1.fileno()} is not a stream socket"):
            await Client(EndTurnBot, token="t").connect(FdAddress(d1.fileno()))
        os.fstat(r)  # still open: not the client's to close
        assert d1.type == socket.SOCK_DGRAM and d1.fileno() >= 0
        d1.send(b"x")
        assert d2.recv(1) == b"x"
    finally:
        os.close(r)
        os.close(w)
        d1.close()
        d2.close()
    with pytest.raises(BotError, match="fd:999999: no such open file descriptor"):
        await Client(EndTurnBot, token="t").connect("fd:999999")
    with pytest.raises(BotError, match="fd:N needs"):
        await Client(EndTurnBot, token="t").connect("fd:three")


# ---- whole games on a real referee, the bots holding only an inherited socket -------------------

SDK_BOT = """
import os, random
from maag.clients import Bot, TurnResult, run_bot_blocking

class RandomBot(Bot):
    games = ("nim",)
    want_legal = True
    def choose_turn(self, observation, limit):
        return TurnResult([random.choice(observation.legal)])

stats = run_bot_blocking(RandomBot, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"], stop_after=1)
print("games", len(stats.games), "scores", [g.score for g in stats.games])
"""


async def test_bot_processes_play_a_referee_game_over_inherited_fds(tmp_path: Path) -> None:
    srv = RefereeServer(ServerConfig(port=0, auto_pair=False, game="nim", tc=TimeControl.parse("2s")),
                        SQLiteStorage(tmp_path / "referee.sqlite3"))
    await srv.start()
    srv.add_token("sdk-token", "sdk")
    srv.add_token("agent-token", "agent")
    procs: list[asyncio.subprocess.Process] = []
    relays: list[asyncio.Task[None]] = []
    try:
        sock1, relay1 = await fd_to_referee(srv.port)
        sock2, relay2 = await fd_to_referee(srv.port)
        relays += [relay1, relay2]
        (tmp_path / "scratch").mkdir()
        pkg = tmp_path / "pkg"
        pkg.mkdir()
        pkg.chmod(0o555)  # the bot's read-only package folder is its working folder
        for sock, args, token, bot in (
            (sock1, ["-c", SDK_BOT], "sdk-token", "sdk"),
            (sock2, ["-m", "maag.server", "bot", "run", "random", "--games", "1"], "agent-token", "agent"),
        ):
            fd = sock.fileno()
            procs.append(await asyncio.create_subprocess_exec(
                sys.executable, *args, cwd=pkg, pass_fds=(fd,),
                env=sandbox_env(tmp_path / "scratch", f"fd:{fd}", token, bot),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
            sock.close()  # the bot holds the only copy now: its exit closes the connection
        summary = await asyncio.wait_for(srv.request_game("sdk", "agent"), WAIT)
        assert summary.reason == "rules", summary
        outs = [await asyncio.wait_for(p.communicate(), WAIT) for p in procs]
        for p, (_, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err.decode()[-3000:]
        assert outs[0][0].decode().split()[:2] == ["games", "1"], outs[0]
        assert "1 game(s)" in outs[1][1].decode(), outs[1]
    finally:
        for p in procs:
            if p.returncode is None:
                p.kill()
                await p.wait()
        for t in relays:
            t.cancel()
        await srv.stop()
        (tmp_path / "pkg").chmod(0o755)


async def test_run_bot_over_a_unix_socket_on_a_real_referee(tmp_path: Path) -> None:
    """A referee reached through a Unix socket (relayed to its TCP port), the bot in-process."""
    srv = RefereeServer(ServerConfig(port=0, auto_pair=False, game="nim", tc=TimeControl.parse("2s")),
                        SQLiteStorage(tmp_path / "referee.sqlite3"))
    await srv.start()
    srv.add_token("a-token", "a")
    srv.add_token("b-token", "b")

    async def relay(r1: asyncio.StreamReader, w1: asyncio.StreamWriter) -> None:
        r2, w2 = await asyncio.open_connection("127.0.0.1", srv.port)

        async def pump(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            while data := await r.read(65536):
                w.write(data)
                await w.drain()

        try:
            await asyncio.wait([asyncio.ensure_future(pump(r1, w2)), asyncio.ensure_future(pump(r2, w1))],
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            w1.close()
            w2.close()

    path = tmp_path / "referee.sock"
    unix = await asyncio.start_unix_server(relay, str(path))

    class LegalBot(SdkBot):
        games = ("nim",)
        want_legal = True

        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            assert observation.legal
            return TurnResult([observation.legal[0]])

    try:
        a = asyncio.create_task(run_bot(LegalBot, f"unix:{path}", token="a-token", stop_after=1))
        b = asyncio.create_task(run_bot(LegalBot, UnixAddress(str(path)), token="b-token", stop_after=1))
        while sum(c.bot in ("a", "b") for c in srv.clients) < 2:
            assert not a.done() and not b.done(), (a, b)
            await asyncio.sleep(0.02)
        summary = await asyncio.wait_for(srv.request_game("a", "b"), WAIT)
        assert summary.reason == "rules"
        for stats in await asyncio.wait_for(asyncio.gather(a, b), WAIT):
            [record] = stats.games
            assert record.reason == "rules" and record.score is not None
    finally:
        unix.close()
        await srv.stop()

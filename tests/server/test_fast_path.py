"""The transport's fast path for plain `act` and `turn` messages (`Client._plain`) changes no
byte: random games played through the referee with it and without it (the bots' choices
seeded alike, unusual messages among them) give every seat the same frames, in both
framings, and the same stored games (in-process: see `play`)."""

from __future__ import annotations

import asyncio
import json
import random
import struct
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.net.transport import Client
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

# -- the driver: a referee in-process, without sockets ---------------------------------------
# Each bot is a `transport.Client` fed bytes by the test and writing into a `Wire` (a stand-in
# asyncio transport that keeps every byte). Bots play by a seeded script, so that two runs
# (the fast path on and off) can be compared frame by frame; the same driver times the
# referee's Python per message (`play(timer=...)`: no system call in it).


class Wire(asyncio.Transport):
    """A transport that keeps what is written (and never blocks)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.data = bytearray()
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000 + self.n) if name == "peername" else default

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.data += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        pass


Policy = Callable[["Bot", dict[str, Any]], list[bytes]]
"""What a bot sends when it is asked to move: raw frames (built with `Bot.frame`)."""


class Bot:
    """One connection: its framing, its received frames (bytes and decoded)."""

    def __init__(self, server: RefereeServer, n: int, token: str, encoding: str, rng: random.Random) -> None:
        self.wire = Wire(n)
        self.client = Client(server)
        self.client.connection_made(self.wire)
        self.encoding = encoding
        self.rng = rng
        self.read = 0
        self.frames: list[bytes] = []
        self.client.data_received(f"MAAG 1 {encoding}\n".encode() + self.frame(
            {"type": "hello", "v": 1, "name": f"bot{n}", "token": token, "games": ["heroes"],
             "want_legal": True}))

    def frame(self, msg: Any) -> bytes:
        if self.encoding == "json":
            return json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        body = msgpack.packb(msg)
        return struct.pack(">I", len(body)) + body

    def received(self) -> list[dict[str, Any]]:
        """The messages written since the last call (their bytes kept in `frames`)."""
        out = []
        d = self.wire.data
        while True:
            if self.encoding == "json":
                end = d.find(b"\n", self.read)
                if end < 0:
                    break
                raw = bytes(d[self.read:end + 1])
                out.append(json.loads(raw))
            else:
                if len(d) - self.read < 4:
                    break
                n = struct.unpack_from(">I", d, self.read)[0]
                if len(d) - self.read < 4 + n:
                    break
                raw = bytes(d[self.read:self.read + 4 + n])
                out.append(msgpack.unpackb(raw[4:]))
            self.frames.append(raw)
            self.read += len(raw)
        return out


async def play(tmp: Path, policy: Policy, *, seed: int, games: int, encodings: tuple[str, str],
               fast: bool, timer: list[float] | None = None, max_messages: int = 100_000) -> list[Bot]:
    """`games` games between two bots (one game at a time, seeded), each move chosen by
    `policy`; returns the bots with every frame they received. `timer`, if given, gets the
    referee's thread time spent handling the bots' moves, and their count."""
    Client.fast_path = fast
    storage = SQLiteStorage(tmp / f"db-{fast}.sqlite3")
    tokens = [storage.add_bot(f"bot{i}") for i in range(2)]
    srv = RefereeServer(ServerConfig(port=0, tc=TimeControl.parse("inf"), seed=seed, max_rate=0,
                                     auth_delay_ms=0), storage)
    await srv.start()
    rng = random.Random(seed)
    bots = [Bot(srv, i, tokens[i], encodings[i], random.Random(rng.random())) for i in range(2)]
    finished = 0
    sent = 0
    try:
        deadline = time.monotonic() + 10
        while finished < games and sent < max_messages and time.monotonic() < deadline:
            await asyncio.sleep(0)  # (hellos, game starts and stores: storage's thread)
            moved = False
            for bot in bots:
                for m in bot.received():
                    if m["type"] == "game_over":
                        finished += 1
                    elif m["type"] == "your_turn" and finished < games:
                        data = b"".join(policy(bot, m))
                        t0 = time.thread_time()
                        bot.client.data_received(data)
                        if timer is not None:
                            timer[0] += time.thread_time() - t0
                            timer[1] += 1
                        sent += 1
                        moved = True
            if not moved:
                await asyncio.sleep(0.001)
    finally:
        await srv.stop()
        Client.fast_path = True
    for bot in bots:
        bot.received()
    return bots


def random_policy(p_bad: float = 0.0, p_turn: float = 0.0) -> Policy:
    """A bot that acts at random among the legal actions; with probability `p_turn` it sends
    a whole random prefix of legal actions as one `turn` instead (from its legal list: only
    the first is sure to be legal), and with `p_bad` something unusual (an illegal or
    malformed action, a plan past its end_turn, an `info` or `seat` field, a resignation)."""

    def choose(bot: Bot, m: dict[str, Any]) -> list[bytes]:
        rng = bot.rng
        legal = m["legal"]
        gid = m["game_id"]
        act = {"type": "act", "v": 1, "game_id": gid, "action": rng.choice(legal)}
        if rng.random() < p_bad:
            kind = rng.randrange(7)
            if kind == 0:
                act["action"] = {"type": "move", "from": [0, 0], "to": [8, 4]}
            elif kind == 1:
                act["action"] = {"type": "nonsense"}
            elif kind == 2:
                act["info"] = {"iterations": rng.randrange(1000), "time_ms": 1.5}
            elif kind == 3:
                act["seat"] = 1
            elif kind == 4:
                ends = [a for a in legal if a["type"] == "end_turn"]
                return [bot.frame({"type": "turn", "v": 1, "game_id": gid,
                                   "actions": ends + [rng.choice(legal)]})]
            elif kind == 5:
                return [bot.frame({"type": "resign", "v": 1, "game_id": gid})]
            else:  # two acts in one write: the second is not this seat's if the first ends its turn
                return [bot.frame(act), bot.frame({**act, "action": rng.choice(legal)})]
        elif rng.random() < p_turn:
            k = rng.randrange(1, 4)
            return [bot.frame({"type": "turn", "v": 1, "game_id": gid,
                               "actions": [rng.choice(legal) for _ in range(k)]})]
        return [bot.frame(act)]

    return choose


# -- the tests ---------------------------------------------------------------------------------

GAMES = 1  # (the seats of a next game depend on the order the bots are free in: timing)


def _game_of(frame: bytes, encoding: str) -> Any:
    m = json.loads(frame) if encoding == "json" else msgpack.unpackb(frame[4:])
    return m.get("game_id")


def _frames(bots: list[Bot], games: int) -> list[list[bytes]]:
    """Each bot's frames about the first `games` games (and none about a game the driver
    was not waiting for: the next game may start before the run stops)."""
    ids = {str(i) for i in range(1, games + 1)}
    return [[f for f in b.frames if _game_of(f, b.encoding) in ids | {None}] for b in bots]


def _stored(tmp: Path, fast: bool) -> list[dict[str, Any] | None]:
    """The replays of the first GAMES games, less what depends on the wall clock."""
    st_ = SQLiteStorage(tmp / f"db-{fast}.sqlite3")
    try:
        replays = [st_.get_replay(i) for i in range(1, GAMES + 1)]
    finally:
        st_.close()
    for r in replays:
        if r is not None:
            r.pop("clock", None)  # (thinking times)
            r["tags"].pop("Date", None)
            for a in r["actions"]:
                a.pop("t_ms", None)
                a.pop("think_ms", None)
    return replays


def _both(seed: int, encodings: tuple[str, str], p_bad: float, p_turn: float) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        runs = {}
        for fast in (True, False):
            bots = asyncio.run(play(tmp, random_policy(p_bad, p_turn), seed=seed, games=GAMES,
                                    encodings=encodings, fast=fast, max_messages=1500))
            runs[fast] = _frames(bots, GAMES)
        assert runs[True] == runs[False]
        assert sum(len(f) for f in runs[True]) >= 4  # (welcome, game_start, ...)
        stored = _stored(tmp, True)
        assert stored[0] is not None and stored == _stored(tmp, False)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), encodings=st.sampled_from([("msgpack", "msgpack"), ("msgpack", "json"),
                                                               ("json", "msgpack"), ("json", "json")]),
       p_bad=st.sampled_from([0.0, 0.02, 0.1]), p_turn=st.sampled_from([0.0, 0.5]))
def test_the_fast_path_changes_no_frame(seed: int, encodings: tuple[str, str], p_bad: float,
                                        p_turn: float) -> None:
    _both(seed, encodings, p_bad, p_turn)


def test_the_fast_path_takes_plain_acts() -> None:
    """It is taken (not only equal because nothing took it): a plain act is never decoded
    into a message."""
    from maag.protocol import Connection

    taken = []
    orig = Connection.plain

    def spy(self: Connection, data: bytes, pos: int = 0) -> Any:
        p = orig(self, data, pos)
        taken.append(p is not None)
        return p

    Connection.plain = spy  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as d:
            asyncio.run(play(Path(d), random_policy(), seed=3, games=1, encodings=("msgpack", "msgpack"),
                             fast=True))
    finally:
        Connection.plain = orig  # type: ignore[method-assign]
    assert taken and sum(taken) >= 0.9 * len(taken)

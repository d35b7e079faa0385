"""The referee's one path for an action: every act, turn and resignation, read by its bytes
(`Connection.plain`, the plain reader) or by the general reader, becomes a `Play` handed to
`Acts.act`, and the replies are written by each connection's `Writer` (templates on
msgpack). The plain reader changes nothing anyone sees: random games of every registered
game played through the referee with it and without it (the bots' choices seeded alike,
unusual messages among them: illegal
and malformed actions, plans past their end, info and seat fields, resignations, two
messages in one write, a seat whose connection drops) give every seat the same frames, in
every pair of framings, the same stored games, the same calls of the watchers and of the
host's turn hook, and the same counts (in-process: see `play`), whether a bot speaks protocol
version 1 or 2 and hears the other seat's actions one `event` each or once a turn
(`turn_events`). The suite's checked mode compares each frame written from templates with
the general encoding besides, and every play is shown to take the one function (a late one
and one of a seat linked from another referee of the fleet among them)."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import struct
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maag.engine import registry
from maag.server.net.server import RefereeServer, ServerConfig
from maag.server.net.transport import Client
from maag.server.referee.clock import TimeControl
from maag.server.storage.base import SQLiteStorage

GAMES = registry.names()

# -- the driver: a referee in-process, without sockets ---------------------------------------
# Each bot is a `transport.Client` fed bytes by the test and writing into a `Wire` (a stand-in
# asyncio transport that keeps every byte). Bots play by a seeded script, so that two runs
# (the plain reader on and off) can be compared frame by frame; the same driver times the
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


DROP = b"drop the other seat's connection"
"""In what a policy returns: the driver closes the other bot's connection there."""


class Bot:
    """One connection: its framing, its received frames (bytes and decoded)."""

    def __init__(self, server: RefereeServer, n: int, token: str, encoding: str, rng: random.Random,
                 game: str, hear: str = "v1") -> None:
        """`hear`: "v1" (protocol version 1), "action" or "turn" (version 2, its hello's `events`)."""
        self.wire = Wire(n)
        self.client = Client(server)
        self.client.connection_made(self.wire)
        self.encoding = encoding
        self.rng = rng
        self.read = 0
        self.gone = False
        self.seats: dict[str, int] = {}  # game id -> the seat (1 or 2) this bot holds
        self.frames: list[bytes] = []
        self.v = 1 if hear == "v1" else 2
        hello = {"type": "hello", "v": self.v, "name": f"bot{n}", "token": token, "games": [game],
                 "want_legal": True}
        if hear != "v1":
            hello["events"] = hear
        self.client.data_received(f"MAAG {self.v} {encoding}\n".encode() + self.frame(hello))

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
            if out[-1]["type"] == "game_start":
                self.seats[out[-1]["game_id"]] = out[-1]["seat"]
        return out


@dataclass
class Run:
    """What one run showed: each bot's frames, the watchers' and the turn hook's calls, the
    server's counts."""

    bots: list[Bot]
    changes: list[tuple[Any, ...]] = field(default_factory=list)
    prompts: list[tuple[int, int]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)


async def play(tmp: Path, policy: Policy, *, seed: int, games: int, encodings: tuple[str, str],
               fast: bool, game: str = "heroes", timer: list[float] | None = None,
               max_messages: int = 100_000, tc: str = "inf", hears: tuple[str, str] = ("v1", "v1")) -> Run:
    """`games` games of `game` between two bots, each asked for by a request with a turn
    hook (one at a time, seeded), each move chosen by `policy`; returns the run. `timer`, if
    given, gets the referee's thread time spent handling the bots' moves, and their count.
    Ends when the games are over, or when nothing has happened for a while (a seat whose
    connection dropped is waited for)."""
    Client.plain_reader = fast
    storage = SQLiteStorage(tmp / f"db-{fast}.sqlite3")
    tokens = [storage.add_bot(f"bot{i}") for i in range(2)]
    srv = RefereeServer(ServerConfig(port=0, tc=TimeControl.parse(tc), seed=seed, max_rate=0,
                                     auth_delay_ms=0, game=game, auto_pair=False), storage)
    await srv.start()
    rng = random.Random(seed)
    run = Run([Bot(srv, i, tokens[i], encodings[i], random.Random(rng.random()), game, hears[i])
               for i in range(2)])
    srv.watch(lambda ch: run.changes.append((ch.kind, ch.session.game_id, len(ch.session.log),
                                             ch.session.finished, None if ch.summary is None else
                                             (ch.summary.winner, ch.summary.reason, ch.summary.plies))))
    for i in range(games):
        srv.request_game("bot0", "bot1", seed=seed + i,
                         on_prompt=lambda seat, i=i: run.prompts.append((i, seat)))
    finished = 0
    sent = 0
    idle = 0
    try:
        deadline = time.monotonic() + 20
        # (Once a seat's connection is gone, its game waits for it: the run ends when the
        # other seat has nothing left to do.)
        while (finished < games and sent < max_messages and time.monotonic() < deadline
               and not (idle > 100 and any(b.gone for b in run.bots))):
            await asyncio.sleep(0)  # (hellos, game starts and stores: storage's thread)
            moved = False
            for n, bot in enumerate(run.bots):
                for m in bot.received():
                    if m["type"] == "game_over":
                        finished += n == 0  # (both seats are told)
                    elif m["type"] == "your_turn" and finished < games and not bot.gone:
                        frames = policy(bot, m)
                        if DROP in frames:
                            other = run.bots[1 - n]
                            if not other.gone:
                                other.gone = True
                                other.client.connection_lost(None)
                            frames = [f for f in frames if f is not DROP]
                        data = b"".join(frames)
                        t0 = time.thread_time()
                        bot.client.data_received(data)
                        if timer is not None:
                            timer[0] += time.thread_time() - t0
                            timer[1] += 1
                        sent += 1
                        moved = True
            idle = 0 if moved else idle + 1
            if not moved:
                await asyncio.sleep(0.001)
    finally:
        await srv.stop()
        Client.plain_reader = True
    for bot in run.bots:
        bot.received()
    run.stats = {k: srv.stats[k] for k in ("messages_in", "messages_out", "actions", "errors_sent",
                                           "games_started", "games_finished")}
    return run


def random_policy(p_bad: float = 0.0, p_turn: float = 0.0) -> Policy:
    """A bot that acts at random among the legal actions; with probability `p_turn` it sends
    a whole random prefix of legal actions as one `turn` instead (from its legal list: only
    the first is sure to be legal), and with `p_bad` something unusual (an illegal or
    malformed action, a plan past its end_turn, an `info` or `seat` field, a resignation,
    two messages in one write, the other seat's connection dropped before its act)."""

    def choose(bot: Bot, m: dict[str, Any]) -> list[bytes]:
        rng = bot.rng
        legal = m["legal"]
        gid = m["game_id"]
        act = {"type": "act", "v": bot.v, "game_id": gid, "action": rng.choice(legal)}
        if rng.random() < p_bad:
            kind = rng.randrange(8)
            if kind == 0:
                act["action"] = {"type": "move", "from": [0, 0], "to": [8, 4]}
            elif kind == 1:
                act["action"] = {"type": "nonsense"}
            elif kind == 2:
                act["info"] = {"iterations": rng.randrange(1000), "time_ms": 1.5}
            elif kind == 3:  # (its own seat, named: a wrong one would get no your_turn again)
                act["seat"] = bot.seats.get(gid, 1)
            elif kind == 4:
                ends = [a for a in legal if a["type"] == "end_turn"]
                return [bot.frame({"type": "turn", "v": bot.v, "game_id": gid,
                                   "actions": ends + [rng.choice(legal)]})]
            elif kind == 5:
                return [bot.frame({"type": "resign", "v": bot.v, "game_id": gid})]
            elif kind == 6:  # two acts in one write: the second is not this seat's if the first ends its turn
                return [bot.frame(act), bot.frame({**act, "action": rng.choice(legal)})]
            else:
                return [DROP, bot.frame(act)]
        elif rng.random() < p_turn:
            k = rng.randrange(1, 4)
            return [bot.frame({"type": "turn", "v": bot.v, "game_id": gid,
                               "actions": [rng.choice(legal) for _ in range(k)]})]
        return [bot.frame(act)]

    return choose


# -- the tests ---------------------------------------------------------------------------------


def _stored(tmp: Path, fast: bool, games: int) -> list[dict[str, Any] | None]:
    """The replays of the games, less what depends on the wall clock."""
    st_ = SQLiteStorage(tmp / f"db-{fast}.sqlite3")
    try:
        replays = [st_.get_replay(i) for i in range(1, games + 1)]
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


def _both(game: str, seed: int, encodings: tuple[str, str], p_bad: float, p_turn: float,
          games: int = 2, hears: tuple[str, str] = ("v1", "v1")) -> Run:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        runs = {}
        for fast in (True, False):
            runs[fast] = asyncio.run(play(tmp, random_policy(p_bad, p_turn), seed=seed, games=games,
                                          game=game, encodings=encodings, fast=fast, max_messages=600,
                                          hears=hears))
        on, off = runs[True], runs[False]
        assert [b.frames for b in on.bots] == [b.frames for b in off.bots]
        for bot, hear in zip(on.bots, hears, strict=True):  # (each told as it asked)
            told = [_kind(bot, f) for f in bot.frames]
            assert ("event", "action") not in told if hear == "turn" else "turn_events" not in told, told
            assert {_version(bot, f) for f in bot.frames} == {bot.v}
        assert sum(len(b.frames) for b in on.bots) >= 4  # (welcome, game_start, ...)
        assert (on.changes, on.prompts, on.stats) == (off.changes, off.prompts, off.stats)
        assert on.prompts and on.stats["actions"] > 0
        stored = _stored(tmp, True, games)
        assert stored[0] is not None and stored == _stored(tmp, False, games)
        return on


def _decoded(bot: Bot, frame: bytes) -> dict[str, Any]:
    return dict(json.loads(frame) if bot.encoding == "json" else msgpack.unpackb(frame[4:]))


def _kind(bot: Bot, frame: bytes) -> Any:
    m = _decoded(bot, frame)
    return (m["type"], m["kind"]) if m["type"] == "event" else m["type"]


def _version(bot: Bot, frame: bytes) -> int:
    return int(_decoded(bot, frame)["v"])


ENCODINGS = st.sampled_from([("msgpack", "msgpack"), ("msgpack", "json"), ("json", "msgpack"),
                             ("json", "json")])
HEARS = st.sampled_from(["v1", "action", "turn"])


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), encodings=ENCODINGS, p_bad=st.sampled_from([0.0, 0.02, 0.1]),
       p_turn=st.sampled_from([0.0, 0.5]), hears=st.tuples(HEARS, HEARS))
def test_the_plain_reader_changes_nothing_anyone_sees(game: str, seed: int, encodings: tuple[str, str],
                                                      p_bad: float, p_turn: float,
                                                      hears: tuple[str, str]) -> None:
    _both(game, seed, encodings, p_bad, p_turn, hears=hears)


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_that_hears_turns_gets_them_by_either_reader(game: str) -> None:
    """Both bots ask for turn events (msgpack, then JSON): the same frames either way, and
    each hears the other's actions in `turn_events` only."""
    for encodings in (("msgpack", "msgpack"), ("json", "msgpack")):
        on = _both(game, 7, encodings, 0.02, 0.3, hears=("turn", "turn"))
        for bot in on.bots:
            assert "turn_events" in [_kind(bot, f) for f in bot.frames]


@pytest.mark.parametrize("game", GAMES)
def test_plain_acts_and_turns_are_read_by_their_bytes_and_answered_from_templates(game: str) -> None:
    """The plain reader is taken (not only equal because nothing took it): a plain act or
    turn of the seat to move is never decoded into a message, and its replies are written
    from templates (never through `Connection.send`, the general encoder)."""
    from maag.protocol import Connection, GameEvent, Result, Writer, YourTurn

    taken: list[bool] = []
    written: list[int] = []
    general: list[str] = []
    plain, your_turn, reply, send = Connection.plain, Writer.your_turn, Writer.reply, Connection.send

    def spy(self: Connection, data: bytes, pos: int = 0) -> Any:
        p = plain(self, data, pos)
        taken.append(p is not None)
        return p

    def spy_turn(self: Writer, *args: Any) -> Any:
        written.append(1)
        return your_turn(self, *args)

    def spy_reply(self: Writer, *args: Any) -> Any:  # (a result and a your_turn)
        written.append(1)
        return reply(self, *args)

    def spy_send(self: Connection, m: Any) -> Any:
        if type(m) in (Result, GameEvent, YourTurn):
            general.append("refused" if getattr(m, "error", None) is not None else m.TYPE)
        return send(self, m)

    Connection.plain = spy  # type: ignore[method-assign]
    Writer.your_turn = spy_turn  # type: ignore[method-assign]
    Writer.reply = spy_reply  # type: ignore[method-assign]
    Connection.send = spy_send  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as d:
            run = asyncio.run(play(Path(d), random_policy(p_turn=0.3), seed=3, games=1, game=game,
                                   encodings=("msgpack", "msgpack"), fast=True, max_messages=400))
    finally:
        Connection.plain = plain  # type: ignore[method-assign]
        Writer.your_turn = your_turn  # type: ignore[method-assign]
        Writer.reply = reply  # type: ignore[method-assign]
        Connection.send = send  # type: ignore[method-assign]
    taken = taken[2:]  # (the hellos)
    assert taken and sum(taken) >= 0.9 * len(taken)
    assert len(written) >= 0.5 * len(taken)  # (turns of random legal actions: some are illegal)
    # Through the general encoder: the game's first your_turn, and those after a refusal.
    assert general.count("your_turn") <= 1 + general.count("refused"), general
    assert run.stats["errors_sent"] == 0


@pytest.mark.parametrize("game", ["heroes", "nim"])
def test_every_act_turn_and_resignation_takes_the_one_function(game: str) -> None:
    """Every act, turn and resignation a bot sends reaches its game through `Acts.act`, once,
    however it is read (by its bytes or by the general reader) and in either framing: plain
    ones, illegal and malformed ones, plans past their end, `info` and `seat` fields, two in
    one write, resignations, acts after the game ended; and the game's session is entered
    once per play (`GameSession.act` or `resign`), never through `submit`."""
    from maag.server.net.acts import Acts
    from maag.server.referee.session import GameSession

    calls = {"games": 0, "session": 0, "submit": 0}
    sent = [0]
    g_act, s_act, s_resign, s_submit = Acts.act, GameSession.act, GameSession.resign, GameSession.submit

    def count(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kw: Any) -> Any:
            calls[key] += 1
            return fn(*args, **kw)
        return counted

    inner = random_policy(p_bad=0.15, p_turn=0.3)

    def policy(bot: Bot, m: dict[str, Any]) -> list[bytes]:
        frames = inner(bot, m)
        sent[0] += sum(f is not DROP for f in frames)
        return frames

    Acts.act = count("games", g_act)  # type: ignore[method-assign]
    GameSession.act = count("session", s_act)  # type: ignore[method-assign]
    GameSession.resign = count("session", s_resign)  # type: ignore[method-assign]
    GameSession.submit = count("submit", s_submit)  # type: ignore[method-assign]
    try:
        for encodings, reader in ((("msgpack", "msgpack"), True), (("json", "msgpack"), True),
                                  (("msgpack", "json"), False)):
            with tempfile.TemporaryDirectory() as d:
                asyncio.run(play(Path(d), policy, seed=5, games=2, game=game, encodings=encodings,
                                 fast=reader, max_messages=300, hears=("turn", "action")))
    finally:
        Acts.act = g_act  # type: ignore[method-assign]
        GameSession.act, GameSession.resign, GameSession.submit = s_act, s_resign, s_submit  # type: ignore[method-assign]
    assert sent[0] > 50 and calls["games"] == sent[0], (calls, sent)
    assert 0.5 * calls["games"] <= calls["session"] <= calls["games"] and calls["submit"] == 0, calls


@pytest.mark.parametrize("tc", ["2s", "1s+100ms", "3/5+1,bank=2s"])
def test_the_templates_with_a_clock(tc: str) -> None:
    """With a time control the clocks' numbers differ from run to run, so the templates are
    compared with the general encoder frame by frame in one run: the suite's checked mode
    builds the general message beside each frame a `Writer` writes from templates and refuses
    any difference (an internal error, which the bots would be sent)."""
    from maag.protocol import check_built_messages

    assert check_built_messages()
    with tempfile.TemporaryDirectory() as d:
        run = asyncio.run(play(Path(d), random_policy(p_turn=0.3), seed=11, games=2,
                               encodings=("msgpack", "msgpack"), fast=True, max_messages=500, tc=tc))
    decoded = [msgpack.unpackb(f[4:]) for b in run.bots for f in b.frames]
    assert not [m for m in decoded if m["type"] == "error" and m["code"] != "shutting_down"]
    assert [m for m in decoded if m["type"] == "your_turn" and m["time_left_ms"] < 2**31 - 1]


def test_a_linked_seat_and_a_late_act_take_the_one_function() -> None:
    """The same for a seat linked from another referee of the fleet (fleet/links.py) and for
    an act that comes after its turn's time ran out: two referees on one database in this
    process, the host of a game of nim and a member; bot 0 (seat 2) leaves the host at the
    game's start and says hello to the member (JSON lines), which links its seat there. Each
    of its plays is handed to `Acts.act` once by the member (forwarded, as its message) and
    once by the host (to the session); the host's session is entered once per play. Each
    bot's first act comes after its time ran out (the referee waits `lag` more before it
    ends the turn itself): refused with `timeout` and both seats told, by either referee."""
    from maag.server.net.acts import Acts
    from maag.server.referee.session import GameSession

    calls: dict[Acts, int] = {}
    entered = [0]
    g_act, s_act, s_resign, s_submit = Acts.act, GameSession.act, GameSession.resign, GameSession.submit

    def counted_act(self: Acts, *args: Any) -> Any:
        calls[self] = calls.get(self, 0) + 1
        return g_act(self, *args)

    def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
        def inner(*args: Any, **kw: Any) -> Any:
            entered[0] += 1
            return fn(*args, **kw)
        return inner

    turn_s = 0.3
    Told = list[list[dict[str, Any]]]

    async def run(tmp: Path) -> tuple[RefereeServer, RefereeServer, list[int], Told]:
        storage = SQLiteStorage(tmp / "db.sqlite3")
        tokens = [storage.add_bot(f"bot{i}") for i in range(2)]
        cfg: dict[str, Any] = {"port": 0, "tc": TimeControl.parse(f"{turn_s}s,lag=5s"), "seed": 1,
                               "max_rate": 0, "auth_delay_ms": 0, "game": "nim", "auto_pair": False,
                               "host": "127.0.0.1"}
        host = RefereeServer(ServerConfig(**cfg), storage)
        member = RefereeServer(ServerConfig(**cfg), SQLiteStorage(tmp / "db.sqlite3"))
        await host.start()
        await member.start()
        rng = random.Random(3)
        bots = [Bot(host, i, tokens[i], "msgpack", random.Random(rng.random()), "nim") for i in range(2)]
        done = host.request_game("bot1", "bot0", seed=5)
        sent = [0, 0]
        told: Told = [[], []]
        late = [True, True]
        asked: list[dict[str, Any] | None] = [None, None]
        try:
            deadline = time.monotonic() + 30
            while not done.done() and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
                for n, bot in enumerate(list(bots)):
                    for m in bot.received():
                        told[n].append(m)
                        if m["type"] == "game_start" and bot.client.server is host and n == 0:
                            bot.client.connection_lost(None)  # (left the host: its seat waits)
                            bots[0] = Bot(member, 2, tokens[0], "json", bot.rng, "nim")
                        elif m["type"] == "error" and m["code"] == "already_connected":  # (counted late)
                            bots[0] = Bot(member, 2, tokens[0], "json", bot.rng, "nim")
                        elif m["type"] == "your_turn":
                            asked[n] = m
                linked = bots[0].client.server is member and bool(bots[0].seats)
                for n, bot in enumerate(bots):
                    q = asked[n]
                    if q is None or not linked:  # (bot 1 waits for bot 0 to be linked)
                        continue
                    asked[n] = None
                    if late[n]:
                        late[n] = False
                        time.sleep(turn_s + 0.05)  # (the loop blocked: the referee's timer waits too)
                    act = {"type": "act", "v": 1, "game_id": q["game_id"],
                           "action": bot.rng.choice(q["legal"])}
                    sent[n] += 1
                    bot.client.data_received(bot.frame(act))
            await asyncio.wait_for(done, 10)
        finally:
            await member.stop()
            await host.stop()
        return host, member, sent, told

    Acts.act = counted_act  # type: ignore[method-assign]
    GameSession.act, GameSession.resign = counted(s_act), counted(s_resign)  # type: ignore[method-assign]
    GameSession.submit = counted(s_submit)  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as d:
            host, member, sent, told = asyncio.run(run(Path(d)))
    finally:
        Acts.act = g_act  # type: ignore[method-assign]
        GameSession.act, GameSession.resign, GameSession.submit = s_act, s_resign, s_submit  # type: ignore[method-assign]
    assert sent[0] >= 2 and sent[1] >= 2, sent
    assert calls[member.acts] == sent[0], (calls, sent)
    assert calls[host.acts] == sent[0] + sent[1] == entered[0], (calls, sent, entered)
    for n in (0, 1):
        errors = [m.get("error") for m in told[n] if m["type"] == "result"]
        assert errors == ["timeout"] + [None] * (sent[n] - 1), (n, errors)
        heard = [m["seat"] for m in told[n] if m["type"] == "event" and m["kind"] == "timeout"]
        assert sorted(heard) == [1, 2], (n, heard)


def test_a_refusal_is_logged_at_debug_level(caplog: pytest.LogCaptureFixture) -> None:
    """A refused play's `result` is written by the seat's `Writer`, not queued: it is logged
    at debug level all the same, as `Client.queue` logs every message it sends."""
    bad: list[int] = []
    legal = random_policy()

    def policy(bot: Bot, m: dict[str, Any]) -> list[bytes]:
        if bad:
            return legal(bot, m)
        bad.append(1)
        return [bot.frame({"type": "act", "v": bot.v, "game_id": m["game_id"],
                           "action": {"type": "nonsense"}})]

    caplog.set_level(logging.DEBUG, logger="maag.server.net.server")
    with tempfile.TemporaryDirectory() as d:
        asyncio.run(play(Path(d), policy, seed=3, games=1, encodings=("msgpack", "msgpack"), fast=True,
                         game="nim"))
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert [m for m in logged if " result bad_action: " in m], logged[:20]

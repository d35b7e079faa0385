"""A person's seat: a bot like any other, played from a web page.

`start_play` makes a seat for a person against a bundled agent (started as a bot process,
as `maag match` does) or a bot connected to the referee. The seat is a real protocol
client of the referee (`HumanSeat`): it connects over TCP to the referee's own port with a
token of this server's lifetime (`RefereeServer.add_token`) and says `hello` asking for the
legal actions, `concurrency` 1 and `max_games` 1, so the game is refereed, timed (the
person's time control, `WebConfig.human_tc`, for both seats; a bundled agent thinks at most
`WebConfig.agent_ms` a turn, not the person's minutes) and stored exactly like a bot's. The page
attaches to the seat over a WebSocket with the session token issued here, never the
referee's token; each of its messages (`act`, `turn`, `resign`) is rate limited, checked
by maag.protocol as a message of this seat's game and sent on; everything the referee
sends the seat goes to the page as the protocol's map (`your_turn` with the seat's
observation and legal actions, `result`, `event`, `game_over`). A page that goes away leaves
the seat and its clock running: the same link attaches again (the page is sent the whole
game so far); a person who does not come back loses on time, as a bot would.

The person's answers to the short form (experience) are stored with the game as tags
(`Human`: the seat, `Experience`, `Opponent`), match id `web:play`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from maag.protocol import (
    Connection,
    ConnectionClosed,
    GameOver,
    GameStart,
    Greeting,
    Hello,
    Message,
    ProtocolError,
    Role,
    message_from_dict,
    read_events,
)
from maag.server.compete.match import BotProcess
from maag.server.net.server import RateLimiter, RefereeServer
from maag.server.printable import printable
from maag.server.referee.clock import TimeControl

__all__ = ["HumanSeat", "PlayError", "Seats", "EXPERIENCE", "PLAY_MATCH"]

LOG = logging.getLogger(__name__)

PLAY_MATCH = "web:play"
EXPERIENCE = ("new", "played a few games", "played often", "expert")
"""The short form's answers: how much the person has played the game."""
PAGE_MESSAGES = ("act", "turn", "resign")


class PlayError(Exception):
    """A play request refused (a limit, an unknown opponent, a bad form), with the reason."""


@dataclass(eq=False)
class HumanSeat:
    """One person's seat over one TCP connection to the referee."""

    token: str
    bot: str
    opponent: str
    seat: int
    """1 or 2."""
    address: str
    max_rate: int
    created: float = field(default_factory=time.monotonic)
    game_id: str | None = None
    over: dict[str, Any] | None = None
    backlog: list[str] = field(default_factory=list)
    ws: web.WebSocketResponse | None = None
    process: BotProcess | None = None
    conn: Connection = field(default_factory=lambda: Connection(Role.CLIENT))
    writer: asyncio.StreamWriter | None = None
    reader_task: asyncio.Task[None] | None = None
    watcher: asyncio.Task[None] | None = None
    rate: RateLimiter | None = None

    def __post_init__(self) -> None:
        self.rate = RateLimiter(self.max_rate)

    async def connect(self, host: str, port: int, referee_token: str, game: str) -> None:
        reader, self.writer = await asyncio.open_connection(host, port)
        self._send(Greeting(encoding="json"))
        self._send(Hello(name=f"web {self.bot}"[:64], token=referee_token, games=(game,), concurrency=1,
                         want_legal=True, max_games=1))
        self.reader_task = asyncio.ensure_future(self._read(reader))

    def _send(self, msg: Message | Greeting) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(self.conn.send(msg))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        events = read_events(reader, self.conn)
        while True:
            try:
                ev = await anext(events)
            except StopAsyncIteration:
                return
            except ProtocolError as e:
                self.to_page({"type": "error", "message": f"referee: {e}"})
                return
            if isinstance(ev, ConnectionClosed):
                return
            if isinstance(ev, Greeting):
                continue
            assert isinstance(ev, Message)
            if isinstance(ev, GameStart):
                self.game_id = ev.game_id
            wire = ev.to_wire()
            if isinstance(ev, GameOver):
                self.over = wire
            self.to_page(wire)

    def to_page(self, msg: dict[str, Any]) -> None:
        frame = json.dumps(msg)
        self.backlog.append(frame)  # a page that attaches (again) gets the whole game
        if self.ws is not None and not self.ws.closed:
            asyncio.ensure_future(self.ws.send_str(frame))

    def from_page(self, text: str, now: float) -> str | None:
        """One frame from the page; the error to show it, or None when it went to the referee."""
        assert self.rate is not None
        if not self.rate.take(now):
            return f"more than {self.max_rate} messages per second: this one was dropped"
        try:
            data = json.loads(text)
        except ValueError:
            return "not JSON"
        if not isinstance(data, dict) or data.get("type") not in PAGE_MESSAGES:
            return f"a message is a map whose type is one of {', '.join(PAGE_MESSAGES)}"
        if self.game_id is None or self.over is not None:
            return "no game of yours is running"
        try:
            fields = {k: v for k, v in data.items() if k not in ("game_id", "seat", "v")}
            msg = message_from_dict({**fields, "game_id": self.game_id})
        except ProtocolError as e:
            return str(e)
        self._send(msg)
        return None

    def close(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
        for task in (self.reader_task, self.watcher):
            if task is not None:
                task.cancel()
        if self.process is not None:
            self.process.stop(grace=1.0)


class Seats:
    """The people's seats of one web server, with their limits."""

    def __init__(self, referee: RefereeServer, *, human_tc: TimeControl, agent_ms: float | None = 1000.0,
                 max_sessions: int = 8, max_per_address: int = 2, max_rate: int = 20,
                 attach_s: float = 60.0) -> None:
        self.referee = referee
        self.human_tc = human_tc
        self.agent_ms = agent_ms
        self.max_sessions = max_sessions
        self.max_per_address = max_per_address
        self.max_rate = max_rate
        self.attach_s = attach_s
        self.seats: dict[str, HumanSeat] = {}
        self._n = 0
        self._logs = Path(tempfile.mkdtemp(prefix="maag-web-bots-"))

    def live(self) -> list[HumanSeat]:
        return [s for s in self.seats.values() if s.over is None]

    async def start_play(self, form: dict[str, Any], address: str) -> HumanSeat:
        """A seat for the person whose form is `form`: opponent (a bundled agent's spec, or
        `bot:NAME` of a connected bot), seat (1 or 2), experience (one of EXPERIENCE or
        empty). PlayError says why not."""
        self._forget_old()
        live = self.live()
        if len(live) >= self.max_sessions:
            raise PlayError(f"{len(live)} people are playing already (the limit is {self.max_sessions})")
        if sum(1 for s in live if s.address == address) >= self.max_per_address:
            raise PlayError(f"at most {self.max_per_address} games at once from one address")
        opponent = str(form.get("opponent", "")).strip()
        seat = form.get("seat", 1)
        experience = str(form.get("experience", "") or "")
        if seat not in (1, 2):
            raise PlayError("seat must be 1 or 2")
        if experience and experience not in EXPERIENCE:
            raise PlayError(f"experience must be one of: {', '.join(EXPERIENCE)}")
        if not opponent or any(ch.isspace() for ch in opponent) or len(opponent) > 100:
            raise PlayError("name a bundled agent (e.g. greedy-action) or a connected bot as bot:NAME")
        self._n += 1
        cfg = self.referee.config
        bot = f"human-{self._n}"
        referee_token = secrets.token_urlsafe(24)
        self.referee.add_token(referee_token, bot, explicit_only=True)
        hs = HumanSeat(secrets.token_urlsafe(24), bot, opponent, seat, address, self.max_rate)
        if opponent.startswith("bot:"):
            other = opponent[4:]
            if not any(c.bot == other for c in self.referee.clients):
                raise PlayError(f"no bot {other!r} is connected")
        else:
            other = f"{opponent}@web{self._n}"[:64]
            agent_token = secrets.token_urlsafe(24)
            self.referee.add_token(agent_token, other, explicit_only=True)
            proc = BotProcess(opponent, other, agent_token, 1, self._logs / f"{self._n}.log", self.agent_ms)
            host = "127.0.0.1" if cfg.host in ("0.0.0.0", "", "::") else cfg.host
            await asyncio.to_thread(proc.start, host, self.referee.port)
            hs.process = proc
        seats = (bot, other) if seat == 1 else (other, bot)
        tags = {"Human": seat, "Experience": experience, "Opponent": opponent}
        fut = self.referee.request_game(*seats, match_id=PLAY_MATCH, tags=tags, requeue=False,
                                        tc=self.human_tc)
        fut.add_done_callback(lambda f: self._game_done(hs, f))
        if hs.process is not None:
            hs.watcher = asyncio.ensure_future(self._watch_agent(hs, fut))
        host = "127.0.0.1" if cfg.host in ("0.0.0.0", "", "::") else cfg.host
        await hs.connect(host, self.referee.port, referee_token, cfg.game)
        self.seats[hs.token] = hs
        LOG.info("%s (seat %d, %s) plays %s", bot, seat, address, opponent)
        return hs

    async def _watch_agent(self, hs: HumanSeat, fut: asyncio.Future[Any]) -> None:
        """An agent's process that exits before its game starts (a bad agent name, a broken
        install) ends the request, and the page is told why, with the end of its log."""
        proc = hs.process
        while proc is not None and hs.game_id is None and not fut.done():
            p = proc.proc
            if p is not None and p.poll() is not None:
                for req in list(self.referee.requests):
                    if req.future is fut:
                        self.referee.requests.remove(req)
                tail = printable(proc.log_tail(8))  # the process's own output, shown as text
                fut.set_exception(PlayError(f"the opponent {hs.opponent!r} could not start (exit status "
                                            f"{p.returncode}):\n{tail}"))
                return
            await asyncio.sleep(0.25)

    def _game_done(self, hs: HumanSeat, fut: asyncio.Future[Any]) -> None:
        if not fut.cancelled() and fut.exception() is not None and hs.over is None:
            hs.over = {"type": "error", "message": str(fut.exception())}
            hs.to_page(hs.over)
        if hs.process is not None:
            hs.process.stop(grace=1.0)

    def _forget_old(self, keep: int = 100) -> None:
        """Close seats never attached in time, and forget finished ones after an hour (the
        oldest at once beyond `keep` of them: each holds its game's messages for its page)."""
        now = time.monotonic()
        finished = 0
        for tok, s in sorted(self.seats.items(), key=lambda kv: -kv[1].created):
            finished += s.over is not None
            if (s.ws is None and s.over is None and now - s.created > self.attach_s) or (
                    s.over is not None and (now - s.created > 3600 or finished > keep)):
                s.close()
                del self.seats[tok]

    def close(self) -> None:
        for s in self.seats.values():
            s.close()
        self.seats.clear()
        shutil.rmtree(self._logs, ignore_errors=True)

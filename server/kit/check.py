"""`maag bot check COMMAND`: a conformance kit for bot authors.

It starts a real referee (maag.server) on 127.0.0.1, runs the bot's command so that it
connects through a transparent proxy, and plays it through scripted situations against a
random opponent. The proxy decodes both directions with maag.protocol, so the report
says exactly what the bot got wrong: protocol errors (with the error code and field),
illegal or unreadable actions (with the referee's reason), late turns, games lost by
timeout, disconnect or too many illegal actions, and how long each turn took.

The command may use the placeholders of every bot command line in maag, {connect} (HOST:PORT),
{host}, {port}, {token} and {concurrency}; without any, `--connect ADDRESS --token TOKEN` is
appended (the form `maag bot run` takes). The same values are in the environment as
MAAG_ADDRESS and MAAG_TOKEN. {address}, the old spelling of {connect}, is still read, with
a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.engine import registry
from maag.engine.registry import Situation
from maag.protocol import (
    FATAL,
    Act,
    Connection,
    ConnectionClosed,
    Error,
    GameEvent,
    GameOver,
    GameStart,
    Hello,
    Message,
    ProtocolError,
    RemoteProtocolError,
    Resign,
    Result,
    Role,
    Turn,
    Welcome,
    YourTurn,
)
from maag.server.net.minibot import MiniBot

BOT = "bot-under-test"
OPPONENT = "kit-opponent"
HANG_GUARD_S = 300.0  # a situation that takes longer than this is reported as hung


# ---- what the proxy sees ------------------------------------------------------------------

@dataclass
class GameLog:
    """Everything the proxy saw of one game of the bot."""

    game_id: str
    seat: int | None = None
    turn_ms: int | None = None
    prompts: int = 0
    think_ms: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    over: GameOver | None = None
    prompt_at: float | None = None  # when the referee last prompted the bot (its think time)


@dataclass
class Tap:
    """Decodes the bot's stream and the referee's stream of one connection."""

    from_bot: Connection = field(default_factory=lambda: Connection(Role.SERVER))
    from_server: Connection = field(default_factory=lambda: Connection(Role.CLIENT))
    games: dict[str, GameLog] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # not about one game
    hello: Hello | None = None
    welcomed: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    bot_dead: bool = False  # the bot's stream broke the protocol: stop decoding it

    def game(self, game_id: str) -> GameLog:
        return self.games.setdefault(game_id, GameLog(game_id))

    def bot_bytes(self, data: bytes) -> None:
        if self.bot_dead:
            return
        events = self.from_bot.events(data)
        while True:
            try:
                ev = next(events, None)
            except RemoteProtocolError as e:
                self.bot_dead = True
                where = f" (field {e.field!r})" if e.field else ""
                self.problems.append(f"protocol error {e.code.value}{where}: {e.message}")
                return
            if ev is None or isinstance(ev, ConnectionClosed):
                return
            with contextlib.suppress(ProtocolError):
                self.from_server.send(ev)  # keep the mirror's state in step
            if isinstance(ev, Hello):
                self.hello = ev
            elif isinstance(ev, (Act, Turn, Resign)):
                g = self.game(ev.game_id)
                if g.prompt_at is not None:
                    g.think_ms.append((time.perf_counter() - g.prompt_at) * 1000)
                    g.prompt_at = None
                if isinstance(ev, Resign):
                    g.notes.append("resigned")

    def server_bytes(self, data: bytes) -> None:
        events = self.from_server.events(data)
        while True:
            try:
                ev = next(events, None)
            except ProtocolError as e:  # a referee bug: report it, it is not the bot's fault
                self.problems.append(f"(referee) {e}")
                return
            if ev is None or isinstance(ev, ConnectionClosed):
                return
            if not self.bot_dead:
                with contextlib.suppress(ProtocolError):
                    self.from_bot.send(ev)
            assert isinstance(ev, Message)
            self._server_message(ev)

    def _server_message(self, ev: Message) -> None:
        if isinstance(ev, Welcome):
            self.welcomed.set()
        elif isinstance(ev, GameStart):
            g = self.game(ev.game_id)
            g.seat, g.turn_ms = ev.seat, ev.time_control.get("turn_ms")
        elif isinstance(ev, YourTurn):
            g = self.game(ev.game_id)
            g.prompts += 1
            g.prompt_at = time.perf_counter()
        elif isinstance(ev, Result) and ev.error is not None:
            self.game(ev.game_id).problems.append(f"{ev.error}: {ev.message or ''}".strip())
        elif isinstance(ev, Error):
            text = f"{ev.code}: {ev.message}"
            if ev.game_id is not None:
                self.game(ev.game_id).problems.append(text)
            elif ev.error_code in FATAL or ev.error_code is None:
                self.problems.append(f"the referee closed the connection: {text}")
                self.bot_dead = True  # what the bot sends from now on is not read
        elif isinstance(ev, GameEvent) and ev.kind == "timeout":
            g = self.game(ev.game_id)
            if ev.seat == g.seat:
                g.problems.append("timeout: no answer within the turn's time; the referee ended the turn")
                g.prompt_at = None
        elif isinstance(ev, GameOver):
            self.game(ev.game_id).over = ev


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                see: Callable[[bytes], None]) -> None:
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            see(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


class Proxy:
    """A transparent TCP proxy in front of the referee that taps every connection."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.taps: list[Tap] = []
        self.connected = asyncio.Event()
        self.port = 0
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, bot_r: asyncio.StreamReader, bot_w: asyncio.StreamWriter) -> None:
        tap = Tap()
        self.taps.append(tap)
        self.connected.set()
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            bot_w.close()
            return
        await asyncio.gather(_pump(bot_r, up_w, tap.bot_bytes), _pump(up_r, bot_w, tap.server_bytes))
        tap.closed.set()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()


# ---- situations ---------------------------------------------------------------------------

def game_situations(game: str, config: dict[str, Any], seed: int) -> list[Situation]:
    """The game's scripted situations (its registry entry's), or whole games from both seats
    for a game without its own."""
    spec = registry.get(game)
    if spec.situations is not None:
        return spec.situations(config, seed)
    return [Situation(f"game-seat{s}", f"a whole game from the opening, as seat {s}", s, None)
            for s in (1, 2)]


# ---- the run ------------------------------------------------------------------------------

@dataclass
class SituationReport:
    name: str
    what: str
    ok: bool
    winner: int | None
    reason: str | None
    bot_seat: int
    turns: int
    max_think_ms: float | None
    mean_think_ms: float | None
    problems: list[str]
    notes: list[str]

    def line(self) -> str:
        head = "ok  " if self.ok else "FAIL"
        result = ("win" if self.winner == self.bot_seat else "draw" if self.winner is None else "loss") \
            if self.reason else "not finished"
        t = "" if self.max_think_ms is None else \
            f", turns {self.turns}, think mean {self.mean_think_ms:.0f} ms max {self.max_think_ms:.0f} ms"
        text = f"{head} {self.name}: {result} ({self.reason or '-'}){t}"
        for n in self.notes:
            text += f"\n       note: {n}"
        for p in self.problems:
            text += f"\n       problem: {p}"
        return text


@dataclass
class CheckReport:
    command: list[str]
    situations: list[SituationReport]
    problems: list[str]
    bot_exit: int | None
    bot_stderr: str

    @property
    def ok(self) -> bool:
        return not self.problems and all(s.ok for s in self.situations)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "command": self.command, "problems": self.problems, "bot_exit": self.bot_exit,
                "situations": [s.__dict__ for s in self.situations]}


def bot_command(command: Sequence[str], address: str, token: str) -> list[str]:
    """The command with its placeholders filled (or the connection options appended). The
    placeholders are those of every bot command line in maag (`maag match`, tournaments,
    the ladder): {connect} {host} {port} {token} {concurrency}; {address}, this kit's old
    spelling of {connect}, is still read (see `old_placeholders`)."""
    if len(command) == 1 and " " in command[0]:
        command = shlex.split(command[0])
    host, _, port = address.rpartition(":")
    values = {"connect": address, "host": host, "port": port, "token": token, "concurrency": "1",
              "address": address}
    if not any("{" + k + "}" in part for part in command for k in values):
        return [*command, "--connect", address, "--token", token]
    out = []
    for part in command:  # replace, not str.format: other braces (JSON arguments) stay as they are
        for k, v in values.items():
            part = part.replace("{" + k + "}", v)
        out.append(part)
    return out


def old_placeholders(command: Sequence[str]) -> list[str]:
    """Warnings for placeholders spelled the old way ({address}: now {connect})."""
    if any("{address}" in part for part in command):
        return ["the placeholder {address} is now {connect} (as in maag match and tournaments); "
                "{address} is still read in this version"]
    return []


async def run_check(command: Sequence[str], *, tc: str = "1s", game: str | None = None,
                    game_config: dict[str, Any] | None = None,
                    seed: int = 1, connect_timeout_s: float = 20.0, situations: Sequence[str] | None = None,
                    launch: Callable[[str, str, Path], Awaitable[Any]] | None = None,
                    log: Callable[[str], None] = lambda s: None, server: Any = None,
                    match_id: str | None = None) -> CheckReport:
    """Run the kit; `log` gets one line per event. Never raises for the bot's faults. The
    situations are played on a referee of the kit's own, or on `server` (a started
    RefereeServer of the caller's with the same game and time control: a host's validation
    plays its smoke games on the same one), stored under `match_id`."""
    from maag.server.net.server import RefereeServer, ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.referee.session import Policy
    from maag.server.sandbox.environment import bot_environment
    from maag.server.storage.base import SQLiteStorage

    game = game or registry.default()
    config = dict(game_config or {})
    with tempfile.TemporaryDirectory(prefix="maag-check-") as tmp:
        srv = server
        if srv is None:
            cfg = ServerConfig(port=0, auto_pair=False, tc=TimeControl.parse(tc), game=game, fleet=False,
                               game_config=config, policy=Policy(disconnect_grace_ms=500.0, max_illegal=5))
            srv = RefereeServer(cfg, SQLiteStorage(Path(tmp) / "check.sqlite3"))
            await srv.start()
        proxy = Proxy(srv.port)
        await proxy.start()
        token, opp_token = "check_" + os.urandom(8).hex(), "opp_" + os.urandom(8).hex()
        srv.add_token(token, BOT)
        srv.add_token(opp_token, OPPONENT)
        for warning in old_placeholders(command):
            log(f"warning: {warning}")
        stderr_path = Path(tmp) / "bot.stderr"
        proc: Any
        cmd = list(command)
        if launch is not None:
            # The host starts the bot its own way (a package in the sandbox, relayed to this
            # address); it gives back something with returncode, terminate, kill and wait.
            log(f"starting the bot: {' '.join(command) or 'by the host'}")
            proc = await launch(f"127.0.0.1:{proxy.port}", token, stderr_path)
        else:
            cmd = bot_command(command, f"127.0.0.1:{proxy.port}", token)
            log(f"starting the bot: {shlex.join(cmd)}")
            with open(stderr_path, "wb") as err:
                proc = await asyncio.create_subprocess_exec(
                    *cmd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=err,
                    env=bot_environment({"MAAG_ADDRESS": f"127.0.0.1:{proxy.port}",
                                         "MAAG_CONNECT": f"127.0.0.1:{proxy.port}", "MAAG_TOKEN": token}))
        # The kit's opponent: the referee's own random bot, in this process.
        opponent = MiniBot("127.0.0.1", srv.port, opp_token, agent="random", concurrency=4, name=OPPONENT,
                           quiet=True)
        opp_task: asyncio.Task[Any] | None = None
        reports: list[SituationReport] = []
        problems: list[str] = []
        try:
            opp_task = asyncio.create_task(opponent.run())
            tap = await _wait_login(proxy, proc, connect_timeout_s, problems)
            if tap is not None:
                log(f"the bot logged in as {tap.hello.name if tap.hello else '?'}")
                chosen = [s for s in game_situations(game, config, seed)
                          if not situations or s.name in situations]
                for sit in chosen:
                    if proc.returncode is not None or tap.closed.is_set():
                        problems.append(f"the bot is gone; skipped {sit.name}")
                        continue
                    rep = await _play(srv, tap, sit, match_id)
                    log(rep.line())
                    reports.append(rep)
                problems.extend(tap.problems)
                # A bot that gives up every situation is a bot whose code fails on every turn
                # (the Python SDK resigns for a bot that raised), not one that resigns a lost
                # position now and then: a failure, whatever each situation's own check says.
                if reports and all("resigned" in r.notes for r in reports):
                    n = len(reports)
                    problems.append(f"the bot resigned in every situation ({n} of {n}): does its code "
                                    "raise an exception on every turn? (its output below)")
        finally:
            if opp_task is not None:
                opp_task.cancel()
                with contextlib.suppress(BaseException):
                    await opp_task
            opponent.close()
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 5)
                except asyncio.TimeoutError:
                    proc.kill()
                    await proc.wait()
                exit_code = None  # still running when the check ended: normal for a bot
            else:
                exit_code = proc.returncode
            await proxy.stop()
            if server is None:
                await srv.stop()
        stderr = (stderr_path.read_bytes().decode("utf-8", "replace")[-4000:]
                  if stderr_path.exists() else "")
        if exit_code not in (None, 0):
            killed = f" (killed by signal {-exit_code})" if exit_code < 0 else ""
            problems.append(f"the bot exited with code {exit_code}{killed}")
        return CheckReport(list(cmd), reports, problems, exit_code, stderr)


async def _wait_login(proxy: Proxy, proc: asyncio.subprocess.Process, timeout: float,
                      problems: list[str]) -> Tap | None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for tap in proxy.taps:
            if tap.welcomed.is_set():
                return tap
            if tap.problems or tap.closed.is_set():
                problems.extend(tap.problems or ["the connection closed before welcome"])
                return None
        if proc.returncode is not None:
            problems.append("the bot exited before logging in")
            return None
        await asyncio.sleep(0.02)
    problems.append(f"the bot did not log in within {timeout:g} s")
    return None


async def _play(srv: Any, tap: Tap, sit: Situation, match_id: str | None = None) -> SituationReport:
    seats = (BOT, OPPONENT) if sit.bot_seat == 1 else (OPPONENT, BOT)
    started = asyncio.Event()
    fut = srv.request_game(*seats, start_state=sit.start, tags={"Situation": sit.name}, match_id=match_id,
                           on_start=lambda _id: started.set())
    problems: list[str] = []
    summary = None
    gone = asyncio.ensure_future(tap.closed.wait())
    try:
        await asyncio.wait({fut, gone}, timeout=HANG_GUARD_S, return_when=asyncio.FIRST_COMPLETED)
        if not fut.done() and gone.done() and not started.is_set():
            fut.cancel()  # the bot left before the game could start: it never will
            problems.append("the bot disconnected before the game started")
        else:
            summary = await asyncio.wait_for(fut, HANG_GUARD_S)
    except asyncio.TimeoutError:
        problems.append(f"the game did not end within {HANG_GUARD_S:g} s")
    finally:
        gone.cancel()
    g = tap.games.get(str(summary.game_id)) if summary is not None else None
    if g is None:
        g = GameLog("?")
    if summary is not None:  # the referee stores the result before the bot reads game_over
        end = time.monotonic() + 10.0
        while g.over is None and not tap.closed.is_set() and time.monotonic() < end:
            await asyncio.sleep(0.01)
    problems.extend(g.problems)
    if summary is not None and summary.reason in ("timeout", "illegal_actions", "disconnect") \
            and summary.winner != sit.bot_seat - 1:
        problems.append(f"lost the game: {summary.reason}")
    if sit.check is not None and summary is not None:
        outcome = {"winner": g.over.winner if g.over else None, "reason": g.over.reason if g.over else None,
                   "seat": g.seat, "prompts": len(g.think_ms)}
        notes = list(g.notes) + [sit.check(outcome)]
    else:
        notes = list(g.notes)
    if g.turn_ms and any(t > g.turn_ms for t in g.think_ms):
        problems.append(f"a turn took longer than the {g.turn_ms} ms budget")
    winner = None
    if summary is not None and summary.winner in (0, 1):
        winner = summary.winner + 1
    return SituationReport(
        name=sit.name, what=sit.what, ok=not problems and summary is not None, winner=winner,
        reason=summary.reason if summary is not None else None, bot_seat=sit.bot_seat,
        turns=len(g.think_ms), max_think_ms=max(g.think_ms) if g.think_ms else None,
        mean_think_ms=sum(g.think_ms) / len(g.think_ms) if g.think_ms else None,
        problems=problems, notes=notes)

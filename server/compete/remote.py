"""A match on a running referee (`maag match --connect`): the two bot processes connect
through a local relay each, which reads what the referee tells them (the match's only view
of a remote game) and caps their `hello.max_games` at the games the match still needs."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maag.server.compete.match import BotProcess, MatchResult, display_names
from maag.server.hosting.api import safe_name
from maag.server.net.server import GameSummary

__all__ = ["run_remote_match"]


class _Relay:
    """A local port that forwards one bot process's connection to a running referee and
    reads what the referee tells that bot (the match's only view of a remote game).

    It also caps the bot's `hello.max_games` at the games the match still needs
    (`remaining()`), so that the referee pairs the two bots no more once the match is over:
    without it, the referee could start one more game between them before their processes
    were stopped, and store it as lost on time."""

    def __init__(self, host: str, port: int, on_message: Callable[[dict[str, Any]], None],
                 remaining: Callable[[], int] | None = None) -> None:
        self.host, self.port, self.on_message = host, port, on_message
        self.remaining = remaining
        self.server: asyncio.base_events.Server | None = None
        self.local_port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.local_port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        try:
            greeting = await reader.readline()
            up_w.write(greeting)
            encoding = "msgpack" if b"msgpack" in greeting else "json"
            up_w.write(await self._capped_hello(reader, encoding))
            await asyncio.gather(self._pump(reader, up_w, None), self._pump(up_r, writer, encoding),
                                 return_exceptions=True)
        except (asyncio.CancelledError, asyncio.IncompleteReadError, ConnectionError):
            pass  # the match is over, or the bot left before its hello
        finally:
            for w in (writer, up_w):
                w.close()

    async def _capped_hello(self, reader: asyncio.StreamReader, encoding: str) -> bytes:
        """The bot's first frame (its hello) with max_games capped at what the match still
        needs; any other frame, or one that does not decode, is passed on unchanged (the
        referee then answers it as it would)."""
        import json as _json

        import msgpack

        if encoding == "json":
            raw = await reader.readline()
            body = raw
        else:
            head = await reader.readexactly(4)
            body = await reader.readexactly(int.from_bytes(head, "big"))
            raw = head + body
        if self.remaining is None:
            return raw
        try:
            msg = _json.loads(body) if encoding == "json" else msgpack.unpackb(body, raw=False)
        except ValueError:
            return raw
        if not isinstance(msg, dict) or msg.get("type") != "hello":
            return raw
        left = max(1, self.remaining())
        given = msg.get("max_games")
        msg["max_games"] = left if not isinstance(given, int) or isinstance(given, bool) else min(given, left)
        if encoding == "json":
            return _json.dumps(msg).encode() + b"\n"
        packed = msgpack.packb(msg)
        return len(packed).to_bytes(4, "big") + packed

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, watch: str | None) -> None:
        import json as _json

        import msgpack

        buf = b""
        while True:
            data = await src.read(1 << 16)
            if not data:
                with contextlib.suppress(Exception):
                    dst.write_eof()
                return
            dst.write(data)
            if watch is None:
                continue
            buf += data
            while True:
                if watch == "json":
                    end = buf.find(b"\n")
                    if end < 0:
                        break
                    frame, buf = buf[:end], buf[end + 1:]
                    with contextlib.suppress(ValueError):
                        self.on_message(_json.loads(frame))
                else:
                    if len(buf) < 4 or len(buf) < 4 + int.from_bytes(buf[:4], "big"):
                        break
                    n = int.from_bytes(buf[:4], "big")
                    frame, buf = buf[4:4 + n], buf[4 + n:]
                    with contextlib.suppress(Exception):
                        self.on_message(msgpack.unpackb(frame, raw=False))


async def run_remote_match(host: str, port: int, spec_a: str, spec_b: str, tokens: tuple[str, str],
                           games: int, concurrency: int, *, log_dir: Path | None = None,
                           on_game: Callable[[int, GameSummary], None] | None = None,
                           connect_timeout: float = 60.0, max_restarts: int = 3) -> MatchResult:
    """Play bots A and B (registered on the referee at HOST:PORT with `tokens`) until the
    referee has finished `games` games between them. The referee pairs them, choosing seats
    and deals itself, and stores the games; results and each game's actions are read from
    what it tells A (its results, and the events of B's actions)."""
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="maag-match-"))
    names: list[str | None] = [None, None]
    starts: dict[str, dict[str, Any]] = {}
    plies: dict[str, int] = {}  # per game, the actions applied as A sees them
    disp = display_names(spec_a, spec_b)
    result = MatchResult(disp)
    done = asyncio.Event()

    def watch(i: int) -> Callable[[dict[str, Any]], None]:
        def on_message(m: dict[str, Any]) -> None:
            t = m.get("type")
            if t == "welcome":
                names[i] = str(m.get("bot"))  # the referee's name for the bot
            elif t == "error" and "game_id" not in m:
                who = names[i] or (spec_a, spec_b)[i]
                result.errors.append(f"{who}: {m.get('code')}: {m.get('message')}")
            elif i == 0 and t == "game_start":
                starts[m["game_id"]] = m
                plies.setdefault(m["game_id"], 0)  # (a reconnection sends game_start again)
            elif i == 0 and t == "result" and m.get("game_id") in plies:
                plies[m["game_id"]] += int(m.get("accepted") or 0)  # A's own actions
            elif (i == 0 and t == "event" and m.get("game_id") in plies
                  and m.get("kind") in ("action", "timeout")):
                plies[m["game_id"]] += 1  # B's actions, and a turn the clock ended (an end_turn)
            elif i == 0 and t == "game_over" and m["game_id"] in starts and len(result.games) < games:
                st = starts.pop(m["game_id"])
                n_plies = plies.pop(m["game_id"], 0)
                if st.get("opponent") != names[1]:
                    return  # a game against some other bot on that server
                seats = disp if st["seat"] == 1 else (disp[1], disp[0])
                w = m.get("winner")
                winner = -1 if w is None and m.get("reason") != "aborted" else (None if w is None else w - 1)
                rid = m.get("replay_id")
                gid = int(rid) if isinstance(rid, str) and rid.isdigit() else len(result.games)
                summary = GameSummary(gid, seats, winner, str(m.get("reason")), n_plies, (0.0, 0.0),
                                      (0.0, 0.0), rid is not None)
                n = len(result.games)
                result.games.append((n, summary))
                if on_game is not None:
                    on_game(n, summary)
                if len(result.games) >= games:
                    done.set()
        return on_message

    relays = [_Relay(host, port, watch(i), lambda: games - len(result.games)) for i in (0, 1)]
    procs = []
    for i, (spec, relay) in enumerate(zip((spec_a, spec_b), relays, strict=True)):
        await relay.start()
        name = disp[i]
        safe = safe_name(name)
        procs.append(BotProcess(spec, name, tokens[i], concurrency, log_dir / f"{safe}.log"))
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        for p, relay in zip(procs, relays, strict=True):
            p.start("127.0.0.1", relay.local_port)
        while not done.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(done.wait(), 0.5)
            if result.errors:
                raise RuntimeError("; ".join(result.errors))
            for p, relay in zip(procs, relays, strict=True):
                if p.proc is not None and p.proc.poll() is not None:
                    p.exits += 1
                    if p.exits > max_restarts:
                        raise RuntimeError(f"bot {p.name!r} exited {p.exits} times; its log {p.log_path} "
                                           f"ends with:\n{p.log_tail()}")
                    p.start("127.0.0.1", relay.local_port)
            if not result.games and not starts and loop.time() - started > connect_timeout:
                raise RuntimeError(f"no game started within {connect_timeout:.0f} s on {host}:{port} "
                                   f"(is its automatic pairing on?); logs in {log_dir}")
    finally:
        for p in procs:
            p.stop()
        for r in relays:
            await r.stop()
    return result

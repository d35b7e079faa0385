"""A match between two bots: an embedded referee server (or a running one), one process per
bot, N games with seats alternating and each seed played twice (once from each seat), and
the statistics of the result from the first bot's side.

A bot is named by a bundled agent (`random`, `greedy-action`, `mcts`, `oep:population=50`,
...; run with `maag bot run`; `random` and `first` with the referee's own minibot) or
given as a command line (anything with a space in it), run through the shell with these
placeholders and environment variables filled in (the environment holds nothing else of
the host's but PATH, HOME and the locale; `pass_env` passes more on purpose):

    {host} {port} {connect} {token} {concurrency}    MAAG_HOST MAAG_PORT MAAG_CONNECT MAAG_TOKEN
                                                     MAAG_CONCURRENCY MAAG_BOT

Each bot runs as one process playing up to `concurrency` games at once over one connection
(one connection per token, as the protocol says). A process that exits is started again; one
that lives on without its connection (it said hello and hung up) loses the games it is due
by forfeit once the referee's grace period has passed (`bot_absence`), and the match goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.server.hosting.api import Host, HostOptions, hosted_bot, safe_name
from maag.server.net.server import Absence, GameSummary, RefereeServer, ServerConfig
from maag.server.sandbox.environment import bot_environment
from maag.server.sandbox.package import BotPackage, PackageError, is_package
from maag.server.storage.base import Storage

__all__ = ["BotProcess", "MatchResult", "run_match", "bot_command", "bot_absence", "display_names"]

MINIBOT_AGENTS = ("random", "first")


def bot_command(spec: str, host: str, port: int, token: str, concurrency: int,
                name: str, budget_ms: float | None = None) -> tuple[str | list[str], bool]:
    """The command line that runs bot `spec`, and whether it goes through the shell. Bundled
    agents get their token from $MAAG_TOKEN, never on the command line (which `ps` shows to
    every user of the machine); a command line of the user's gets it only if it asks for
    `{token}` (docs/server.md recommends $MAAG_TOKEN). `budget_ms` caps a bundled agent's
    thinking per turn (`maag bot run --budget-ms`) below what its clock allows."""
    connect = f"{host}:{port}"
    if any(ch.isspace() for ch in spec.strip()):
        text = spec
        for k, v in {"host": host, "port": str(port), "connect": connect, "token": token,
                     "concurrency": str(concurrency)}.items():
            text = text.replace("{" + k + "}", shlex.quote(v))
        return text, True
    if spec.split(":", 1)[0] not in MINIBOT_AGENTS:
        agent, _, settings = spec.partition(":")
        cmd = [sys.executable, "-m", "maag.server", "bot", "run", agent, "--connect", connect,
               "--concurrency", str(concurrency)]
        for kv in filter(None, settings.split(",")):
            cmd += ["--param", kv]
        if budget_ms is not None:
            cmd += ["--budget-ms", f"{budget_ms:g}"]
        return cmd, False
    return [sys.executable, "-m", "maag.server.net.minibot", "--connect", connect,
            "--agent", spec, "--concurrency", str(concurrency), "--name", name[:64]], False


def bot_absence(server: RefereeServer, startup_s: float | None = None) -> Absence:
    """How long a game waits for a bot process whose connection closed (it lives on without
    one, or is being restarted): the referee's grace period for a disconnected seat, then
    the game is lost by forfeit (verdict `disconnect`) and the match goes on. `startup_s`:
    for a bot that never connected (None: the caller's own start-up check decides)."""
    return Absence(gone_s=server.config.policy.disconnect_grace_ms / 1000, startup_s=startup_s)


class BotProcess:
    """One bot process, restarted if it exits while the match runs."""

    def __init__(self, spec: str, name: str, token: str, concurrency: int, log_path: Path,
                 budget_ms: float | None = None, pass_env: Sequence[str] = ()) -> None:
        self.spec, self.name, self.token, self.concurrency = spec, name, token, concurrency
        self.pass_env = tuple(pass_env)
        self.log_path = log_path
        self.budget_ms = budget_ms
        self.proc: subprocess.Popen[bytes] | None = None
        self.exits = 0

    def start(self, host: str, port: int) -> None:
        cmd, shell = bot_command(self.spec, host, port, self.token, self.concurrency, self.name,
                                 self.budget_ms)
        env = bot_environment({"MAAG_HOST": host, "MAAG_PORT": str(port), "MAAG_CONNECT": f"{host}:{port}",
                               "MAAG_TOKEN": self.token, "MAAG_CONCURRENCY": str(self.concurrency),
                               "MAAG_BOT": self.name}, self.pass_env)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, shell=shell, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def stop(self, grace: float = 3.0) -> None:
        p = self.proc
        if p is None or p.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()

    def log_tail(self, n: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


@dataclass(slots=True)
class MatchResult:
    bots: tuple[str, str]
    games: list[tuple[int, GameSummary]] = field(default_factory=list)
    """(game number, summary) in order of finish."""
    errors: list[str] = field(default_factory=list)

    def tally(self) -> tuple[int, int, int]:
        """Wins, draws, losses of bot A (games stored as aborted are left out)."""
        w = d = lo = 0
        for _, g in self.games:
            if g.winner is None:
                continue
            if g.winner == -1:
                d += 1
            elif g.seats[g.winner] == self.bots[0]:
                w += 1
            else:
                lo += 1
        return w, d, lo

    def search(self) -> dict[str, dict[str, Any] | None]:
        """Per bot, what it reported of its searches over the match's games (the games'
        `search`, weighted by their turns): turns, mean iterations and search time per turn;
        None for a bot that reported nothing."""
        return search_by_bot(self.bots, (g for _, g in self.games))


def search_by_bot(bots: Sequence[str], games: Iterable[GameSummary]) -> dict[str, dict[str, Any] | None]:
    """Per bot of `bots`: turns reported, mean iterations and search time per turn over
    `games` (each game's per-seat `search`, weighted by its turns); None if none reported."""
    acc = {b: [0, 0.0, 0.0] for b in bots}
    for g in games:
        for name, rep in zip(g.seats, g.search, strict=True):
            if rep is None or name not in acc:
                continue
            a = acc[name]
            a[0] += rep["turns"]
            a[1] += rep["iterations_per_turn"] * rep["turns"]
            a[2] += rep["time_ms_per_turn"] * rep["turns"]
    return {b: None if not a[0] else {"turns": int(a[0]), "iterations_per_turn": round(a[1] / a[0], 1),
                                      "time_ms_per_turn": round(a[2] / a[0], 3)}
            for b, a in acc.items()}


def display_names(a: str, b: str) -> tuple[str, str]:
    """Names for the two bots: the specs (shortened), made distinct."""
    def short(spec: str) -> str:
        s = spec.strip()
        if is_package(s):  # a package is named by its manifest (an archive by its file name)
            try:
                p = Path(s)
                return BotPackage.from_folder(p).name if p.is_dir() else p.name.split(".")[0]
            except PackageError:
                return Path(s).name[:56]
        if any(ch.isspace() for ch in s):
            s = Path(shlex.split(s)[0]).name if shlex.split(s) else "bot"
        return s[:56]

    na, nb = short(a), short(b)
    if na == nb:
        na, nb = na + "#1", nb + "#2"
    return na, nb


async def run_match(server: RefereeServer | None, spec_a: str, spec_b: str, games: int, concurrency: int, *,
                    config: ServerConfig | None = None, storage: Storage | None = None,
                    seed: int | None = None, match_id: str | None = None, log_dir: Path | None = None,
                    on_game: Callable[[int, GameSummary], None] | None = None,
                    connect_timeout: float = 60.0, max_restarts: int = 3,
                    host_options: HostOptions | None = None) -> MatchResult:
    """Play `games` games between bots A and B with up to `concurrency` at once on an
    embedded server (started here from `config` and `storage` when `server` is None). Game
    i has A in seat 1 when i is even; games 2k and 2k+1 share a seed (from `seed`, else the OS).
    A bot given as a package (or as a command line with `host_options.sandbox_commands`) is
    hosted: a fresh sandboxed process per game (maag.server.hosting)."""
    from maag.engine.seeds import derive_seed

    options = host_options or HostOptions()

    own = server is None
    if server is None:
        assert config is not None and storage is not None
        server = RefereeServer(config, storage)
        await server.start()
    names = display_names(spec_a, spec_b)
    match_id = match_id or secrets.token_hex(6)
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="maag-match-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    hosted: dict[str, Any] = {}
    tokens: dict[str, str] = {}
    host: Host | None = None
    workdir = Path(tempfile.mkdtemp(prefix="maag-hosted-"))
    result = MatchResult(names)
    base = seed if seed is not None else int.from_bytes(os.urandom(8), "little") & (2**63 - 1)
    pending: dict[asyncio.Future[GameSummary], int] = {}
    try:
        for spec, name in zip((spec_a, spec_b), names, strict=True):
            token = "maag_match_" + secrets.token_urlsafe(18)
            server.add_token(token, name)
            tokens[name] = token
            bot = hosted_bot(spec, name, options, workdir)
            if bot is not None:
                hosted[name] = bot
                continue
            procs.append(BotProcess(spec, name, token, concurrency, log_dir / f"{safe_name(name)}.log",
                                    pass_env=options.pass_env))
        if hosted:
            host = Host(server, options, log_dir=log_dir)
            await host.prepare(list(hosted.values()))
        for p in procs:
            p.start(server.config.host, server.port)
        next_game = 0
        loop = asyncio.get_running_loop()
        started = loop.time()
        absence = bot_absence(server)
        while next_game < games or pending:
            while next_game < games and len(pending) < concurrency:
                i = next_game
                seats = names if i % 2 == 0 else (names[1], names[0])
                fut: asyncio.Future[GameSummary]
                if host is not None:
                    fut = asyncio.ensure_future(host.play(
                        (seats[0], seats[1]), [hosted.get(seats[0]), hosted.get(seats[1])],
                        [tokens[seats[0]], tokens[seats[1]]], match_id=match_id,
                        seed=derive_seed(base, i // 2), tags={"Round": i + 1}, absence=absence))
                else:
                    fut = server.request_game(seats[0], seats[1], match_id=match_id,
                                              seed=derive_seed(base, i // 2), tags={"Round": i + 1},
                                              absence=absence)
                pending[fut] = i
                next_game += 1
            done, _ = await asyncio.wait(list(pending), timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                summary = fut.result()
                result.games.append((i, summary))
                if on_game is not None:
                    on_game(i, summary)
            for p in procs:
                if p.proc is not None and p.proc.poll() is not None:
                    p.exits += 1
                    if p.exits > max_restarts:
                        raise RuntimeError(f"bot {p.name!r} exited {p.exits} times (code "
                                           f"{p.proc.returncode}); its log {p.log_path} ends with:\n"
                                           f"{p.log_tail()}")
                    p.start(server.config.host, server.port)
            if not result.games and loop.time() - started > connect_timeout and not server.games:
                missing = [p.name for p in procs if not any(c.bot == p.name for c in server.clients)]
                raise RuntimeError(f"no game could start in {connect_timeout:.0f} s: bot(s) "
                                   f"{', '.join(missing) or '?'} did not connect; logs in {log_dir}")
    finally:
        if own and pending:
            # Stopped (Ctrl-C, an error) with hosted games in progress: they are aborted first,
            # as the server's stop would abort them, or closing their bots' sandboxes below
            # would decide them (lost by disconnect: the sandbox's end is final for a seat).
            server.rooms.abort_all("server shutdown")
        for fut in pending:
            fut.cancel()
        if pending:  # let hosted games end their sandboxes (processes, groups) before returning
            await asyncio.gather(*pending, return_exceptions=True)
        for p in procs:
            p.stop()
        if own:
            await server.stop()
        if host is not None:
            host.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return result

"""A match between two bots: an embedded referee server (or a running one), one process per
bot, N games with seats alternating and each seed played twice (once from each seat), and
the statistics of the result from the first bot's side.

A bot is named by a bundled agent (`random`, `greedy-action`, `mcts`, `oep:population=50`,
...; run with `maag bot run`, or with the referee's minibot while that is not installed) or
given as a command line (anything with a space in it), run through the shell with these
placeholders and environment variables filled in:

    {host} {port} {connect} {token} {concurrency}    MAAG_HOST MAAG_PORT MAAG_CONNECT MAAG_TOKEN
                                                     MAAG_CONCURRENCY MAAG_BOT

Each bot runs as one process playing up to `concurrency` games at once over one connection
(one connection per token, as the protocol says).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import os
import secrets
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maag.server.server import GameSummary, RefereeServer, ServerConfig
from maag.server.storage import Storage

__all__ = ["BotProcess", "MatchStats", "run_match", "match_stats", "bot_command"]

MINIBOT_AGENTS = ("random", "first")


def _bot_run_available() -> bool:
    """True once `maag bot run` is installed (maag.clients.cli registers it)."""
    try:
        mod = importlib.import_module("maag.clients.cli")
    except ImportError:
        return False
    return hasattr(mod, "register_bot")


def bot_command(spec: str, host: str, port: int, token: str, concurrency: int,
                name: str) -> tuple[str | list[str], bool]:
    """The command line that runs bot `spec`, and whether it goes through the shell."""
    connect = f"{host}:{port}"
    if any(ch.isspace() for ch in spec.strip()):
        text = spec
        for k, v in {"host": host, "port": str(port), "connect": connect, "token": token,
                     "concurrency": str(concurrency)}.items():
            text = text.replace("{" + k + "}", shlex.quote(v))
        return text, True
    if spec.split(":", 1)[0] not in MINIBOT_AGENTS and _bot_run_available():
        agent, _, settings = spec.partition(":")
        cmd = [sys.executable, "-m", "maag.server", "bot", "run", agent, "--connect", connect,
               "--token", token, "--concurrency", str(concurrency)]
        for kv in filter(None, settings.split(",")):
            cmd += ["--param", kv]
        return cmd, False
    return [sys.executable, "-m", "maag.server.minibot", "--connect", connect, "--token", token,
            "--agent", spec, "--concurrency", str(concurrency), "--name", name[:64]], False


class BotProcess:
    """One bot process, restarted if it exits while the match runs."""

    def __init__(self, spec: str, name: str, token: str, concurrency: int, log_path: Path) -> None:
        self.spec, self.name, self.token, self.concurrency = spec, name, token, concurrency
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.exits = 0

    def start(self, host: str, port: int) -> None:
        cmd, shell = bot_command(self.spec, host, port, self.token, self.concurrency, self.name)
        env = {**os.environ, "MAAG_HOST": host, "MAAG_PORT": str(port), "MAAG_CONNECT": f"{host}:{port}",
               "MAAG_TOKEN": self.token, "MAAG_CONCURRENCY": str(self.concurrency), "MAAG_BOT": self.name}
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


@dataclass(frozen=True, slots=True)
class MatchStats:
    """The result of a match from bot A's side."""

    games: int
    wins: int
    draws: int
    losses: int
    score: float
    score_ci95: tuple[float, float]
    elo: float | None
    """Elo difference A - B; None when unbounded (all games won or all lost)."""
    elo_ci95: tuple[float | None, float | None]
    los: float | None
    """Likelihood of superiority: P(A stronger than B), from wins and losses."""
    draw_ratio: float

    def as_dict(self) -> dict[str, Any]:
        r = lambda x: None if x is None else round(x, 4)  # noqa: E731
        return {"games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
                "score": r(self.score), "score_ci95": [r(self.score_ci95[0]), r(self.score_ci95[1])],
                "elo": None if self.elo is None else round(self.elo, 1) + 0.0,
                "elo_ci95": [None if e is None else round(e, 1) for e in self.elo_ci95],
                "los": r(self.los), "draw_ratio": r(self.draw_ratio)}


def _elo(score: float) -> float | None:
    if score <= 0.0 or score >= 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def match_stats(wins: int, draws: int, losses: int) -> MatchStats:
    """Score with a 95% interval (normal approximation over the per-game scores 1, 1/2, 0;
    Wilson's interval when every game ended alike), the Elo difference and its interval
    (the score interval mapped through the logistic Elo curve), LOS and the draw ratio."""
    from scipy.stats import norm

    n = wins + draws + losses
    if n == 0:
        return MatchStats(0, 0, 0, 0, 0.5, (0.0, 1.0), 0.0, (None, None), None, 0.0)
    z = float(norm.ppf(0.975))
    s = (wins + 0.5 * draws) / n
    var = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    if var > 0:
        half = z * math.sqrt(var / n)
        lo, hi = max(0.0, s - half), min(1.0, s + half)
    else:  # Wilson score interval
        centre = (s + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(s * (1 - s) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    los = None
    if wins + losses > 0:
        los = float(norm.cdf((wins - losses) / math.sqrt(wins + losses)))
    return MatchStats(n, wins, draws, losses, s, (lo, hi), _elo(s), (_elo(lo), _elo(hi)), los, draws / n)


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


def display_names(a: str, b: str) -> tuple[str, str]:
    """Names for the two bots: the specs (shortened), made distinct."""
    def short(spec: str) -> str:
        s = spec.strip()
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
                    connect_timeout: float = 60.0, max_restarts: int = 3) -> MatchResult:
    """Play `games` games between bots A and B with up to `concurrency` at once on an
    embedded server (started here from `config` and `storage` when `server` is None). Game
    i has A in seat 1 when i is even; games 2k and 2k+1 share a seed (from `seed`, else the OS)."""
    from maag.server.referee import derive_seed

    own = server is None
    if server is None:
        assert config is not None and storage is not None
        server = RefereeServer(config, storage)
        await server.start()
    names = display_names(spec_a, spec_b)
    match_id = match_id or secrets.token_hex(6)
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="maag-match-"))
    procs = []
    for spec, name in zip((spec_a, spec_b), names, strict=True):
        token = "maag_match_" + secrets.token_urlsafe(18)
        server.add_token(token, name)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
        procs.append(BotProcess(spec, name, token, concurrency, log_dir / f"{safe}.log"))
    result = MatchResult(names)
    base = seed if seed is not None else int.from_bytes(os.urandom(8), "little") & (2**63 - 1)
    try:
        for p in procs:
            p.start(server.config.host, server.port)
        pending: dict[asyncio.Future[GameSummary], int] = {}
        next_game = 0
        loop = asyncio.get_running_loop()
        started = loop.time()
        while next_game < games or pending:
            while next_game < games and len(pending) < concurrency:
                i = next_game
                seats = names if i % 2 == 0 else (names[1], names[0])
                fut = server.request_game(seats[0], seats[1], match_id=match_id,
                                          seed=derive_seed(base, i // 2), tags={"Round": i + 1})
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
        for p in procs:
            p.stop()
        if own:
            await server.stop()
    return result

"""`maag match BOT_A BOT_B`: play a match and report wins, draws and losses of BOT_A, its
score with a 95% confidence interval and the Elo difference with its interval.

BOT_A and BOT_B are bundled agents (random, greedy-action, greedy-turn, mcts, ne-mcts,
bb-mcts, oep, ...; settings as NAME:key=value,key=value) or command lines (quoted, with a
space), run with {connect} {token} {concurrency} (also {host} {port}) filled in, e.g.
"python3 mybot.py --connect {connect} --token {token}".

Seats alternate (BOT_A is seat 1 in odd-numbered games) and each seed is played from both
seats (with --connect, the running referee chooses seats and deals: docs/server.md).
Without --connect an embedded referee runs on 127.0.0.1; results and replays go to
the database (--db, default $MAAG_DB or the user's data directory), so `maag replay ID`
shows any game afterwards.

Examples:
    maag match random greedy-action --games 20 --tc 100ms
    maag match mcts oep --games 100 --tc 1s --concurrency 2 --json
    maag match mcts "python3 mybot.py --connect {connect} --token {token}" --games 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from maag.server.cli.common import (
    add_db_argument,
    add_game_arguments,
    add_host_arguments,
    game_config,
    host_options,
    policy,
    setup_logging,
)
from maag.server.compete.match import MatchResult, display_names, run_match
from maag.server.compete.remote import run_remote_match
from maag.server.net.server import GameSummary, ServerConfig
from maag.server.printable import printable
from maag.server.storage.base import open_storage
from maag.stats import pairwise
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


def register(sub: Any) -> None:
    p = sub.add_parser("match", help="play a match between two bots and rate it", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bot_a", metavar="BOT_A")
    p.add_argument("bot_b", metavar="BOT_B")
    p.add_argument("--games", "-n", type=int, default=10, help="number of games (default 10)")
    p.add_argument("--concurrency", "-j", type=int, default=1, help="games played at once (default 1)")
    p.add_argument("--json", action="store_true",
                   help="machine-readable: one JSON object per finished game, then the summary object last")
    p.add_argument("--connect", metavar="HOST:PORT", default=None,
                   help="play on a running referee (which pairs the bots itself) instead of an embedded one; "
                        "needs --token-a and --token-b")
    p.add_argument("--token-a", default=os.environ.get("MAAG_TOKEN_A"),
                   help="with --connect: BOT_A's token on that referee (default $MAAG_TOKEN_A)")
    p.add_argument("--token-b", default=os.environ.get("MAAG_TOKEN_B"),
                   help="with --connect: BOT_B's token on that referee (default $MAAG_TOKEN_B)")
    add_db_argument(p)
    add_game_arguments(p, "1s")
    add_host_arguments(p)
    p.add_argument("--log-dir", metavar="DIR", default=None,
                   help="keep the bots' output in DIR (hosted bots: NAME-gameN-seatS.log, one per game; "
                        "default: a new temporary folder, named at the end and in any error)")
    p.add_argument("-v", "--verbose", action="count", default=0, help="log the referee's work to stderr")
    p.set_defaults(func=run)


def _result_text(g: GameSummary) -> str:
    return {0: "1-0", 1: "0-1", -1: "1/2-1/2"}.get(g.winner, "*")  # type: ignore[arg-type]


def run(args: argparse.Namespace) -> int:
    if args.games < 1 or args.concurrency < 1:
        print("maag match: --games and --concurrency must be at least 1", file=sys.stderr)
        return 2
    if args.connect and not (args.token_a and args.token_b):
        print("maag match: --connect needs --token-a and --token-b (from `maag bot add` on that server)",
              file=sys.stderr)
        return 2
    try:
        hosting = host_options(args)
    except ValueError as e:
        print(f"maag match: {e}", file=sys.stderr)
        return 2
    setup_logging(args.verbose)
    names = display_names(args.bot_a, args.bot_b)
    cfg = ServerConfig(port=0, game=args.game, game_config=game_config(args), tc=args.tc, policy=policy(args),
                       auto_pair=False)
    console = Console(stderr=args.json)
    t0 = time.monotonic()
    progress = None if args.json else Progress(
        TextColumn(f"[bold]{escape(printable(names[0]))}[/] vs [bold]{escape(printable(names[1]))}[/]"),
        BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[score]}"), TimeElapsedColumn(), console=console, transient=True)
    task = progress.add_task("match", total=args.games, score="") if progress else None
    tally = [0, 0, 0]

    def on_game(i: int, g: GameSummary) -> None:
        a_seat = 0 if g.seats[0] == names[0] else 1
        if g.winner == -1:
            tally[1] += 1
        elif g.winner is not None:
            tally[0 if g.winner == a_seat else 2] += 1
        if args.json:
            print(json.dumps({"event": "game", "n": i + 1, "game_id": g.game_id, "seat1": g.seats[0],
                              "seat2": g.seats[1], "result": _result_text(g), "reason": g.reason,
                              "plies": g.plies, "think_ms": list(g.think_ms),
                              "transport_ms": list(g.transport_ms), "search": list(g.search),
                              "verdict": g.verdict, "host": g.host}), flush=True)
            return
        v = g.verdict
        why = f" [{g.seats[v['seat'] - 1]}: {v['kind']}: {v['detail']}]" if v else ""
        line = (f"game {i + 1}/{args.games} #{g.game_id} {g.seats[0]} vs {g.seats[1]}: "
                f"{_result_text(g)} {{{g.reason}}} {g.plies} actions{why}")
        assert progress is not None and task is not None
        # A verdict's detail can quote what a bot sent: no rich markup read in it ("[link=...]"),
        # its control characters shown as escapes.
        progress.console.print(printable(line), highlight=False, markup=False)
        s = pairwise(*tally)
        progress.update(task, advance=1, score=f"+{tally[0]} ={tally[1]} -{tally[2]}  score {s.score:.3f}")

    # The bots' logs: the folder given, or a new one that the match names when it ends (a
    # participant's traceback is there, and nowhere else).
    log_dir = Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="maag-match-"))

    async def go() -> MatchResult:
        if args.connect:
            host, _, port = args.connect.rpartition(":")
            res = await run_remote_match(host or "127.0.0.1", int(port), args.bot_a, args.bot_b,
                                         (args.token_a, args.token_b), args.games, args.concurrency,
                                         on_game=on_game, log_dir=log_dir)
            return res
        return await run_match(None, args.bot_a, args.bot_b, args.games, args.concurrency, config=cfg,
                               storage=open_storage(args.db), seed=args.seed, on_game=on_game,
                               host_options=hosting, log_dir=log_dir)

    try:
        if progress is not None:
            with progress:
                result = asyncio.run(go())
        else:
            result = asyncio.run(go())
    except (RuntimeError, ValueError) as e:  # incl. a package refused (PackageError), no sandbox here
        # A failed build's message ends with its log, a participant's output: shown escaped.
        print(f"maag match: {printable(str(e))}\nmaag match: the bots' logs: {log_dir}", file=sys.stderr)
        return 1
    w, d, lo = result.tally()
    stats = pairwise(w, d, lo)
    elapsed = time.monotonic() - t0
    if args.json:
        print(json.dumps({**stats.as_dict(), "bot_a": names[0], "bot_b": names[1], "tc": str(args.tc),
                          "game": args.game, "seconds": round(elapsed, 2), "search": result.search(),
                          "game_ids": sorted(g.game_id for _, g in result.games), "log_dir": str(log_dir)}))
        return 0
    _table(console, names, stats, result, str(args.tc), elapsed)
    console.print(f"the bots' logs: {escape(str(log_dir))}", highlight=False)
    return 0


def _fmt_elo(x: float) -> str:
    return ("+inf" if x > 0 else "-inf") if math.isinf(x) else f"{round(x) + 0:+d}"


def _table(console: Console, names: tuple[str, str], stats: Any, result: MatchResult, tc: str,
           elapsed: float) -> None:
    shown = [escape(printable(n)) for n in names]  # an archive's file name: no markup, no controls
    t = Table(title=f"{shown[0]} vs {shown[1]}: {stats.games} games, tc {tc}, {elapsed:.0f} s")
    for col in ("bot", "W", "D", "L", "score", "95% CI", "Elo", "95% CI", "LOS"):
        t.add_column(col, justify="left" if col == "bot" else "right")
    lo, hi = stats.score_ci95
    elo_lo, elo_hi = stats.elo_ci95
    t.add_row(shown[0], str(stats.wins), str(stats.draws), str(stats.losses), f"{stats.score:.3f}",
              f"[{lo:.3f}, {hi:.3f}]", _fmt_elo(stats.elo), f"[{_fmt_elo(elo_lo)}, {_fmt_elo(elo_hi)}]",
              f"{stats.los:.1%}")
    console.print(t)
    console.print(f"draw ratio {stats.draw_ratio:.1%}; game ids "
                  f"{min(g.game_id for _, g in result.games)}..{max(g.game_id for _, g in result.games)} "
                  f"(maag replay ID)", highlight=False)
    its = [f"{name} {rep['iterations_per_turn']:,.0f} ({rep['time_ms_per_turn']:,.0f} ms)"
           for name, rep in result.search().items() if rep is not None]
    if its:
        console.print(printable("search iterations per turn (search time), as the bots reported them: "
                                + ", ".join(its)), highlight=False, markup=False)

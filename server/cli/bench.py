"""`maag bench ...`: benchmarks. Figures go to docs/benchmarks.md; tests never time."""

from __future__ import annotations

import argparse
import json
from typing import Any

from maag.engine import registry
from maag.engine.machine import machine
from maag.server.bench import engine as bench_engine
from maag.server.bench import search as bench_search
from maag.server.bench import server as bench_server
from rich.console import Console
from rich.progress import Progress
from rich.table import Table


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="benchmarks (engine, ...)")
    bsub = p.add_subparsers(dest="bench", metavar="WHAT")
    e = bsub.add_parser("engine", help="rules-core throughput, one thread", description=bench_engine.__doc__)
    e.add_argument("--runs", type=int, default=5, help="runs per figure; the median is reported (default 5)")
    e.add_argument("--seconds", type=float, default=2.0, help="seconds per run (default 2)")
    e.add_argument("--game", default="heroes", choices=registry.names(), help="the game (default heroes)")
    e.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    e.set_defaults(func=run_engine)
    s = bsub.add_parser("search", help="search-kernel speed, one thread", description=bench_search.__doc__)
    s.add_argument("--budget-ms", type=float, default=500.0, help="time budget of each search (default 500)")
    s.add_argument("--states", type=int, default=20, help="mid-game states; medians over them (default 20)")
    s.add_argument("--game", default="heroes", choices=registry.names(), help="the game (default heroes)")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    s.set_defaults(func=run_search)
    bench_server.register_cli(bsub, machine)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def run_engine(args: argparse.Namespace) -> int:
    if args.json:
        res = bench_engine.run(args.runs, args.seconds, game_name=args.game)
        print(json.dumps({**res.as_dict(), "machine": machine()}))
        return 0
    console = Console()
    with Progress(console=console, transient=True) as prog:
        task = prog.add_task("bench engine", total=args.runs)
        res = bench_engine.run(args.runs, args.seconds, progress=lambda i: prog.update(task, completed=i),
                               game_name=args.game)
    table = Table(title=f"maag bench engine --game {args.game}: medians of {args.runs} runs of "
                        f"{args.seconds:g} s, one thread")
    label, against = res.comparison()
    table.add_column("figure")
    table.add_column("maag", justify="right")
    table.add_column(label, justify="right")
    table.add_column("ratio", justify="right")
    d = res.as_dict()
    for key in ("playout_actions_per_s", "playout_games_per_s", "legal_actions_per_s", "clone_apply_per_s"):
        ref = against.get(key)
        shown = (f"{ref:,.0f}", f"{d[key] / ref:.1f}x") if ref else ("-", "-")
        table.add_row(key, f"{d[key]:,.0f}", *shown)
    console.print(table)
    m = machine()
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0


def run_search(args: argparse.Namespace) -> int:
    if args.json:
        res = bench_search.run(args.budget_ms, args.states, game_name=args.game)
        print(json.dumps({**res.as_dict(), "machine": machine()}))
        return 0
    console = Console()
    with Progress(console=console, transient=True) as prog:
        task = prog.add_task("bench search", total=args.states)
        res = bench_search.run(args.budget_ms, args.states, progress=lambda i: prog.update(task, completed=i),
                               game_name=args.game)
    table = Table(title=f"maag bench search --game {args.game}: medians over {res.states} mid-game states, "
                        f"{args.budget_ms:g} ms per search, per second of search-thread CPU time")
    table.add_column("figure")
    table.add_column("maag", justify="right")
    table.add_column(bench_search.REFERENCE_NAME.get(args.game, "reference"), justify="right")
    table.add_column("ratio", justify="right")
    d = res.as_dict()
    table.add_column("wall clock", justify="right")
    for key in res.figures:
        ref = res.reference.get(key)
        shown = (f"{ref:,.0f}", f"{d[key] / ref:.1f}x") if ref else ("-", "-")
        table.add_row(key, f"{d[key]:,.0f}", *shown, f"{d['wall'][key]:,.0f}")
    console.print(table)
    m = machine()
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0

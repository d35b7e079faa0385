"""`maag bench ...`: benchmarks. Figures go to docs/benchmarks.md; tests never time."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from maag.engine import registry
from maag.engine.machine import machine
from maag.server.bench import engine as bench_engine
from maag.server.bench import fleet as bench_fleet
from maag.server.bench import hosting as bench_hosting
from maag.server.bench import iterations as bench_iterations
from maag.server.bench import ladder as bench_ladder
from maag.server.bench import search as bench_search
from maag.server.bench import server_cli as bench_server
from maag.server.bench import soak as bench_soak
from rich.console import Console
from rich.progress import Progress
from rich.table import Table


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="benchmarks (engine, ...)")
    bsub = p.add_subparsers(dest="bench", metavar="WHAT")
    e = bsub.add_parser("engine", help="rules-core throughput, one thread", description=bench_engine.__doc__)
    e.add_argument("--runs", type=int, default=5, help="runs per figure; the median is reported (default 5)")
    e.add_argument("--seconds", type=float, default=2.0, help="seconds per run (default 2)")
    e.add_argument("--game", default=registry.default(), choices=registry.names(),
                   help=f"the game (default {registry.default()})")
    e.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    e.set_defaults(func=run_engine)
    s = bsub.add_parser("search", help="search-kernel speed, one thread", description=bench_search.__doc__)
    s.add_argument("--budget-ms", type=float, default=500.0, help="time budget of each search (default 500)")
    s.add_argument("--states", type=int, default=20, help="mid-game states; medians over them (default 20)")
    s.add_argument("--game", default=registry.default(), choices=registry.names(),
                   help=f"the game (default {registry.default()})")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    s.set_defaults(func=run_search)
    it = bsub.add_parser("iterations", help="iterations per turn through the referee and in-process, "
                                            "on the same positions",
                         description=bench_iterations.__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    it.add_argument("agent", metavar="AGENT", help="NAME or NAME:key=value,... (as maag.bots parses it)")
    it.add_argument("--opponent", default="greedy-action", help="the other seat (default greedy-action)")
    it.add_argument("--turn-ms", type=float, default=1000.0,
                    help="the match's --tc and the in-process budget per turn (default 1000)")
    it.add_argument("--games", type=int, default=10,
                    help="games of the match, seats alternating (default 10)")
    it.add_argument("--map", default="a", choices=["a", "a-small", "a-tiny"], help="heroes map (default a)")
    it.add_argument("--draws", default="random", choices=["seeded", "random"], help="draws (default random)")
    it.add_argument("--seed", type=int, default=1,
                    help="seed of the match's deals and the searches (default 1)")
    it.add_argument("--positions", type=int, default=200,
                    help="positions searched again in-process, spread over the games (default 200)")
    it.add_argument("--replays", default=None, metavar="DB",
                    help="take the games stored in DB (e.g. `maag match ... --db DB`) instead of playing "
                         "a match; the agent is the seat named AGENT's display name, or --seat-name")
    it.add_argument("--seat-name", default=None, help="with --replays: the agent's name in those games")
    it.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    it.set_defaults(func=run_iterations)
    bench_server.register_cli(bsub, machine)
    bench_hosting.register_cli(bsub, machine)
    bench_ladder.register_cli(bsub, machine)
    bench_fleet.register_cli(bsub, machine)
    k = bsub.add_parser("soak", help="a referee's memory under a long load (bounded; not in CI)",
                        description=bench_soak.__doc__)
    k.add_argument("--games", type=int, default=200, help="concurrent games (default 200)")
    k.add_argument("--minutes", type=float, default=10.0, help="how long (default 10)")
    k.add_argument("--sample", type=float, default=10.0, metavar="S",
                   help="seconds between samples (default 10)")
    k.add_argument("--out-json", metavar="FILE", help="write the samples and the verdict as JSON")
    k.add_argument("--plot", metavar="PNG", help="plot memory against time (matplotlib)")
    k.set_defaults(func=run_soak)
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


def run_iterations(args: argparse.Namespace) -> int:
    if args.games < 1 or args.turn_ms <= 0 or args.positions < 1:
        print("maag bench iterations: --games and --positions must be at least 1 and --turn-ms positive",
              file=sys.stderr)
        return 2
    try:
        res = bench_iterations.run(args.agent, args.opponent, args.turn_ms, args.games,
                                   {"map": args.map, "draws": args.draws}, args.seed, args.positions,
                                   args.replays, args.seat_name)
    except RuntimeError as e:
        print(f"maag bench iterations: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({**res.as_dict(), "machine": machine()}))
        return 0
    console = Console()
    table = Table(title=f"maag bench iterations {args.agent}: {len(res.pairs)} positions of {res.games} "
                        f"games, {args.turn_ms:g} ms per turn")
    for col in ("search", "iterations per turn", "search ms per turn"):
        table.add_column(col, justify="left" if col == "search" else "right")
    means = res.means()
    for label, key in (("through the referee (bot process)", "match"),
                       ("in-process, same positions", "in_process")):
        d = means[key]
        table.add_row(label, f"{d['mean_iterations_per_turn']:,.0f}", f"{d['mean_search_ms_per_turn']:,.1f}")
    console.print(table)
    r, t = res.ratio, res.time_ratio
    console.print(f"referee / in-process: iterations {r[0]:.3f} [{r[1]:.3f}, {r[2]:.3f}], search time "
                  f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}] (95% bootstrap intervals over positions); "
                  f"load average {', '.join(map(str, res.load))} (before, between, after)", highlight=False)
    return 0


def run_soak(args: argparse.Namespace) -> int:
    console = Console()
    with Progress(*Progress.get_default_columns(), console=console, transient=True) as prog:
        task = prog.add_task(f"soak: {args.games} games", total=args.minutes * 60)
        res = bench_soak.run(args.games, args.minutes, args.sample,
                             progress=lambda done, _t: prog.update(task, completed=done))
    res["machine"] = machine()
    if args.out_json:
        with open(args.out_json, "w") as f:
            json.dump(res, f, indent=1)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.plot([t / 60 for t, _ in res["samples"]], [kib / 1024 for _, kib in res["samples"]], marker=".")
        ax.axvline(bench_soak.WARMUP_S / 60, color="grey", linestyle=":", label="end of warm-up")
        ax.set_xlabel("minutes")
        ax.set_ylabel("referee RSS (MiB)")
        ax.set_title(f"maag bench soak: {args.games} concurrent games")
        ax.set_ylim(bottom=0)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    t = Table(title=f"maag bench soak: {args.games} concurrent games for {args.minutes:g} min")
    for col in ("after warm-up MiB", "end MiB", "growth", "actions/s", "verdict"):
        t.add_column(col, justify="right")
    t.add_row(f"{res['rss_after_warmup_kib'] / 1024:.1f}", f"{res['rss_end_kib'] / 1024:.1f}",
              f"{res['growth']:+.1%}", f"{res['actions'] / (args.minutes * 60):,.0f}",
              "flat (within 10%)" if res["flat"] else "GROWS")
    console.print(t)
    m = res["machine"]
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0 if res["flat"] else 1

"""`maag arena AGENT AGENT [AGENT ...]`: an in-process round robin among bundled agents
(no referee, no bot processes), printing the score matrix with 95% confidence intervals.

Agents are bundled agent names with optional settings, NAME or NAME:key=value,key=value
(random, random-meta, egreedy, greedy-action, greedy-turn, mcts, ne-mcts, bb-mcts,
collapse-mcts, oep, emcts, fh-emcts, ucb, ...). `preset=paper` gives the source paper's
settings (mcts, ne-mcts, bb-mcts, oep, emcts, fh-emcts); settings given with it still win
("oep:preset=paper,population=50"). Every pair plays --games games, half with each agent
as player 1, each deal seed from both seats. A cell is the row agent's score against the
column agent, (wins + draws/2) / games, with its 95% Wilson interval.

Iterations are in each kernel's unit (MCTS iterations, OEP generations of 50 new genomes,
EMCTS genomes); --agent-iterations gives one agent its own count, so that kernels compare
at equal work: OEP's 200 generations are 100 + 200 x 50 = 10,100 genomes.

Examples:
    maag arena random greedy-action mcts --games 20 --turn-ms 200
    maag arena greedy-turn ne-mcts bb-mcts oep --games 40 --turn-ms 500 --jobs 2 --json
    maag arena "mcts:c=0.2" "mcts:c=1" --games 100 --iterations 20000
    maag arena emcts:preset=paper oep:preset=paper --turn-ms 0 --iterations 200 \
        --agent-iterations emcts:preset=paper=10100 --games 100
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from maag.bots import AgentError, parse_agent
from maag.engine.machine import machine
from maag.lab.arena import ArenaConfig, ArenaResult, GameResult, run_arena
from rich.console import Console
from rich.table import Table


def register(sub: Any) -> None:
    p = sub.add_parser("arena", help="in-process round robin among bundled agents", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("agents", nargs="+", metavar="AGENT", help="NAME or NAME:key=value,...")
    p.add_argument("--games", "-n", type=int, default=10,
                   help="games per pair, split over both seats (default 10)")
    p.add_argument("--turn-ms", type=float, default=500.0, help="time budget per turn in ms (default 500)")
    p.add_argument("--iterations", type=int, default=None,
                   help="iteration budget per turn (kernel units) instead of time; with --turn-ms 0 "
                        "the games are reproducible")
    p.add_argument("--agent-iterations", action="append", default=[], metavar="AGENT=N",
                   help="iteration budget of one agent (as written among AGENT), instead of "
                        "--iterations (repeatable)")
    p.add_argument("--map", default="a", choices=["a", "a-small", "a-tiny"], help="heroes map (default a)")
    p.add_argument("--draws", default="seeded", choices=["seeded", "random"],
                   help="card draws: the reference's seeded rule (default) or random")
    p.add_argument("--view", default="full", choices=["full", "observation"],
                   help="what agents search from: the full state (default) or their seat's observation")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="games played at once, one process each (default 1)")
    p.add_argument("--seed", type=int, default=1, help="seed of the deals (default 1)")
    p.add_argument("--json", action="store_true",
                   help="machine-readable: one JSON object per finished game, then the summary object last")
    p.set_defaults(func=run)


def _progress_line(r: GameResult, done: int, total: int, names: list[str]) -> str:
    p1, p2 = (names[r.a], names[r.b]) if r.a_seat == 0 else (names[r.b], names[r.a])
    res = "draw" if r.winner is None else f"{names[r.winner]} wins"
    extra = " (forfeit: illegal plan)" if r.forfeit else ""
    return f"game {done}/{total}: {p1} vs {p2}: {res} in {r.turns} turns{extra}"


def _table(res: ArenaResult) -> Table:
    names = res.agents
    cfg = res.config
    budget = f"{cfg.turn_ms:g} ms" if cfg.turn_ms else f"{cfg.iterations} iterations"
    t = Table(title=f"maag arena: score of row vs column, 95% Wilson interval ({budget} per turn)")
    t.add_column("agent")
    for n in names:
        t.add_column(n, justify="center")
    t.add_column("overall", justify="center")
    for i, n in enumerate(names):
        cells = []
        for j in range(len(names)):
            if i == j:
                cells.append("-")
                continue
            s, g, (lo, hi) = res.score(i, j)
            cells.append(f"{100 * s:.0f}% [{100 * lo:.0f}-{100 * hi:.0f}]")
        s, g, (lo, hi) = res.overall(i)
        cells.append(f"{100 * s:.0f}% [{100 * lo:.0f}-{100 * hi:.0f}]")
        t.add_row(n, *cells)
    return t


def run(args: argparse.Namespace) -> int:
    if len(args.agents) < 2 or args.games < 1 or args.jobs < 1:
        print("maag arena: give at least two agents; --games and --jobs must be at least 1", file=sys.stderr)
        return 2
    turn_ms = args.turn_ms if args.turn_ms and args.turn_ms > 0 else None
    if turn_ms is None and args.iterations is None:
        print("maag arena: give --turn-ms or --iterations", file=sys.stderr)
        return 2
    per_agent: dict[str, int] = {}
    for item in args.agent_iterations:
        spec, _, n = item.rpartition("=")
        if spec not in args.agents or not n.isdigit() or int(n) < 1:
            print(f"maag arena: --agent-iterations wants AGENT=N with AGENT one of the agents and N >= 1, "
                  f"not {item!r}", file=sys.stderr)
            return 2
        per_agent[spec] = int(n)
    cfg = ArenaConfig(turn_ms=turn_ms, iterations=args.iterations,
                      game_config={"map": args.map, "draws": args.draws}, view=args.view,
                      agent_iterations=per_agent)
    names = list(args.agents)

    def on_game(r: GameResult, done: int, total: int) -> None:
        if args.json:
            print(json.dumps({"type": "game", "index": r.index, "a": names[r.a], "b": names[r.b],
                              "a_seat": r.a_seat + 1, "seed": r.seed,
                              "winner": None if r.winner is None else names[r.winner],
                              "turns": r.turns, "forfeit": r.forfeit, "seconds": round(r.seconds, 2)}),
                  flush=True)
        else:
            print(_progress_line(r, done, total, names), file=sys.stderr, flush=True)

    try:
        res = run_arena(names, args.games, cfg, jobs=args.jobs, seed=args.seed, on_game=on_game)
    except AgentError as e:
        print(f"maag arena: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"type": "summary", **res.as_dict(), "machine": machine()}))
        return 0
    console = Console()
    console.print(_table(res))
    its = ", ".join(f"{n} {res.mean_iterations(i):,.0f}" for i, n in enumerate(names)
                    if parse_agent(n).spec.needs_budget)
    console.print(f"{len(res.games)} games in {res.seconds:.0f} s; mean search iterations per turn: {its}")
    return 0

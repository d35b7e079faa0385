"""The command line of `maag bench server` (registered by `maag bench`): its options, and
its figures as tables or one JSON object (what the runs of server.py measure)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from maag.server.bench import server as bench_server
from maag.server.bench.server import LEVELS, run, run_watched

__all__ = ["register_cli"]


def register_cli(bsub: Any, machine: Callable[[], dict[str, Any]]) -> None:
    p = bsub.add_parser("server", help="referee throughput and latency on loopback",
                        description=bench_server.__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", default=",".join(map(str, LEVELS)), metavar="N,N,...",
                   help="concurrent games per level (default 1,10,100)")
    p.add_argument("--mode", choices=("act", "turn", "lean", "both"), default="both",
                   help="bots send one act per your_turn, whole turns, or both in turn (default both); "
                        "lean: act bots that decode only what they use (a fraction of the CPU: on a small "
                        "machine, what --servers K gains is then the referees')")
    p.add_argument("--runs", type=int, default=1, help="runs per figure; the median is reported (default 1)")
    p.add_argument("--seconds", type=float, default=5.0, help="measured seconds per run (default 5)")
    p.add_argument("--servers", type=int, default=1, metavar="K",
                   help="referee processes sharing one port (SO_REUSEPORT) and one database (default 1); "
                        "a bot is paired only within its process, so a level needs several games each")
    p.add_argument("--nice-bots", action="store_true",
                   help="run the bots' processes at the lowest scheduling priority, so that the referee "
                        "processes have the cores first (to see how throughput grows with --servers on a "
                        "machine whose cores the bots share)")
    p.add_argument("--c-bots", action="store_true",
                   help="act mode: the bots are the C bench bot (server/bench/c/bench_bot.c, built with cc "
                        "on first use), a few microseconds per action, so that on a machine of few cores the "
                        "referees, not the bots, bound what --servers K plays")
    p.add_argument("--spectators", type=int, default=0, metavar="N",
                   help="also measure each level with N WebSocket spectators of the live games (the referee "
                        "serves its web view); reports both throughputs and their ratio (default 0: none)")
    p.add_argument("--no-bare", action="store_true",
                   help="leave out the bare exchange (by default each run of the referee is followed by one "
                        "of a bare asyncio server answering the same bots, and the CPU per message of both "
                        "is reported with their ratio)")
    p.add_argument("--floor", action="store_true",
                   help="also measure the two-write exchange after each bare run (the bare exchange writing "
                        "an event to a second connection for every frame, as a referee must for an act): its "
                        "CPU per message and its ratio to the bare exchange's")
    p.add_argument("--events", choices=("turn", "action", "both"), default="turn",
                   help="how the bots hear the opponent's actions: once its turn ends, in one turn_events "
                        "(turn, the default, as the SDKs ask), each as it is applied (action, as bots of "
                        "protocol version 1 do), or both in turn")
    p.add_argument("--json", action="store_true",
                   help="one JSON object keyed by the number of games (act mode; turn mode under 'turn'; "
                        "with --events both, the runs with live events under 'action_events'; "
                        "with --spectators, the watched runs under 'watched')")
    p.set_defaults(func=lambda args: _run_cli(args, machine))


def _run_cli(args: argparse.Namespace, machine: Callable[[], dict[str, Any]]) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    levels = tuple(int(x) for x in args.games.split(","))
    modes = ("act", "turn") if args.mode == "both" else (args.mode,)
    if args.c_bots and modes != ("act",):
        raise SystemExit("maag bench server: --c-bots plays act mode only: add --mode act")
    if args.c_bots and args.spectators > 0:
        raise SystemExit("maag bench server: --c-bots is not measured with --spectators")
    hears = ("turn", "action") if args.events == "both" else (args.events,)
    sets = [(mode, hear) for hear in hears for mode in modes]
    results: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    console = Console(stderr=args.json)
    if args.spectators > 0:
        return _run_watched_cli(args, levels, modes, console, machine)
    with Progress(console=console, transient=True) as prog:
        per_mode = len(levels) * args.runs * (1 if args.no_bare else 3 if args.floor else 2)
        task = prog.add_task("bench server", total=per_mode * len(sets))
        for i, (mode, hear) in enumerate(sets):
            base = i * per_mode

            def step(done: int, _total: int, base: int = base) -> None:
                prog.update(task, completed=base + done)

            results[mode, hear] = run(levels, args.runs, 1.0, args.seconds, mode=mode, progress=step,
                                      servers=args.servers, bare=not args.no_bare, nice_bots=args.nice_bots,
                                      c_bots=args.c_bots, floor=args.floor, hear=hear)
    if args.json:
        def by_mode(hear: str) -> dict[str, Any]:
            got: dict[str, Any] = {**results[modes[0], hear], "mode": modes[0], "events": hear}
            if len(modes) > 1:
                got["turn"] = results["turn", hear]
            return got

        out: dict[str, Any] = {**by_mode(hears[0]), "machine": machine()}
        if len(hears) > 1:
            out["action_events"] = by_mode("action")
        print(json.dumps(out))
        return 0
    nan = float("nan")
    for mode, hear in sets:
        heard = "the opponent once a turn" if hear == "turn" else "each opponent's action live"
        t = Table(title=f"maag bench server ({mode} mode, {heard}, {args.servers} referee process(es)): "
                        f"medians of {args.runs} run(s) of {args.seconds:g} s")
        for col in ("games", "actions/s", f"{mode}s per referee core/s", "referee CPU µs per " + mode,
                    "bare CPU µs per message", "ratio", "two-write floor ratio", "referee p50 ms",
                    "referee p99 ms", "cpu p50 ms", "cpu p99 ms", "bot rtt p50 ms", "bot rtt p99 ms"):
            t.add_column(col, justify="right")
        for g, r in results[mode, hear].items():
            t.add_row(g, f"{r['actions_per_s']:,.0f}", f"{r['messages_per_core_s']:,.0f}",
                      f"{r['cpu_us_per_message']:.1f}", f"{r.get('bare_cpu_us_per_message', nan):.1f}",
                      f"{r.get('cpu_ratio', nan):.2f}", f"{r.get('floor_ratio', nan):.2f}",
                      f"{r['p50_ms']:.3f}", f"{r['p99_ms']:.3f}",
                      f"{r['cpu_p50_ms']:.3f}", f"{r['cpu_p99_ms']:.3f}",
                      f"{r['rtt_p50_ms']:.2f}", f"{r['rtt_p99_ms']:.2f}")
        console.print(t)
    m = machine()
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0


def _run_watched_cli(args: argparse.Namespace, levels: tuple[int, ...], modes: tuple[str, ...], console: Any,
                     machine: Callable[[], dict[str, Any]]) -> int:
    """`--spectators N`: each level without and with N spectators, alternating."""
    from rich.progress import Progress
    from rich.table import Table

    results: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    with Progress(console=console, transient=True) as prog:
        task = prog.add_task("bench server", total=2 * len(levels) * args.runs * len(modes))
        for i, mode in enumerate(modes):
            base = i * 2 * len(levels) * args.runs

            def step(done: int, _total: int, base: int = base) -> None:
                prog.update(task, completed=base + done)

            results[mode] = run_watched(levels, args.spectators, args.runs, 1.0, args.seconds, step, mode,
                                        args.servers)
    if args.json:
        print(json.dumps({**results[modes[0]], "mode": modes[0], "spectators": args.spectators,
                          **({"turn": results["turn"]} if len(modes) > 1 else {}), "machine": machine()}))
        return 0
    for mode in modes:
        r = results[mode]
        t = Table(title=f"maag bench server ({mode} mode) without and with {args.spectators} spectators: "
                        f"medians of {args.runs} run(s) of {args.seconds:g} s")
        for col in ("games", "actions/s", f"actions/s, {args.spectators} watching", "ratio",
                    "referee p99 ms", "referee p99 ms watched", "frames pushed/s"):
            t.add_column(col, justify="right")
        for g in r["plain"]:
            p, w = r["plain"][g], r["watched"][g]
            t.add_row(g, f"{p['actions_per_s']:,.0f}", f"{w['actions_per_s']:,.0f}",
                      f"{r['ratio'][g]['actions_per_s']:.3f}", f"{p['p99_ms']:.3f}", f"{w['p99_ms']:.3f}",
                      f"{w['spectator_frames_per_s']:,.0f}")
        console.print(t)
    m = machine()
    console.print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}")
    return 0

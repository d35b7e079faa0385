"""Benchmarks of hosted bots (docs/benchmarks.md, "Hosted bots"):

- `maag bench ponder`: fair clocks. A bundled agent (ne-mcts by default) plays a bot package
  through the real referee, as many games at once as the machine has cores, against (a) a
  quiet package that ends its turns at once, (b) a spinner that keeps one process per core
  busy all game long, with `--ponder allow`, and (c) the same spinner with `--ponder freeze`.
  The figure is the agent's mean search iterations per turn (as it reports them); the
  conditions alternate, `--runs` times each, medians reported with each condition's ratio to
  the quiet one.
- `maag bench sandbox`: the cost of the sandbox. The same package started per game with and
  without the sandbox (the same socket handed in, the same referee): the time from the
  process's start to its hello, and the referee's CPU per message, medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PACKAGES = Path(__file__).resolve().parent / "packages"

__all__ = ["run_ponder", "run_sandbox_cost", "register_cli"]


async def _match(pkg: Path, agent: str, games: int, concurrency: int, tc: str, ponder: str,
                 db: Path, log_dir: Path) -> dict[str, Any]:
    from maag.server.compete.match import run_match
    from maag.server.hosting.api import HostOptions
    from maag.server.net.server import ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.storage.base import SQLiteStorage

    cfg = ServerConfig(port=0, tc=TimeControl.parse(tc), auto_pair=False)
    res = await run_match(None, str(pkg), agent, games, concurrency, config=cfg, storage=SQLiteStorage(db),
                          log_dir=log_dir, host_options=HostOptions(ponder=ponder))
    rep = res.search()
    name = [n for n in rep if n != pkg.name][0]
    overloaded = sum(1 for _, g in res.games if g.host and g.host.get("overloaded"))
    return {"iterations_per_turn": (rep[name] or {}).get("iterations_per_turn"), "games": len(res.games),
            "overloaded_games": overloaded}


def run_ponder(agent: str = "ne-mcts", runs: int = 3, games: int | None = None, tc: str = "500ms",
               progress: Any = None) -> dict[str, Any]:
    ncpu = len(os.sched_getaffinity(0))
    games = games or 2 * ncpu
    conditions = [("quiet", PACKAGES / "quiet", "allow"),
                  ("spinner, --ponder allow", PACKAGES / "spinner", "allow"),
                  ("spinner, --ponder freeze", PACKAGES / "spinner", "freeze")]
    figures: dict[str, list[float]] = {c[0]: [] for c in conditions}
    overloaded: dict[str, int] = {c[0]: 0 for c in conditions}
    with tempfile.TemporaryDirectory(prefix="maag-bench-ponder-") as tmp:
        step = 0
        for r in range(runs):
            for label, pkg, ponder in conditions:
                db = Path(tmp) / f"{r}-{step}.sqlite3"
                out = asyncio.run(_match(pkg, agent, games, ncpu, tc, ponder, db, Path(tmp) / "logs"))
                step += 1
                if out["iterations_per_turn"] is not None:
                    figures[label].append(float(out["iterations_per_turn"]))
                overloaded[label] += out["overloaded_games"]
                if progress is not None:
                    progress(step, runs * len(conditions))
    medians = {k: statistics.median(v) if v else None for k, v in figures.items()}
    base = medians["quiet"]
    return {"agent": agent, "tc": tc, "games_at_once": ncpu, "games_per_run": games, "runs": runs,
            "iterations_per_turn": figures, "median": medians,
            "ratio_to_quiet": {k: (round(v / base, 3) if v and base else None) for k, v in medians.items()},
            "overloaded_games": overloaded}


async def _start_cost(pkg: Path, sandboxed: bool, n: int) -> dict[str, list[float]]:
    """Times to hello (ms) of `n` processes of `pkg`, and the referee's CPU per message (ms)
    over one game each against the referee's minibot."""
    from maag.server.hosting.api import Host, HostOptions, hosted_bot
    from maag.server.net.server import RefereeServer, ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.sandbox.environment import bot_environment
    from maag.server.storage.base import SQLiteStorage

    with tempfile.TemporaryDirectory(prefix="maag-bench-sandbox-") as tmp:
        cfg = ServerConfig(port=0, tc=TimeControl.parse("200ms"), auto_pair=False, record_latency=True)
        server = RefereeServer(cfg, SQLiteStorage(Path(tmp) / "b.sqlite3"))
        await server.start()
        token = "bench_" + os.urandom(8).hex()
        server.add_token(token, "pkg")
        hellos: list[float] = []
        try:
            if sandboxed:
                from maag.server.hosting.api import sandbox_env

                host = Host(server, HostOptions(), log_dir=Path(tmp))
                bot = hosted_bot(str(pkg), "pkg", HostOptions(), Path(tmp))
                assert bot is not None
                from maag.server.sandbox.jail import Jail, JailConfig

                for _ in range(n):
                    ours, theirs = socket.socketpair()
                    fut = server.attach(ours)
                    env = sandbox_env(bot, token, cfg.game, theirs.fileno(), HostOptions())
                    j = Jail(JailConfig(bot.argv, bot.folder, env, HostOptions().limits,
                                        extra_fds=[theirs.fileno()]), host.cg, Path(tmp) / "j.log")
                    t0 = time.perf_counter()
                    await j.start()
                    theirs.close()
                    await asyncio.wait_for(fut, 30)
                    hellos.append((time.perf_counter() - t0) * 1000)
                    await j.close()
                host.close()
            else:
                for _ in range(n):
                    ours, theirs = socket.socketpair()
                    fut = server.attach(ours)
                    env = bot_environment({"MAAG_CONNECT": f"fd:{theirs.fileno()}", "MAAG_TOKEN": token,
                                           "MAAG_GAME": cfg.game, "PYTHONPATH": str(_sdk_root())})
                    t0 = time.perf_counter()
                    proc = await asyncio.create_subprocess_exec(
                        sys.executable, "bot.py", cwd=pkg, env=env, pass_fds=[theirs.fileno()],
                        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
                    theirs.close()
                    await asyncio.wait_for(fut, 30)
                    hellos.append((time.perf_counter() - t0) * 1000)
                    proc.kill()
                    await proc.wait()
        finally:
            await server.stop()
    return {"hello_ms": hellos}


def _sdk_root() -> Path:
    """The folder that holds maag/protocol and maag/clients (a plain bot's PYTHONPATH)."""
    from maag.server.sandbox.jail import sdk_paths

    return sdk_paths()["protocol"].parent


async def _referee_cpu(sandboxed: bool, games: int, ponder: str) -> list[float]:
    """The referee's CPU per message (ms, its event-loop thread) over `games` games of the
    random package against the referee's random minibot, the package hosted or run as a
    plain command line."""
    from maag.server.compete.match import run_match
    from maag.server.hosting.api import HostOptions
    from maag.server.net.server import RefereeServer, ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.storage.base import SQLiteStorage

    pkg = PACKAGES / "random"
    with tempfile.TemporaryDirectory(prefix="maag-bench-referee-") as tmp:
        cfg = ServerConfig(port=0, tc=TimeControl.parse("1s"), auto_pair=False, record_latency=True)
        server = RefereeServer(cfg, SQLiteStorage(Path(tmp) / "r.sqlite3"))
        await server.start()
        try:
            spec = str(pkg) if sandboxed else f"cd {pkg} && exec {sys.executable} bot.py"
            # The plain command line finds the SDK on the PYTHONPATH it is passed; the sandbox has its own.
            passed = () if sandboxed else ("PYTHONPATH",)
            await run_match(server, spec, "random", games, 1, log_dir=Path(tmp) / "logs",
                            host_options=HostOptions(ponder=ponder, pass_env=passed))
        finally:
            await server.stop()
        return list(server.cpu_ms)


def run_sandbox_cost(n: int = 20, rounds: int = 3, games: int = 4) -> dict[str, Any]:
    """Start-up to hello, sandboxed and not, alternating `rounds` times `n` processes each;
    and the referee's CPU per message with the bot hosted (ponder allow and freeze) and not,
    `games` games each round."""
    pkg = PACKAGES / "quiet"
    out: dict[str, list[float]] = {"plain": [], "sandboxed": []}
    cpu: dict[str, list[float]] = {"plain": [], "sandboxed": [], "sandboxed, --ponder freeze": []}
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(_sdk_root())  # the plain command line's SDK (as the sandbox's)
    try:
        for _ in range(rounds):
            for label, sb in (("plain", False), ("sandboxed", True)):
                out[label] += asyncio.run(_start_cost(pkg, sb, n))["hello_ms"]
            for label, sb, ponder in (("plain", False, "allow"), ("sandboxed", True, "allow"),
                                      ("sandboxed, --ponder freeze", True, "freeze")):
                cpu[label] += asyncio.run(_referee_cpu(sb, games, ponder))
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    med = {k: round(statistics.median(v), 1) for k, v in out.items()}
    cpu_med = {k: round(statistics.median(v) * 1000, 1) for k, v in cpu.items() if v}
    return {"processes": n * rounds, "hello_ms_median": med,
            "sandbox_extra_ms": round(med["sandboxed"] - med["plain"], 1),
            "referee_cpu_us_per_message_median": cpu_med,
            "messages": {k: len(v) for k, v in cpu.items()}}


def register_cli(bsub: Any, machine: Any) -> None:
    p = bsub.add_parser("ponder", help="hosted bots: a spinning opponent's cost to an agent, --ponder allow "
                                       "against freeze", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default="ne-mcts", help="the measured agent (default ne-mcts)")
    p.add_argument("--runs", type=int, default=3, help="runs per condition, alternating (default 3)")
    p.add_argument("--games", type=int, default=None, help="games per run (default twice the cores)")
    p.add_argument("--tc", default="500ms", help="time per turn (default 500ms)")
    p.add_argument("--json", action="store_true")

    def ponder(args: argparse.Namespace) -> int:
        import json

        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as prog:
            task = prog.add_task("bench ponder", total=None)
            res = run_ponder(args.agent, args.runs, args.games, args.tc,
                             progress=lambda i, n: prog.update(task, completed=i, total=n))
        res["machine"] = machine()
        if args.json:
            print(json.dumps(res))
            return 0
        print(f"{args.agent} at {args.tc} a turn, {res['games_at_once']} games at once, "
              f"medians of {args.runs} runs:")
        for k, v in res["median"].items():
            print(f"  against {k:26s} {v:12,.0f} iterations/turn  ({res['ratio_to_quiet'][k]:.3f} of quiet; "
                  f"{res['overloaded_games'][k]} game(s) marked overloaded)")
        return 0

    p.set_defaults(func=ponder)
    s = bsub.add_parser("sandbox", help="hosted bots: start-up cost of the sandbox", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--processes", type=int, default=20, help="processes per round and kind (default 20)")
    s.add_argument("--rounds", type=int, default=3, help="rounds, alternating (default 3)")
    s.add_argument("--json", action="store_true")

    def cost(args: argparse.Namespace) -> int:
        import json

        res = run_sandbox_cost(args.processes, args.rounds)
        res["machine"] = machine()
        if args.json:
            print(json.dumps(res))
        else:
            m = res["hello_ms_median"]
            print(f"start to hello, median of {res['processes']} processes each: plain {m['plain']} ms, "
                  f"sandboxed {m['sandboxed']} ms: the sandbox adds {res['sandbox_extra_ms']} ms")
            for k, v in res["referee_cpu_us_per_message_median"].items():
                print(f"referee CPU per message, {k}: {v} µs (median of {res['messages'][k]} messages)")
        return 0

    s.set_defaults(func=cost)

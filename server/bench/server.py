"""`maag bench server`: referee throughput and latency on loopback.

For each level (1, 10 and 100 concurrent games), a fresh referee runs as its own process
(`maag serve`, SQLite in a temporary folder, no time limit, no rate limit) and one client
process (two from 10 games on) opens two connections per game: random bots that ask for the legal actions and
answer every `your_turn` with one `act` (the most messages per action a bot can make).
With `c_bots` the act bots are instead one C program per client process
(server/bench/c/bench_bot.c, built with the system's C compiler on first use and kept in
~/.cache/maag): the same moves at a few microseconds each, so that on a machine of few cores
the referees, not their bots, bound the throughput.
(`mode` "turn": bots that send each whole random turn as one `turn` message instead,
played out on the engine's copy of the observation; "lean": act bots that decode only the keys
they use and the legal action they pick, skipping the observation unread, for measuring what
several referee processes gain on a machine too small for ordinary bots to keep them busy.)
The bots ask to hear the opponent's actions once its turn ends (hello `events` "turn", as
the SDKs do: one `turn_events` per turn instead of one `event` per action); with `hear`
"action" (`--events action`), each as it is applied, as bots of protocol version 1 do.
The referee pairs them and they play
game after game. Once every bot is logged in, after a warm-up, for `seconds`:

- actions_per_s: actions the referee accepted, counted by the bots, per second;
- p50_ms / p99_ms: referee time, measured inside the referee from the moment a bot's
  message is read to the moment its replies (result, events, the next your_turn) are
  written, for every act or turn (wall clock: it includes any time the referee's process
  was not running because other processes had the cores);
- cpu_p50_ms / cpu_p99_ms: the same interval in CPU time of the referee's thread (the
  work itself, without preemption);
- rtt_p50_ms / rtt_p99_ms: the same seen by the bots, from writing an act to reading the
  next your_turn of that game (includes both processes' event loops and the kernel);
- cpu_load, bots_cpu_load: the cores the referee processes, and the bots' processes, used
  over the window (CPU seconds per second); other_cpu_load: the cores the rest of the
  machine used meanwhile (/proc/stat's busy time less those two: interrupts, and whatever
  else runs; near 0.1 on a quiet machine, it says whether a run shared the cores);
- cpu_us_per_message: the referee process's whole CPU time (user and system, all threads:
  /proc) per bot message (`act` or `turn`) over the measured window; messages_per_core_s:
  the messages one referee core takes per second at that cost;
- bare_cpu_us_per_message and cpu_ratio: each run of the referee is followed by one of the
  bare exchange (server/bench/bare.py: an asyncio server on the same event loop that decodes
  each frame and answers it with a ready-made `your_turn`) with the same bots; the ratio of
  the referee's CPU per message to the bare exchange's is taken per run, then the median
  (`--no-bare` leaves it out);
- floor_cpu_us_per_message and floor_ratio (`--floor`): each bare run is followed by one of the
  two-write exchange (the bare exchange that also writes an action `event` to the other
  connection of a pair for every frame: the least any referee does for an act, two writes to
  two sockets) and its CPU per message over the bare exchange's, the median of the runs'
  ratios: how much of `cpu_ratio` is the I/O a referee cannot skip.

`--servers K` runs K referee processes on one port (SO_REUSEPORT) and one database; the
bots' connections spread over them and each pairs its own. `--nice-bots` starts the bots'
processes at the lowest scheduling priority, so that on a machine whose cores the bots
share the referees have them first: what K processes gain over one is then theirs.

With `spectators` N > 0 the referee also serves its web view (`--web`) and one more process
holds N WebSocket spectators of the running games (server/bench/spectators.py), started
before the bots at the lowest scheduling priority (people's browsers run on their own
machines, not on the referee's cores); `spectator_frames_per_s` counts the snapshots they
were pushed per second during the bots' measured window. `maag bench server --spectators N`
measures each level without and with them, alternating, and reports the ratio of the
throughputs.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from maag.server.bench.processes import (
    bench_db,
    client_counts,
    expect_line,
    free_port,
    lowest_priority,
    machine_busy_s,
    process_cpu_s,
    start_bare,
    start_clients,
    start_referee,
)

__all__ = ["LEVELS", "run", "run_level", "run_watched"]

LEVELS = (1, 10, 100)


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def run_level(games: int, warmup: float, seconds: float, mode: str = "act",
              servers: int = 1, spectators: int = 0, bare: bool = False,
              nice_bots: bool = False, c_bots: bool = False, events: bool = False,
              hear: str = "turn") -> dict[str, Any]:
    """One measurement at `games` concurrent games (see the module docstring), refereed by
    `servers` processes on one port (SO_REUSEPORT) and one database, watched by
    `spectators` WebSocket spectators (through the first referee's web view); with `bare`,
    the same bots against the bare exchange (server/bench/bare.py) instead of a referee, with
    `events` too the two-write exchange. `hear`: what the bots' hello asks (`events` "turn"
    or "action")."""
    with tempfile.TemporaryDirectory(prefix="maag-bench-") as d:
        tmp = Path(d)
        db, tokens = bench_db(tmp, 2 * games, "b")
        procs: list[subprocess.Popen[bytes]] = []
        stats_files = [tmp / f"stats{i}.json" for i in range(servers)]
        port = 0
        try:
            web = free_port() if spectators > 0 and not bare else 0
            if bare:
                proc, port = start_bare(tmp, events)
                procs.append(proc)
                stats_files = []
            for i in range(servers if not bare else 0):
                proc, port = start_referee(tmp, db, f"referee{i}", port, "--stats-out", str(stats_files[i]),
                                           *(["--reuse-port"] if servers > 1 else []),
                                           *(["--web", f"127.0.0.1:{web}"] if web and i == 0 else []))
                procs.append(proc)
            # The bots' work is spread over two processes from 10 games on, so that they do
            # not become the bottleneck on a 2-core machine.
            k = 2 if games >= 10 else 1
            watchers = None
            if spectators > 0:
                cmd = [sys.executable, "-m", "maag.server.bench.spectators", f"http://127.0.0.1:{web}",
                       str(spectators), "-"]
                # People's browsers run on their own machines; here the spectators share the
                # two cores with the referee and the bots, so they run at the lowest priority
                # and take only the time the measured processes leave (docs/benchmarks.md).
                watchers = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, preexec_fn=lowest_priority)
                expect_line(watchers, "ready", "bench spectators")
            clients = start_clients(tmp, port, tokens, k, warmup, seconds, mode, nice_bots, c_bots, hear)
            for c in clients:  # each prints `measuring` when its window opens
                expect_line(c, "measuring", "bench client")
            cpu0, t0 = sum(process_cpu_s(p.pid) for p in procs), time.perf_counter()
            bots0, machine0 = sum(process_cpu_s(c.pid) for c in clients), machine_busy_s()
            if watchers is not None:
                assert watchers.stdin is not None
                watchers.stdin.write("measure\n")
                watchers.stdin.flush()
            for c in clients:  # and `stopped` when it closes
                expect_line(c, "stopped", "bench client")
            cpu_s = sum(process_cpu_s(p.pid) for p in procs) - cpu0
            cpu_window = time.perf_counter() - t0
            # (A client that has already exited is a zombie until waited for: /proc still has
            # its final times.)
            bots_cpu_s = sum(process_cpu_s(c.pid) for c in clients) - bots0
            other_cpu_s = machine_busy_s() - machine0 - cpu_s - bots_cpu_s
            res: dict[str, Any] = {"actions": 0, "messages": 0, "seconds": 0.0, "rtt": [], "errors": 0}
            for c in clients:
                # (Not communicate(): readline may already hold the rest of its output.)
                assert c.stdout is not None and c.stderr is not None
                out, err = c.stdout.read(), c.stderr.read()
                c.wait(120)
                if c.returncode != 0:
                    raise RuntimeError(f"bench client failed: {err[-2000:]}")
                r = client_counts(out)
                res["actions"] += r["actions"]
                res["messages"] += r["messages"]
                res["seconds"] = max(res["seconds"], r["seconds"])
                res["rtt"] += r["rtt"]
                res["errors"] += r["errors"]
            if watchers is not None:
                out, err = watchers.communicate(timeout=120)  # closes its stdin: it stops counting
                if watchers.returncode != 0:
                    raise RuntimeError(f"bench spectators failed: {err[-2000:]}")
                watched = json.loads(out)
                res["spectator_frames_per_s"] = watched["frames"] / watched["seconds"]
        finally:
            for server in procs:
                server.send_signal(signal.SIGTERM)
            for server in procs:
                server.wait(60)
        lat: list[float] = []
        cpu: list[float] = []
        for f in stats_files:
            stats = json.loads(f.read_text())
            lat += stats["latencies_ms"]
            cpu += stats["cpu_ms"]
    rtt = res["rtt"]
    # The server's CPU per bot message: its processes' CPU per second over the window
    # (read by this process, so the two windows differ by a few milliseconds) over the
    # messages per second the bots sent in theirs.
    per_s = res["messages"] / res["seconds"]
    cpu_us = (cpu_s / cpu_window) / per_s * 1e6 if per_s else float("nan")
    return {"actions_per_s": res["actions"] / res["seconds"], "messages_per_s": per_s,
            "cpu_us_per_message": cpu_us, "cpu_load": cpu_s / cpu_window,
            "bots_cpu_load": bots_cpu_s / cpu_window, "other_cpu_load": other_cpu_s / cpu_window,
            "p50_ms": _pct(lat, 0.5),
            "p99_ms": _pct(lat, 0.99), "cpu_p50_ms": _pct(cpu, 0.5), "cpu_p99_ms": _pct(cpu, 0.99),
            "rtt_p50_ms": _pct(rtt, 0.5), "rtt_p99_ms": _pct(rtt, 0.99),
            "errors": res["errors"], "spectators": spectators,
            "spectator_frames_per_s": res.get("spectator_frames_per_s", 0.0)}


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def run(levels: tuple[int, ...] = LEVELS, runs: int = 1, warmup: float = 1.0, seconds: float = 5.0,
        progress: Callable[[int, int], None] | None = None, mode: str = "act",
        servers: int = 1, spectators: int = 0, bare: bool = True,
        nice_bots: bool = False, c_bots: bool = False, floor: bool = False,
        hear: str = "turn") -> dict[str, dict[str, float]]:
    """Medians over `runs` runs of each level, keyed by the number of games (as a string).
    With `bare`, each run of the referee is followed by one of the bare exchange with the
    same bots (server/bench/bare.py): `bare_cpu_us_per_message` and `cpu_ratio`, the median
    of the runs' ratios of the referee's CPU per message to the bare exchange's; with `floor`
    too, each bare run is followed by one of the two-write exchange: `floor_cpu_us_per_message`
    and `floor_ratio` (the median of its runs' ratios to the bare exchange's). `hear`: how the
    bots hear the opponent, "turn" or "action" (run_level)."""
    floor = floor and bare
    out: dict[str, dict[str, float]] = {}
    done = 0
    steps = len(levels) * runs * (1 + bare + floor)
    for g in levels:
        results = []
        bares = []
        floors = []
        for _ in range(runs):
            results.append(run_level(g, warmup, seconds, mode, servers, spectators, nice_bots=nice_bots,
                                     c_bots=c_bots, hear=hear))
            done += 1
            if progress:
                progress(done, steps)
            if bare:
                bares.append(run_level(g, warmup, seconds, mode, bare=True, nice_bots=nice_bots,
                                       c_bots=c_bots, hear=hear))
                done += 1
                if progress:
                    progress(done, steps)
            if floor:
                floors.append(run_level(g, warmup, seconds, mode, bare=True, nice_bots=nice_bots,
                                        c_bots=c_bots, events=True, hear=hear))
                done += 1
                if progress:
                    progress(done, steps)
        level = {k: round(_median([r[k] for r in results]), 3) for k in results[0]}
        # Messages a referee core would take per second: the throughput over the referee's
        # CPU load (whole turns in turn mode).
        level["messages_per_core_s"] = round(_median([r["messages_per_s"] / r["cpu_load"]
                                                      for r in results if r["cpu_load"] > 0] or [0.0]), 1)
        if bare:
            level["bare_cpu_us_per_message"] = round(_median([b["cpu_us_per_message"] for b in bares]), 3)
            level["bare_messages_per_s"] = round(_median([b["messages_per_s"] for b in bares]), 1)
            level["cpu_ratio"] = round(_median([r["cpu_us_per_message"] / b["cpu_us_per_message"]
                                                for r, b in zip(results, bares, strict=True)]), 2)
        if floor:
            level["floor_cpu_us_per_message"] = round(_median([f["cpu_us_per_message"] for f in floors]), 3)
            level["floor_ratio"] = round(_median([f["cpu_us_per_message"] / b["cpu_us_per_message"]
                                                  for f, b in zip(floors, bares, strict=True)]), 2)
        out[str(g)] = level
    return out


def run_watched(levels: tuple[int, ...], spectators: int, runs: int = 1, warmup: float = 1.0,
                seconds: float = 5.0, progress: Callable[[int, int], None] | None = None, mode: str = "act",
                servers: int = 1) -> dict[str, dict[str, dict[str, float]]]:
    """Each level without and with `spectators`, the two runs alternating (so that a change in
    the machine's load falls on both alike); medians under "plain" and "watched", and per
    level the ratio of the throughputs under "ratio"."""
    out: dict[str, dict[str, dict[str, float]]] = {"plain": {}, "watched": {}, "ratio": {}}
    done = 0
    for g in levels:
        both: dict[str, list[dict[str, Any]]] = {"plain": [], "watched": []}
        for _ in range(runs):
            for kind, n in (("plain", 0), ("watched", spectators)):
                both[kind].append(run_level(g, warmup, seconds, mode, servers, n))
                done += 1
                if progress:
                    progress(done, 2 * len(levels) * runs)
        for kind, rs in both.items():
            out[kind][str(g)] = {k: round(sorted(r[k] for r in rs)[len(rs) // 2], 3) for k in rs[0]}
        plain = out["plain"][str(g)]["actions_per_s"]
        out["ratio"][str(g)] = {"actions_per_s": round(out["watched"][str(g)]["actions_per_s"] / plain, 3)
                                if plain else float("nan")}
    return out

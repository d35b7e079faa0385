"""`maag bench ladder`: the ladder's bookkeeping at scale, in-process, one thread.

For a ladder of N bots (default 10,000) with ratings drawn from a normal law (sd 300 Elo)
and a history of `games_per_bot` games each between neighbours in rating (as a ladder plays
them), it times:

- pairing_ms: one scheduling round with every bot waiting (capacity 1, idle times at
  random): `choose_pairs` pairs them all, N/2 games (median of `runs` rounds, fresh random
  idle order each; wall clock, and `pairing_cpu_ms`, the process's CPU time, which other
  processes on the machine disturb less);
- update_ms: the rating step after one game (`LiveRatings.update`), the median over 10,000
  games;
- refit_s: the full fit of the whole history (`fit_points`, run by the ladder on a timer,
  off the event loop), median of `runs`.

It also reports the CPU's speed in this sitting (`calibration_ms`: `sum(range(10**7))`), since
this machine kind's CPU changes between sessions, and the mean Elo gap of the pairs made.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from maag.server.compete.pairing import choose_pairs
from maag.stats.live import LiveRatings, expected, fit_points


def _history(names: list[str], elo: dict[str, float], games_per_bot: int,
             rng: random.Random) -> list[tuple[str, str, float]]:
    ranked = sorted(names, key=elo.__getitem__)
    out = []
    for _ in range(len(names) * games_per_bot // 2):
        k = rng.randrange(len(ranked))
        j = min(len(ranked) - 1, max(0, k + rng.randint(-20, 20)))
        if j == k:
            continue
        a, b = ranked[k], ranked[j]
        u, p = rng.random(), expected(elo[a], elo[b])
        out.append((a, b, 1.0 if u < 0.9 * p else 0.5 if u < 0.9 * p + 0.1 else 0.0))
    return out


def run_ladder_bench(bots: int = 10_000, runs: int = 5, games_per_bot: int = 10,
                     seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    names = [f"bot{i:05d}" for i in range(bots)]
    elo = {b: rng.gauss(0.0, 300.0) for b in names}
    t0 = time.process_time()
    sum(range(10**7))
    calibration = (time.process_time() - t0) * 1000
    pairing, pairing_cpu, gaps = [], [], []
    for r in range(runs):
        idle = {b: rng.random() for b in names}
        t0, c0 = time.perf_counter(), time.process_time()
        pairs = choose_pairs(dict.fromkeys(names, 1), elo, idle, {}, random.Random(r), 100.0)
        pairing.append((time.perf_counter() - t0) * 1000)
        pairing_cpu.append((time.process_time() - c0) * 1000)
        gaps.append(statistics.fmean(abs(elo[a] - elo[b]) for a, b in pairs))
    history = _history(names, elo, games_per_bot, rng)
    live = LiveRatings()
    updates = []
    for a, b, s in history[:10_000]:
        t0 = time.perf_counter()
        live.update(a, b, s)
        updates.append((time.perf_counter() - t0) * 1000)
    refits = []
    for _ in range(max(1, runs // 2)):
        t0 = time.perf_counter()
        fit_points(history)
        refits.append(time.perf_counter() - t0)
    return {"bots": bots, "pairs": bots // 2, "history_games": len(history),
            "pairing_ms": round(statistics.median(pairing), 2),
            "pairing_ms_runs": [round(x, 2) for x in pairing],
            "pairing_cpu_ms": round(statistics.median(pairing_cpu), 2),
            "mean_pair_gap_elo": round(statistics.fmean(gaps), 2),
            "update_ms": round(statistics.median(updates), 5),
            "update_ms_p99": round(sorted(updates)[int(0.99 * (len(updates) - 1))], 5),
            "refit_s": round(statistics.median(refits), 3),
            "calibration_ms": round(calibration, 1)}


def register_cli(bsub: Any, machine: Any) -> None:
    p = bsub.add_parser("ladder", help="the ladder's pairing and ratings at scale, in-process",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", type=int, default=10_000, help="bots in the ladder (default 10000)")
    p.add_argument("--runs", type=int, default=5, help="pairing rounds; refits: half as many (default 5)")
    p.add_argument("--games-per-bot", type=int, default=10, help="history for the refit (default 10)")
    p.add_argument("--json", action="store_true")

    def run(args: argparse.Namespace) -> int:
        import json

        res = run_ladder_bench(args.bots, args.runs, args.games_per_bot)
        res["machine"] = machine()
        if args.json:
            print(json.dumps(res))
            return 0
        print(f"{res['bots']:,} bots, all waiting: a pairing round {res['pairing_ms']} ms "
              f"({res['pairing_cpu_ms']} ms of CPU; median of {args.runs}; {res['pairs']:,} pairs, "
              f"mean gap {res['mean_pair_gap_elo']} Elo)")
        print(f"rating step after a game: {res['update_ms'] * 1000:.1f} µs "
              f"(p99 {res['update_ms_p99'] * 1000:.1f} µs)")
        print(f"full refit of {res['history_games']:,} games: {res['refit_s']} s (in a thread, on a timer)")
        print(f"CPU calibration: sum(range(10**7)) in {res['calibration_ms']} ms")
        return 0

    p.set_defaults(func=run)

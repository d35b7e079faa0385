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

With `--db URL` (a PostgreSQL or SQLite database; `--db default`: a temporary SQLite file),
it also times a fleet scheduler's round (fleet/scheduler.py) over that database: the N bots'
presence spread over four referees read back (`presence_ms`), each bot's games in progress
(`load_ms`), the pairing, and the round's N/2 assignments written in one transaction
(`assign_ms`); medians of `runs` rounds (each round's assignments are settled as failed
before the next, so every bot is free again).

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


def fleet_round(db_url: str, names: list[str], elo: dict[str, float], runs: int,
                rng: random.Random) -> dict[str, Any]:
    """A fleet scheduler's round over a database (see the module)."""
    from maag.server.fleet.assignments import assign, ladder_load, lead, presence, publish_presence
    from maag.server.fleet.links import new_secret
    from maag.server.fleet.store import set_link
    from maag.server.storage.base import open_storage

    st = open_storage(db_url)
    servers = [f"bench-{rng.getrandbits(32):08x}-{k}" for k in range(4)]
    times: dict[str, list[float]] = {"presence_ms": [], "load_ms": [], "pairing_ms": [], "assign_ms": []}
    try:
        for k, s in enumerate(servers):
            st.register_server(s, f"bench referee {k}", 3600.0)
            set_link(st, s, f"127.0.0.1:{40000 + k}")
            publish_presence(st, s, [(b, 1, 0.0) for b in names[k::4]])
        epoch = lead(st, "bench")
        for r in range(runs):
            t0 = time.perf_counter()
            rows = presence(st)
            t1 = time.perf_counter()
            load = ladder_load(st, "bench", "ladder:bench")
            t2 = time.perf_counter()
            cap = {b: 1 - load[b] for _s, b, _n, _t in rows}
            where = {b: s for s, b, _n, _t in rows}
            pairs = choose_pairs(cap, elo, {b: rng.random() for b in cap}, {}, random.Random(r), 100.0)
            t3 = time.perf_counter()
            assign(st, "bench", epoch, [(where[a], (a, b), where[b], new_secret(), None) for a, b in pairs])
            t4 = time.perf_counter()
            st.db.tx(lambda cur: st.db.execute(cur, "UPDATE fleet_assignments SET status = 'failed' "
                                               "WHERE ladder = 'bench'"))
            for key, x, y in (("presence_ms", t0, t1), ("load_ms", t1, t2), ("pairing_ms", t2, t3),
                              ("assign_ms", t3, t4)):
                times[key].append((y - x) * 1000)
    finally:
        def clean(cur: Any) -> None:
            for s in servers:
                st.db.execute(cur, "DELETE FROM fleet_bots WHERE server = ?", (s,))
                st.db.execute(cur, "DELETE FROM servers WHERE id = ?", (s,))
            st.db.execute(cur, "DELETE FROM fleet_assignments WHERE ladder = 'bench'")
            st.db.execute(cur, "DELETE FROM ladder_leaders WHERE name = 'bench'")

        st.db.tx(clean)
        st.close()
    out: dict[str, Any] = {k: round(statistics.median(v), 2) for k, v in times.items()}
    out["round_ms"] = round(sum(out[k] for k in times), 2)
    return out


def run_ladder_bench(bots: int = 10_000, runs: int = 5, games_per_bot: int = 10,
                     seed: int = 1, db_url: str | None = None) -> dict[str, Any]:
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
    fleet = fleet_round(db_url, names, elo, runs, rng) if db_url else None
    return {"bots": bots, "pairs": bots // 2, "history_games": len(history), "fleet_round": fleet,
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
    p.add_argument("--db", default=None, metavar="URL",
                   help="also time a fleet scheduler's round over this database ('default': a temporary "
                        "SQLite file)")
    p.add_argument("--json", action="store_true")

    def run(args: argparse.Namespace) -> int:
        import json
        import tempfile

        db = args.db
        if db == "default":
            db = f"sqlite:///{tempfile.mkdtemp(prefix='maag-bench-ladder-')}/bench.sqlite3"
        res = run_ladder_bench(args.bots, args.runs, args.games_per_bot, db_url=db)
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
        fr = res["fleet_round"]
        if fr is not None:
            print(f"a fleet scheduler's round over the database: {fr['round_ms']} ms (presence read "
                  f"{fr['presence_ms']} ms, games in progress {fr['load_ms']} ms, pairing "
                  f"{fr['pairing_ms']} ms, {res['pairs']:,} assignments written {fr['assign_ms']} ms)")
        print(f"CPU calibration: sum(range(10**7)) in {res['calibration_ms']} ms")
        return 0

    p.set_defaults(func=run)

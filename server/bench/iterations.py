"""`maag bench iterations AGENT`: does an agent get as many search iterations per turn as a
bot process through the referee as it gets in-process, on the same positions?

1. Through the referee: `maag match AGENT OPPONENT --tc B` on an embedded referee (both
   bots as processes over TCP, one game at a time), or games already stored in a database
   (`--replays DB`, e.g. from `maag match ... --db DB`). A bundled bot reports what its
   search did with each message (`turn.info`: iterations, search time); the replay keeps it
   beside the message's first action.
2. In-process: each position where the agent began a turn is rebuilt from the replay (the
   referee's own re-simulation, `state_at`) as that seat's observation, and searched again
   by the same agent with `budget_ms=B`, as `maag arena` calls an agent each turn
   (`maag bot search`, a process of its own: the server never imports the bots).

Each position gives a pair (through the referee, in-process). The report: the ratio of the
mean iterations per turn, match / in-process, with a 95% bootstrap interval over positions,
and the same for the search time. The positions being the same, what is left is what the
protocol costs (the bot's safety margin, the time from reading `your_turn` to the search's
start) and the noise of timing on a shared machine. (Comparing two separate runs' means, as
this bench did first, mixed in the positions each run happened to reach: an iteration's cost
varies with the position by a factor of two.) Load averages before, between and after."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["IterationsBench", "play_match", "positions_from", "search_in_process", "run"]


@dataclass
class IterationsBench:
    agent: str
    opponent: str
    turn_ms: float
    game_config: dict[str, Any]
    games: int
    # one row per position: (iterations through the referee, in-process; search ms the same)
    pairs: list[tuple[float, float, float, float]]
    load: list[float] = field(default_factory=list)  # 1-minute load average before, between, after

    def _ratio(self, i: int, j: int) -> tuple[float, float, float]:
        """Ratio of the means of columns i / j, with a 95% paired bootstrap interval."""
        a = np.array([p[i] for p in self.pairs], dtype=float)
        b = np.array([p[j] for p in self.pairs], dtype=float)
        r = float(a.mean() / b.mean()) if b.mean() > 0 else 0.0
        if len(a) < 2 or b.mean() <= 0:
            return r, r, r
        # scipy here, not at the top: every `maag` process imports this module (the CLI reads its
        # docstring) and scipy.stats takes about a second to import.
        from scipy import stats as sps

        ci = sps.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) / y.mean(axis=axis),
                           paired=True, vectorized=True, n_resamples=2000, method="percentile",
                           random_state=np.random.default_rng(0)).confidence_interval
        return r, float(ci.low), float(ci.high)

    @property
    def ratio(self) -> tuple[float, float, float]:
        """Iterations per turn, match / in-process: (ratio, low, high)."""
        return self._ratio(0, 1)

    @property
    def time_ratio(self) -> tuple[float, float, float]:
        """Search time per turn, match / in-process: (ratio, low, high)."""
        return self._ratio(2, 3)

    def means(self) -> dict[str, dict[str, float]]:
        def mean(k: int) -> float:
            return round(statistics.fmean(p[k] for p in self.pairs), 1) if self.pairs else 0.0
        return {"match": {"mean_iterations_per_turn": mean(0), "mean_search_ms_per_turn": mean(2)},
                "in_process": {"mean_iterations_per_turn": mean(1), "mean_search_ms_per_turn": mean(3)}}

    def as_dict(self) -> dict[str, Any]:
        r, t = self.ratio, self.time_ratio
        return {"agent": self.agent, "opponent": self.opponent, "turn_ms": self.turn_ms,
                "game_config": self.game_config, "games": self.games, "positions": len(self.pairs),
                **self.means(), "ratio": round(r[0], 4), "ratio_ci": [round(r[1], 4), round(r[2], 4)],
                "time_ratio": round(t[0], 4), "time_ratio_ci": [round(t[1], 4), round(t[2], 4)],
                "load": self.load}


def play_match(agent: str, opponent: str, turn_ms: float, games: int, game_config: dict[str, Any],
               seed: int, db: Path) -> None:
    """The agent and its opponent as bot processes through an embedded referee (`maag
    match`'s code), one game at a time, their games stored in `db`."""
    from maag.server.compete.match import run_match
    from maag.server.net.server import ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.storage.base import open_storage

    cfg = ServerConfig(port=0, game="heroes", game_config=dict(game_config),
                       tc=TimeControl(turn_ms=turn_ms), auto_pair=False)
    storage = open_storage(db)
    try:
        asyncio.run(run_match(None, agent, opponent, games, 1, config=cfg, storage=storage, seed=seed,
                              log_dir=db.parent))
    finally:
        storage.close()


def positions_from(db: Path | str, seat_name: str, limit: int = 200) -> tuple[list[dict[str, Any]], int]:
    """The positions where the bot named `seat_name` began a turn and reported its search, in
    the finished games of `db`: each the seat's observation (as `your_turn` carried it) with
    the search's `iterations` and `time_ms`; at most `limit`, spread evenly over all of
    them. Also the number of games they came from."""
    from maag.server.referee.replay import state_at
    from maag.server.storage.base import open_storage

    storage = open_storage(str(db))
    found: list[dict[str, Any]] = []
    games = 0
    try:
        for rec in sorted(storage.list_games(status="finished", limit=100_000), key=lambda g: g.id):
            if seat_name not in rec.seats:
                continue
            rp = storage.get_replay(rec.id)
            if rp is None:
                continue
            seat = rec.seats.index(seat_name)
            games += 1
            actions = rp["actions"]
            for i, a in enumerate(actions):
                info = a.get("info") or {}
                turn_start = i == 0 or actions[i - 1]["seat"] != a["seat"]
                reported = isinstance(info.get("iterations"), (int, float))
                if a["seat"] != seat or not turn_start or not reported:
                    continue
                found.append({"game": rp["game"], "config": rp["config"], "game_id": rec.id, "ply": i,
                              "tc": rec.time_control,
                              "match_iterations": info["iterations"], "match_ms": info.get("time_ms", 0.0),
                              "observation": state_at(rp, i).observation(seat).to_json()})
    finally:
        storage.close()
    if len(found) > limit:
        step = len(found) / limit
        found = [found[int(k * step)] for k in range(limit)]
    return found, games


def search_in_process(agent: str, positions: list[dict[str, Any]], turn_ms: float, seed: int,
                      workdir: Path) -> list[dict[str, Any]]:
    """Search each position again with `agent` in-process (`maag bot search`, its own
    process) under `budget_ms=turn_ms`; one result per position, in order."""
    f = workdir / "positions.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in positions))
    cmd = [sys.executable, "-m", "maag.server", "bot", "search", agent, "--positions", str(f),
           "--budget-ms", f"{turn_ms:g}", "--seed", str(seed)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"maag bot search failed ({r.returncode}): {r.stderr[-2000:]}")
    out = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if len(out) != len(positions):
        raise RuntimeError(f"maag bot search answered {len(out)} of {len(positions)} positions")
    return out


def run(agent: str, opponent: str = "greedy-action", turn_ms: float = 1000.0, games: int = 10,
        game_config: dict[str, Any] | None = None, seed: int = 1, positions: int = 200,
        replays: str | None = None, seat_name: str | None = None) -> IterationsBench:
    """Both sides on the same positions: a match (or the games of `replays`, where the agent
    played as `seat_name`, default its display name), then the in-process searches."""
    from maag.server.compete.match import display_names

    config = {"map": "a", "draws": "random", **(game_config or {})}
    name = seat_name or display_names(agent, opponent)[0]
    load = [round(os.getloadavg()[0], 2)]
    with tempfile.TemporaryDirectory(prefix="maag-bench-iterations-") as tmp:
        db: Path | str
        if replays is None:
            db = Path(tmp) / "bench.sqlite3"
            play_match(agent, opponent, turn_ms, games, config, seed, db)
        else:
            db = replays
        load.append(round(os.getloadavg()[0], 2))
        found, n_games = positions_from(db, name, positions)
        if not found:
            raise RuntimeError(f"no position where {name!r} reported its search in {db}")
        from maag.server.referee.clock import TimeControl

        other = sorted({p["tc"] for p in found if TimeControl.parse(p["tc"]).turn_ms != turn_ms})
        if other:
            raise RuntimeError(f"the games in {db} were played at {', '.join(other)}, not {turn_ms:g} ms per "
                               "turn: give --turn-ms as their time control")
        again = search_in_process(agent, found, turn_ms, seed, Path(tmp))
    load.append(round(os.getloadavg()[0], 2))
    pairs = [(float(p["match_iterations"]), float(q["iterations"]), float(p["match_ms"]), float(q["time_ms"]))
             for p, q in zip(found, again, strict=True)]
    cfg = found[0]["config"] if replays is not None else config
    played_against = opponent if replays is None else f"stored games of {replays}"
    return IterationsBench(agent, played_against, turn_ms, dict(cfg), n_games, pairs, load)

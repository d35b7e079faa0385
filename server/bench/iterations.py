"""`maag bench iterations AGENT`: does an agent get as many search iterations per turn as a
bot process through the referee as it gets in-process?

Two runs of the same agent, opponent, game settings and time budget, one after the other:

- in-process: `maag arena AGENT OPPONENT --turn-ms B --view observation` (the agent is
  called with `budget_ms=B` each turn; run as its own process, as the server never imports
  the bots);
- through the referee: `maag match AGENT OPPONENT --tc B` on an embedded referee, both as
  bot processes over TCP, one game at a time; each bot reports its search's iterations with
  its turns (`turn.info`), the referee adds them up per turn (`GameSession.search_report`).

Each figure is the mean over games of a game's mean iterations per turn (the arena's own
figure), and the same of the search time per turn. Two ratios match / arena: of the search
time (what the protocol costs: process, clock, safety margins, messages) and of the
iterations. The iterations also depend on the positions the games reach (a late position's
rollouts are longer) and on the CPU share each run got on a loaded machine, so over few
games their ratio strays further from 1 than the time's. Load averages before, between and
after are reported."""

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


@dataclass
class IterationsBench:
    agent: str
    opponent: str
    turn_ms: float
    games: int
    game_config: dict[str, Any]
    arena: dict[str, float]   # mean_iterations_per_turn, mean_search_ms_per_turn
    match: dict[str, float]   # the same through the referee
    load: list[float] = field(default_factory=list)  # 1-minute load average before, between, after

    @property
    def ratio(self) -> float:
        """Iterations per turn, match / arena."""
        a = self.arena["mean_iterations_per_turn"]
        return self.match["mean_iterations_per_turn"] / a if a > 0 else 0.0

    @property
    def time_ratio(self) -> float:
        """Search time per turn, match / arena."""
        a = self.arena["mean_search_ms_per_turn"]
        return self.match["mean_search_ms_per_turn"] / a if a > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "opponent": self.opponent, "turn_ms": self.turn_ms, "games": self.games,
                "game_config": self.game_config, "arena": self.arena, "match": self.match,
                "ratio": round(self.ratio, 4), "time_ratio": round(self.time_ratio, 4), "load": self.load}


def arena_run(agent: str, opponent: str, turn_ms: float, games: int, game_config: dict[str, Any],
              seed: int) -> dict[str, float]:
    """The agent in-process (`maag arena`, a process of its own): its mean iterations and
    search time per turn."""
    cmd = [sys.executable, "-m", "maag.server", "arena", agent, opponent, "--games", str(games),
           "--turn-ms", f"{turn_ms:g}", "--view", "observation", "--jobs", "1", "--seed", str(seed),
           "--json", "--map", str(game_config.get("map", "a")),
           "--draws", str(game_config.get("draws", "random"))]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"maag arena failed ({r.returncode}): {r.stderr[-2000:]}")
    summary = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")][-1]
    me = summary["overall"][0]
    return {"mean_iterations_per_turn": float(me["mean_iterations_per_turn"]),
            "mean_search_ms_per_turn": float(me["mean_search_ms_per_turn"])}


def match_run(agent: str, opponent: str, turn_ms: float, games: int, game_config: dict[str, Any],
              seed: int) -> dict[str, float]:
    """The agent as a bot process through an embedded referee (`maag match`'s code): the
    same figures, from what the bot reported with its turns."""
    from maag.server.compete.match import display_names, run_match
    from maag.server.net.server import ServerConfig
    from maag.server.referee.clock import TimeControl
    from maag.server.storage.base import open_storage

    name = display_names(agent, opponent)[0]
    with tempfile.TemporaryDirectory(prefix="maag-bench-iterations-") as tmp:
        cfg = ServerConfig(port=0, game="heroes", game_config=dict(game_config),
                           tc=TimeControl(turn_ms=turn_ms), auto_pair=False)
        storage = open_storage(Path(tmp) / "bench.sqlite3")
        try:
            res = asyncio.run(run_match(None, agent, opponent, games, 1, config=cfg, storage=storage,
                                        seed=seed, log_dir=Path(tmp)))
        finally:
            storage.close()
    its, ms = [], []
    for _, g in res.games:
        for seat_name, rep in zip(g.seats, g.search, strict=True):
            if seat_name == name and rep is not None:
                its.append(rep["iterations_per_turn"])
                ms.append(rep["time_ms_per_turn"])
    if not its:
        raise RuntimeError(f"{agent} reported no search iterations through the referee")
    return {"mean_iterations_per_turn": round(statistics.fmean(its), 1),
            "mean_search_ms_per_turn": round(statistics.fmean(ms), 1)}


def run(agent: str, opponent: str = "greedy-action", turn_ms: float = 1000.0, games: int = 10,
        game_config: dict[str, Any] | None = None, seed: int = 1) -> IterationsBench:
    """Both runs, the arena first; heroes with `game_config` (default map a, random draws)."""
    config = {"map": "a", "draws": "random", **(game_config or {})}
    load = [round(os.getloadavg()[0], 2)]
    arena = arena_run(agent, opponent, turn_ms, games, config, seed)
    load.append(round(os.getloadavg()[0], 2))
    match = match_run(agent, opponent, turn_ms, games, config, seed)
    load.append(round(os.getloadavg()[0], 2))
    return IterationsBench(agent, opponent, turn_ms, games, config, arena, match, load)

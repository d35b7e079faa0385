"""`maag experiment agreement`: in the same positions, how often does an honest agent choose
the action that a player who saw the hidden cards would choose?

Games lose and win for many reasons; this looks at single decisions. Positions come from
real games (random draws, hidden hands) between two `mcts` agents at a small iteration
budget: every decision with at least two legal actions, a sample of `positions` of them. In
each, the reference decision is the first action of the cheating twin of `reference` (it
searches the true state) with `ref_iterations` iterations. Every entrant then decides at
`iterations` iterations (the kernel's unit, so the machine's load does not matter):
honest entrants from the seat's Observation, `cheat:` and `peek:` twins
(maag.bots.cheating) from the truth. An entrant's agreement is the share of positions where
its first action is the reference's, with a 95% Wilson interval.

A second cheating run of the reference agent with another seed (`cheat:REFERENCE` among
the entrants) shows the ceiling: how often the search agrees with itself when it sees
everything. An honest agent can only come near it where the hidden cards do not change the
decision; what the determinized agents add over one determinization shows as agreement
above `mcts`'s."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from maag.engine import Game, State
from maag.stats import wilson

from .arena import play_step
from .hidden import make_entrant

__all__ = ["AgreementResult", "collect_positions", "decide", "run_agreement"]


@dataclass
class AgreementResult:
    """One entrant's agreement with the reference over the positions."""

    spec: str
    agree: int
    positions: int

    def as_dict(self) -> dict[str, Any]:
        lo, hi = wilson(self.agree, self.positions)
        share = self.agree / self.positions if self.positions else 0.0
        return {"agent": self.spec, "agree": self.agree, "positions": self.positions,
                "share": round(share, 4), "ci95": [round(lo, 4), round(hi, 4)]}


def collect_positions(game: Game, count: int, seed: int, iterations: int = 1000) -> list[State]:
    """`count` decisions of games between two `mcts` agents (`iterations` per plan), each a
    full state whose player to act has at least two legal actions, sampled evenly from as
    many games as it takes (each game from a seed drawn from `seed`)."""
    rng = random.Random(seed)
    player = make_entrant("mcts")
    stepwise = game.spec.chance_within_turn
    pool: list[State] = []
    while len(pool) < 3 * count:
        state = game.new_state(rng.getrandbits(62))
        while not state.is_terminal:
            if len(state.legal_codes()) >= 2:
                pool.append(state.clone())
            plan = player.plan(state, state.current_player, None, iterations, rng.getrandbits(62))
            play_step(state, plan, stepwise)
    return random.Random(seed + 1).sample(pool, count)


def decide(args: tuple[str, dict[str, Any], dict[str, Any], Sequence[str], str, int, int, int]) -> list[int]:
    """The first action code of the reference (index 0) and of every entrant in one position
    (given as the game's name, its options and the state's JSON)."""
    game_name, options, obj, specs, reference, ref_iterations, iterations, seed = args
    state = Game(game_name, options).state_from_json(obj)
    seat = state.current_player
    out = []
    for i, spec in enumerate([f"cheat:{reference}", *specs]):
        entrant = make_entrant(spec)
        it = ref_iterations if i == 0 else iterations
        # the reference and the entrants draw from different seeds: a cheating entrant equal to
        # the reference measures the search's own noise
        plan = entrant.plan(state, seat, None, it, seed + (0 if i == 0 else 1))
        out.append(plan[0].code if plan else -1)
    return out


def run_agreement(game: Game, specs: Sequence[str], *, positions: int = 200, reference: str = "mcts",
                  ref_iterations: int = 60000, iterations: int = 20000, seed: int = 1, jobs: int = 1,
                  on_position: Callable[[int, int], None] | None = None) -> list[AgreementResult]:
    """Each entrant's agreement with the reference over `positions` positions (see the
    module's text); `on_position(done, total)` after each position."""
    for spec in [f"cheat:{reference}", *specs]:
        make_entrant(spec)  # a bad spec fails here, before any game
    states = collect_positions(game, positions, seed)
    tasks = [(game.name, dict(game.config), s.to_json(), list(specs), reference, ref_iterations, iterations,
              seed * 1_000_003 + i) for i, s in enumerate(states)]
    results = [AgreementResult(spec, 0, 0) for spec in specs]
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool:
        for k, row in enumerate((pool.map if pool else map)(decide, tasks)):
            for r, code in zip(results, row[1:], strict=True):
                r.positions += 1
                r.agree += code == row[0]
            if on_position:
                on_position(k + 1, len(tasks))
    return results

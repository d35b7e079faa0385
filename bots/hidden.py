"""The determinized agents, registered in maag.bots.AGENTS on import:

- `pimc`: perfect-information Monte Carlo. Any perfect-information agent of maag.bots
  (`inner`) runs on `k` determinizations of the observation (strategy `det`), the budget
  split evenly over them, and the plans are combined by `combine`: `vote` (majority on the
  plan, one action at a time) or `sum` (every plan scored in every determinization by the
  inner agent's rollout, the best total wins). Settings other than pimc's own go to the
  inner agent: ``pimc:inner=mcts,k=8,rollout_turns=2``.
- `ismcts`: single-observer information-set MCTS: one tree over the seat's information
  sets, a new determinization (strategy `det`) every iteration, availability counts at the
  opponent's nodes, multi-action turns and rollouts as `mcts`.

Both search only from an Observation (maag.engine.hidden's C kernels)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from maag.clients import Option
from maag.engine import State
from maag.engine.hidden import COMBINES, IsmctsTree, run_on_state
from maag.engine.observation import STRATEGIES
from maag.engine.search import SearchResult

from .agents import AGENTS, ITERATIONS, Agent, AgentError, AgentSpec, mcts_options, register

__all__ = ["PimcAgent", "IsmctsAgent", "PERFECT_INFORMATION"]

# The agents PIMC can run inside (every registered agent that searches a full state).
PERFECT_INFORMATION: tuple[str, ...] = tuple(name for name, spec in AGENTS.items() if spec.factory is None)


# The MCTS settings the ISMCTS kernel reads (it always shares nodes by information set).
_ISMCTS_PARAMS = ("c", "rollout", "epsilon", "rollout_turns", "horizon_root", "robust", "complete",
                  "max_nodes", "prune", "forced", "iterations", "widen_k", "widen_alpha")


def _det_param() -> Option:
    return Option(name="det", type="choice", default="uniform", choices=tuple(STRATEGIES),
                 help="determinization strategy: uniform (sampled hands), most-probable (the "
                      "likeliest hand, fixed), all-unseen (the opponent holds every unseen card)")


class PimcAgent(Agent):
    """An inner perfect-information agent on K determinizations, combined (see the module)."""

    def __init__(self, spec: AgentSpec, options: Mapping[str, Any] | None = None) -> None:
        own = {p.name for p in spec.params}
        given = dict(options or {})
        super().__init__(spec, {k: v for k, v in given.items() if k in own})
        self.inner_given = {k: v for k, v in given.items() if k not in own}
        self.inner = self._make_inner()

    def _make_inner(self) -> Agent:
        inner = self.options["inner"]
        try:
            return Agent(AGENTS[inner], self.inner_given)
        except AgentError as e:
            raise AgentError(f"pimc (inner agent {inner}): {e}") from None

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.options.items() if v != self.spec.param(k).default}
        changed.update((k, v) for k, v in self.inner.options.items() if v != self.inner.spec.param(k).default)
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def for_game(self, game: str) -> None:
        super().for_game(game)
        if self.inner.name != self.options["inner"]:  # the game's default inner agent differs
            self.inner = self._make_inner()
        if "combine" not in self.given and self.options["combine"] == "visits" \
                and self.inner.spec.kernel != "mcts":
            # a game's default combine=visits adds up MCTS trees; a chosen inner agent that
            # grows none is combined by the generic default instead of refused
            self.options["combine"] = self.spec.param("combine").default
        self.inner.for_game(game)

    def kernel_params(self) -> dict[str, Any]:
        return self.inner.kernel_params()

    def _search(self, root: State, budget_ms: float, iterations: int, seed: int) -> SearchResult:
        o = self.options
        return run_on_state("pimc", root, self.inner.spec.kernel, self.inner.kernel_params(), k=o["k"],
                            det=o["det"], combine=o["combine"], budget_ms=budget_ms, iterations=iterations,
                            seed=seed)


# Off by default until measured (issue 58).
_ISMCTS_REUSE = Option(name="reuse", type="bool", default=False,
                       help="search again before every action of the turn (the bot sends one "
                            "action at a time), going on from the kept tree's node of the new "
                            "information set (the one the action played led to, a chance outcome "
                            "seen included); a new tree each turn")


class IsmctsAgent(Agent):
    """Single-observer information-set MCTS (see the module)."""

    def __init__(self, spec: AgentSpec, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(spec, options)
        # `reuse`: the tree kept between the plans of a turn, and whether the turn went on
        # after the previous plan's first action (else the next plan starts a new tree).
        self._itree: IsmctsTree | None = None
        self._turn_goes_on = False

    def _search(self, root: State, budget_ms: float, iterations: int, seed: int) -> SearchResult:
        params = self.kernel_params()
        det = params.pop("det")
        tree = None
        if self.options["reuse"]:
            if self._itree is None or not self._turn_goes_on:
                self._itree = IsmctsTree()
            tree = self._itree
        result = run_on_state("ismcts", root, "mcts", params, det=det, budget_ms=budget_ms,
                              iterations=iterations, seed=seed, tree=tree)
        plan = result.plan
        self._turn_goes_on = len(plan) > 1 and not root.game.vt.is_end_turn(plan[0].code)
        return result


register(AgentSpec(
    "pimc", "pimc",
    "perfect-information Monte Carlo: an inner agent on k determinizations of the observation, "
    "plans combined by vote, by summed scores or by summed visits; other settings go to the inner agent",
    (Option(name="inner", type="choice", default="mcts", choices=PERFECT_INFORMATION,
           help="the perfect-information agent run on each determinization"),
     Option(name="k", type="int", default=8, min=1, max=1024, help="determinizations"),
     Option(name="combine", type="choice", default="vote", choices=tuple(COMBINES),
           help="vote: majority on the plan, action by action; sum: each plan scored by a rollout "
                "in every determinization, best total; visits (MCTS inner agents): the first action "
                "with the most visits summed over the k trees (determinized UCT)"),
     _det_param(), ITERATIONS),
    factory=PimcAgent,
    # heroes: ne-mcts on 4 determinizations, their root visits summed (determinized UCT),
    # 23-0-9 against greedy turn at 300 ms per turn in the real game (ne-mcts alone: 23-0-9);
    # the generic default's inner agent, mcts, is the weakest searcher there
    # (docs/results-heroes.md, the real game).
    game_defaults={"heroes": {"inner": "ne-mcts", "k": 4, "combine": "visits"}}))
register(AgentSpec(
    "ismcts", "ismcts",
    "single-observer information-set MCTS: one tree over information sets, a new "
    "determinization per iteration, availability counts; multi-action turns as mcts",
    (*[p for p in mcts_options(1 / math.sqrt(2), "egreedy") if p.name in _ISMCTS_PARAMS], _det_param(),
     _ISMCTS_REUSE),
    factory=IsmctsAgent, fields={"rollout": "policy", "reuse": ""},
    # heroes: non-exploring as ne-mcts (C = 0, greedy rollouts, the most visited edge): 22-1-9
    # against greedy turn at 300 ms per turn in the real game, where the generic default
    # (C = 1/sqrt(2), egreedy rollouts) went 11-0-21 (docs/results-heroes.md, the real game).
    game_defaults={"heroes": {"c": 0.0, "rollout": "greedy", "robust": True}}))

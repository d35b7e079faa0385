"""OpenSpiel's own search agents as maag agents, registered in maag.bots.AGENTS on import as
`openspiel` (needs the `rl` extra: open-spiel):

- `openspiel:mcts`: open_spiel.python.algorithms.mcts.MCTSBot, on one uniform determinization
  of the observation (as maag's `mcts` searches one);
- `openspiel:ismcts` (the default): open_spiel.python.algorithms.ismcts.ISMCTSBot, which draws
  a new determinization for every simulation through the OpenSpiel door's
  `resample_from_infostate` (maag's determinization of the seat's observation).

Both run OpenSpiel's code unchanged on the OpenSpiel door's states (maag.rl.openspiel_game),
built from the bot's observation only. OpenSpiel decides one action at a time: a plan is one
search per action of the turn, each given `turn_share` of what is left of the turn's time
(the turn ends with end_turn when its time is spent), or only the first action in a game
with chance inside a turn. OpenSpiel's searches count simulations, not time: with a time
budget a search stops before a simulation that would not end in time (its length measured
on the previous one); the tree built so far decides, as OpenSpiel's own final choice would.

    maag match openspiel:ismcts ismcts --game cards --tc 100ms
    maag bot run openspiel:mcts,evaluator=heuristic --connect HOST:PORT"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from maag.clients import Option
from maag.engine import Action, Game, State
from maag.engine.search import SearchResult, SearchStats

from .agents import Agent, AgentError, AgentSpec, register

__all__ = ["OpenSpielAgent", "ALGORITHMS"]

ALGORITHMS = ("ismcts", "mcts")
EVALUATORS = ("random", "heuristic")
FINAL_POLICIES = ("max_visit_count", "normalized_visit_count", "max_value")


class _OutOfTime(Exception):
    """The search's time is up: raised before a simulation that would not end in time, and
    inside a random rollout that runs past the deadline (that simulation is dropped)."""


class _Clock:
    """The deadline of one search. `tick`, before each simulation: a simulation starts only
    if the previous one's length still fits (the first two always start: OpenSpiel's first
    simulation only evaluates the root, the second gives it a child to choose). `check`,
    at each step of a random rollout: past the deadline the simulation stops."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.last: float | None = None
        self.count = 0

    def tick(self) -> None:
        now = time.perf_counter()
        if self.deadline is not None and self.count >= 2 and self.last is not None \
                and now + (now - self.last) > self.deadline:
            raise _OutOfTime
        self.last = now
        self.count += 1

    def check(self) -> None:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _OutOfTime


class _TimedRandomState(np.random.RandomState):
    """The random source of OpenSpiel's RandomRolloutEvaluator, which draws once per step of
    a rollout: each draw first checks the search's clock, so a rollout that would run past
    the deadline stops there (OpenSpiel's evaluator itself unchanged)."""

    clock: _Clock | None = None

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        if self.clock is not None:
            self.clock.check()
        return super().choice(*args, **kwargs)


def _openspiel() -> tuple[Any, Any, Any]:
    """OpenSpiel's modules and the door (imported on first use: an optional dependency)."""
    try:
        from maag.rl import openspiel_game
        from open_spiel.python.algorithms import ismcts, mcts
    except ImportError as e:
        raise AgentError(f"the openspiel agents need open-spiel (pip install 'maag[rl]'): {e}") from None
    return openspiel_game, mcts, ismcts


_DOORS: dict[tuple[str, str], Any] = {}


def _door(game: Game) -> Any:
    """The OpenSpiel game of a configured maag game (one per configuration)."""
    key = (game.name, json.dumps(game.config, sort_keys=True, default=str))
    door = _DOORS.get(key)
    if door is None:
        og, _, _ = _openspiel()
        door = _DOORS[key] = og.MaagGame(game.name, game=game)
    return door


class OpenSpielAgent(Agent):
    """OpenSpiel's MCTS or ISMCTS on the OpenSpiel door (see the module)."""

    def __init__(self, spec: AgentSpec, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(spec, options)
        _openspiel()  # imported now, not in the first turn's time; AgentError without it

    def _search(self, root: State, budget_ms: float, iterations: int, seed: int) -> SearchResult:
        og, mcts, ismcts = _openspiel()
        o = self.options
        game = root.game
        door = _door(game)
        rng = np.random.RandomState(seed % 2**32)
        seat = root.current_player
        observation = root if root.observer is not None else root.observation(seat)
        state = door.new_initial_state(observation.determinize(og.to_seed(rng.uniform())))
        stepwise = game.spec.chance_within_turn
        start = time.perf_counter()
        end = start + budget_ms / 1000 if budget_ms > 0 else None
        rollout_rng = _TimedRandomState(int(rng.randint(0, 2**31)))
        evaluator = self._evaluator(mcts, rollout_rng, game)
        plan: list[Action] = []
        simulations = 0
        over = 0.0  # the most a decision of this turn ran past its deadline (seconds)
        while True:
            legal = state.legal_actions()
            if len(legal) == 1:
                action = legal[0]
            else:
                now = time.perf_counter()
                if end is not None and now + over >= end - 0.001 and plan:  # the turn's time is spent
                    action = next(a for a in legal if game.vt.is_end_turn(door.table.code(a)))
                    plan.append(Action(door.table.code(action), game.name))
                    break
                deadline = None if end is None else now + (end - now) * (1.0 if stepwise else o["turn_share"])
                clock = rollout_rng.clock = _Clock(deadline)
                action = self._decide(mcts, ismcts, door, state, evaluator, rng, clock, iterations)
                simulations += clock.count
                if deadline is not None:
                    over = max(over, time.perf_counter() - deadline)
            code = door.table.code(action)
            plan.append(Action(code, game.name))
            state.apply_action(action)
            if stepwise or state.is_terminal() or state.current_player() != seat or game.vt.is_end_turn(code):
                break
        elapsed = (time.perf_counter() - start) * 1000
        stats = SearchStats(iterations=simulations, evaluations=simulations, nodes=0, elapsed_ms=elapsed,
                            value=0.0, stop="time" if end is not None else "iterations")
        return SearchResult(plan, stats)

    def _evaluator(self, mcts: Any, rng: np.random.RandomState, game: Game) -> Any:
        if self.options["evaluator"] == "random":
            return mcts.RandomRolloutEvaluator(n_rollouts=self.options["rollouts"], random_state=rng,
                                               max_length=self.options["rollout_length"] or None)
        return _heuristic(mcts)(game.spec.value_scale)

    def _decide(self, mcts: Any, ismcts: Any, door: Any, state: Any, evaluator: Any,
                rng: np.random.RandomState, clock: _Clock, iterations: int) -> int:
        """One search from `state`, the action chosen (counting its simulations on `clock`).
        A search stopped before its root has a visited child (a rollout longer than the
        decision's time) plays a uniformly random legal action."""
        o = self.options
        # at least 2: OpenSpiel's first simulation only evaluates the root
        most = max(2, iterations or o["simulations"] or 10**9)
        if o["algorithm"] == "mcts":
            bot = _timed_mcts(mcts)(door, o["uct_c"], most, evaluator, solve=o["solve"], random_state=rng)
            bot.clock = clock
            try:
                root = bot.mcts_search(state)
            except _OutOfTime:
                root = bot.root
            if root is None or not root.children:
                return int(rng.choice(state.legal_actions()))
            return int(root.best_child().action)
        policy = {"max_visit_count": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "normalized_visit_count": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
                  "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE}[o["final_policy"]]
        bot = ismcts.ISMCTSBot(door, evaluator, o["uct_c"], most, max_world_samples=o["max_world_samples"],
                               random_state=rng, final_policy_type=policy)

        def resample(st: Any, player: int) -> Any:
            clock.tick()
            return st.resample(player, int(rng.randint(0, 2**62)))

        bot.set_resampler(resample)
        try:
            result = bot.run_search(state)
        except _OutOfTime:
            node = getattr(bot, "_root_node", None)  # the tree OpenSpiel's search built so far
            if node is None or node.total_visits <= 0:
                return int(rng.choice(state.legal_actions()))
            result = bot.get_final_policy(state, node)
        actions, probs = zip(*result, strict=True)
        return int(rng.choice(actions, p=np.asarray(probs) / sum(probs)))


@lru_cache(maxsize=1)
def _timed_mcts(mcts: Any) -> type:
    class TimedMCTSBot(mcts.MCTSBot):  # type: ignore[misc,name-defined]
        """OpenSpiel's MCTSBot whose simulations stop at a clock (the tree built so far is kept)."""

        clock: _Clock
        root: Any = None

        def _apply_tree_policy(self, root: Any, state: Any) -> Any:
            self.root = root
            self.clock.tick()
            return super()._apply_tree_policy(root, state)

    return TimedMCTSBot


@lru_cache(maxsize=1)
def _heuristic(mcts: Any) -> type:
    class HeuristicEvaluator(mcts.Evaluator):  # type: ignore[misc,name-defined]
        """The game's heuristic of the (determinized) leaf, scaled to [-1, 1], and uniform
        priors: an OpenSpiel evaluator on maag's evaluation, instead of a random rollout."""

        def __init__(self, scale: float) -> None:
            self.scale = scale if scale > 0 else 1.0

        def evaluate(self, state: Any) -> np.ndarray:
            v = max(-1.0, min(1.0, state.maag_state.evaluate(0) / self.scale))
            return np.array([v, -v])

        def prior(self, state: Any) -> list[tuple[int, float]]:
            legal = state.legal_actions(state.current_player())
            return [(a, 1.0 / len(legal)) for a in legal]

    return HeuristicEvaluator


def _params() -> tuple[Option, ...]:
    return (
        Option(name="algorithm", type="choice", default="ismcts", choices=ALGORITHMS,
               help="ismcts: open_spiel.python.algorithms.ismcts (a new determinization every "
                    "simulation); mcts: open_spiel.python.algorithms.mcts on one determinization. "
                    "Also given bare: openspiel:mcts"),
        Option(name="uct_c", type="float", default=2.0, min=0,
               help="UCT's exploration constant, returns in [-1, 1] (OpenSpiel's examples: 2)"),
        Option(name="simulations", type="int", default=0, min=0, max=10**9,
               help="simulations per decision at most (OpenSpiel's max_simulations); 0: as many "
                    "as the time allows"),
        Option(name="evaluator", type="choice", default="random", choices=EVALUATORS,
               help="random: OpenSpiel's RandomRolloutEvaluator (uniform random play to the end "
                    "of the game); heuristic: the game's evaluation of the leaf, no rollout"),
        Option(name="rollouts", type="int", default=1, min=1, max=1000,
               help="evaluator=random: rollouts per leaf (n_rollouts)"),
        Option(name="rollout_length", type="int", default=0, min=0, max=10**6,
               help="evaluator=random: actions of a rollout at most, then a draw (max_length; 0: "
                    "to the end of the game)"),
        Option(name="solve", type="bool", default=True,
               help="mcts: back up proven wins and losses (MCTS-Solver, OpenSpiel's default)"),
        Option(name="max_world_samples", type="int", default=-1, min=-1,
               help="ismcts: determinizations drawn at most, then reused (-1: a new one each "
                    "simulation)"),
        Option(name="final_policy", type="choice", default="max_visit_count", choices=FINAL_POLICIES,
               help="ismcts: the root's final policy (OpenSpiel's ISMCTSFinalPolicyType)"),
        Option(name="turn_share", type="float", default=0.5, min=0.01, max=1,
               help="the share of what is left of the turn's time each decision of the turn "
                    "searches (a game with chance inside a turn decides one action a plan, with "
                    "all of it)"),
    )


register(AgentSpec(
    "openspiel", "openspiel",
    "OpenSpiel's MCTS or ISMCTS (open_spiel.python.algorithms) through the OpenSpiel door, one "
    "search per action from the bot's observation: openspiel:ismcts, openspiel:mcts",
    _params(), factory=OpenSpielAgent, fields={}, positional="algorithm"))

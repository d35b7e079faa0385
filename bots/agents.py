"""The bundled search agents by name, each a C search kernel with documented, typed
parameters whose defaults are the source papers' best settings.

    >>> from maag.bots import make_agent
    >>> agent = make_agent("ne-mcts", "rollout_turns=2")        # or make_agent("ne-mcts", rollout_turns=2)
    >>> plan = agent.plan(state, budget_ms=500)                  # list[Action] for the rest of the turn

Names: random, random-meta, egreedy, greedy-action, greedy-turn, greedy-reply, mcts, ne-mcts, bb-mcts,
collapse-mcts, oep, emcts, fh-emcts, ucb, uct, rap, rmp, rmpmax (`AGENTS`; `best`, each game's
strongest of them, is maag.bots.best's). An agent's
defaults may differ by game (`AgentSpec.game_defaults`: its best measured setting there);
it takes them from the first position it plans. `preset=NAME` applies a named set of
settings over those (`AgentSpec.presets`; `preset=paper`: the source paper's settings, for
mcts, ne-mcts, bb-mcts, oep, emcts and fh-emcts); settings given with it still win.
Parameters come as typed keywords or as "key=value" strings (the command line's form);
`parse_agent("mcts:c=0.5,rollout_turns=2")` takes the whole spec in one string.

An agent only ever sees what its seat may see: `plan` takes a `maag.engine.Observation`
(a full `State` given instead is first reduced to the observation of the player to act),
and agents that search full states sample one from it (a uniform determinization). The
determinized agents `pimc` and `ismcts` (maag.bots.hidden) are registered here too; the
cheating twins that see the true state exist only for experiments (maag.bots.cheating)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from maag.clients import BotError, Option
from maag.engine import Action, Observation, State
from maag.engine.evalnet import Network, NetworkFileError, load_network
from maag.engine.hidden import run_on_state
from maag.engine.observation import observer_of
from maag.engine.search import MOVES, POLICIES, POSTS, SELECTIONS, SearchResult, SearchTree, search

__all__ = ["AGENTS", "Agent", "AgentError", "AgentSpec", "make_agent", "parse_agent",
           "DEFAULT_BUDGET_MS", "ITERATIONS", "evaluation", "register", "mcts_options"]

# The time budget of a plan() call that names neither a time nor an iteration budget.
DEFAULT_BUDGET_MS = 1000.0


class AgentError(ValueError):
    """An unknown agent, or a parameter that is unknown or does not fit."""


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """An agent: the kernel it runs, its parameters, and kernel settings it fixes."""

    name: str
    kernel: str
    summary: str
    params: tuple[Option, ...]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    needs_budget: bool = True
    factory: Callable[[AgentSpec, Mapping[str, Any]], Agent] | None = None
    """Builds the agent (default: `Agent`); the determinized agents have their own classes."""
    fields: Mapping[str, str] = field(default_factory=lambda: {"rollout": "policy"})
    """Parameters whose kernel field (mg_search_params) has another name; "": a setting of the
    agent that is no kernel field (greedy reply's hands)."""
    games: tuple[str, ...] = ()
    """The games the agent plays; empty: every game (the generic kernels)."""
    game_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per game, the parameters whose default differs there (its best measured setting);
    what a user sets always wins."""
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Named settings chosen with `preset=NAME`, applied over the (per-game) defaults, under
    what a user sets; "paper" is the source paper's settings."""
    positional: str | None = None
    """The parameter a bare setting (no "=") sets: `openspiel:mcts` is algorithm=mcts."""

    def param(self, name: str) -> Option:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise AgentError(f"agent {self.name!r} has no parameter {name!r} (known: {known})")

    def parse(self, name: str, value: Any) -> Any:
        """`value` for parameter `name` (a string, or already typed); AgentError when the
        parameter is unknown or the value does not fit."""
        try:
            parsed = self.param(name).parse(value, "parameter")
        except BotError as e:
            raise AgentError(str(e)) from None
        if name == "eval":
            evaluation(parsed)  # the file is read and checked now
        return parsed

    def preset(self, name: Any) -> str:
        """`name` if it is one of this agent's presets, else AgentError."""
        if not isinstance(name, str) or name not in self.presets:
            known = ", ".join(self.presets) or "none"
            raise AgentError(f"agent {self.name!r} has no preset {name!r} (known: {known})")
        return name

    def defaults(self, game: str | None = None, preset: str | None = None) -> dict[str, Any]:
        """The parameters' defaults, for `game` when given (its `game_defaults` applied),
        then `preset`'s settings when given."""
        out = {p.name: p.default for p in self.params}
        if game is not None:
            out.update(self.game_defaults.get(game, {}))
        if preset is not None:
            out.update(self.presets[self.preset(preset)])
        return out


# ---- parameters shared by several agents ---------------------------------------------------

_POLICY_NAMES = tuple(POLICIES)
_C = 1 / math.sqrt(2)


def _prune() -> Option:
    return Option(name="prune", type="bool", default=True,
                 help="remove dominated actions first (the reference's ActionPruner)")


def _forced() -> Option:
    # Off by default until measured (issue 58), though it cannot change the plan: with no
    # choice the search could only return the forced actions.
    return Option(name="forced", type="bool", default=False,
                 help="no search when the turn leaves no choice (one legal action at a time "
                      "to the end of the turn): the forced actions at once, zero iterations")


def _rollout(default: str, turns: int = 1) -> tuple[Option, ...]:
    return (
        Option(name="rollout", type="choice", default=default, choices=_POLICY_NAMES,
              help="rollout policy: random, meta (unit vs card, then a group), egreedy, greedy"),
        Option(name="epsilon", type="float", default=0.5, min=0, max=1,
              help="egreedy: probability of a uniform choice instead of the best-rated one"),
        Option(name="rollout_turns", type="int", default=turns, min=0, max=1000,
              help="rollout depth in turns (ends of turn), then the heuristic"),
    )


# An iteration budget carried by the agent's name, so that `maag match mcts:iterations=400 X`
# compares agents at equal simulations through the referee (the clock still applies: the search
# stops at whichever comes first). Not a kernel field (Agent.kernel_params leaves it out).
ITERATIONS = Option(name="iterations", type="int", default=0, min=0, max=10**9,
                    help="search iterations (the kernel's unit: MCTS simulations) per plan at "
                         "most, as OpenSpiel's max_simulations; 0: as many as the time allows. "
                         "With a clock, the search stops at whichever comes first")


def mcts_options(c: float, rollout: str, *, robust: bool = False, horizon_root: bool = False,
                 turns: int = 1) -> tuple[Option, ...]:
    """MCTS parameters (of the MCTS agents here and of bots/hidden.py's ismcts); the defaults
    are the reference's unless an agent's entry says why."""
    return (
        Option(name="c", type="float", default=c, min=0,
              help="exploration constant: UCB = mean + 2c sqrt(2 ln N / n), rewards in [0, 1]"),
        *_rollout(rollout, turns),
        Option(name="transpositions", type="bool", default=True,
              help="share nodes between action orders reaching the same state"),
        Option(name="robust", type="bool", default=robust,
              help="follow the most visited edge for the plan (false: the highest mean, as the "
                   "reference)"),
        Option(name="horizon_root", type="bool", default=horizon_root,
              help="count rollout_turns from the root, so all leaves are evaluated at the same "
                   "point of the game (false: from the leaf, as the reference)"),
        Option(name="complete", type="bool", default=True,
              help="complete a plan the tree did not reach the end of turn with greedy "
                   "action (false: end the turn early, as the reference)"),
        Option(name="max_nodes", type="int", default=1 << 22, min=1,
              help="tree size cap; the search stops when it is full"),
        Option(name="threads", type="int", default=1, min=1, max=64,
              help="trees searched at once, one thread each, the budget each (root "
                   "parallelism), each on its own determinization when hidden cards are "
                   "sampled; the plan follows their summed visits. Not with bridge burning "
                   "or collapse"),
        _prune(),
        Option(name="solve", type="bool", default=False,
              help="MCTS-Solver: a won or lost end of game proves its edge, proofs go up the "
                   "tree, a proven win is played at once (found lethal) and proven losses "
                   "avoided; the search stops when the root is proven"),
        _forced(),
        # Off by default until measured (issue 58).
        Option(name="widen_k", type="float", default=0.0, min=0,
              help="progressive widening: a node reached n times expands at most "
                   "max(1, widen_k n^widen_alpha) of its actions, the best-rated first (0: off, "
                   "every action before selection)"),
        Option(name="widen_alpha", type="float", default=0.5, min=0, max=1,
              help="progressive widening's exponent (see widen_k)"),
        ITERATIONS,
    )


# Off by default until measured (issue 58). Not for bridge burning or collapse (their root
# moves inside one search) nor for several trees.
_REUSE = Option(name="reuse", type="bool", default=False,
                help="search again before every action of the turn (the bot sends one action at "
                     "a time), going on in the played action's subtree of the kept tree when the "
                     "position is the one the tree expected; after a chance outcome (or a new "
                     "turn) a new tree from the real position, and on a new determinization")


# The source papers' settings (`preset=paper`). Justesen et al. 2017 (Hero Academy, the
# reference code): vanilla MCTS with C = 1/sqrt(2), egreedy rollouts (eps 0.5) of one turn
# from the leaf, the highest mean, END_TURN after the tree's path; non-exploring MCTS the
# same with C = 0 and greedy rollouts; bridge-burning MCTS vanilla MCTS's settings in each
# phase; OEP population 100, survival 0.5, mutation 0.1, heuristic fitness, one population.
_MCTS_PAPER: dict[str, Any] = {"c": 1 / math.sqrt(2), "rollout": "egreedy", "epsilon": 0.5,
                               "rollout_turns": 1, "transpositions": True, "robust": False,
                               "horizon_root": False, "complete": False, "prune": True}
_NE_MCTS_PAPER: dict[str, Any] = {**_MCTS_PAPER, "c": 0.0, "rollout": "greedy"}
_OEP_PAPER: dict[str, Any] = {"population": 100, "survival": 0.5, "mutation": 0.1, "history": True,
                              "fitness_rollouts": 0, "islands": 1, "prune": True}

AGENTS: dict[str, AgentSpec] = {}

# The generic kernels that evaluate positions: their agents take `eval` (pimc passes it to
# its inner agent like its other settings; a game's own agents, `AgentSpec.games`, do not).
_EVALUATING = ("greedy-action", "greedy-turn", "reply", "mcts", "oep", "emcts", "ucb", "uct", "ismcts")
_EVAL = Option(name="eval", type="str", default="heuristic",
               help="the evaluation: heuristic (the game's hand-written one), or neat:FILE, an "
                    "evolved network in neat-python's network JSON (maag neat evolve) on the "
                    "game's features")


def register(spec: AgentSpec) -> None:
    """Add an agent to the registry (an evaluating kernel's agent for every game also takes
    `eval`): how bots/hidden.py, bots/conquest.py and the others add theirs."""
    if spec.kernel in _EVALUATING and not spec.games:
        spec = replace(spec, params=(*spec.params, _EVAL), fields={**spec.fields, "eval": "eval_net"})
    AGENTS[spec.name] = spec


def evaluation(value: str) -> Network | None:
    """The network an `eval` setting names (None: the heuristic); AgentError with the
    reason for anything else or for a file that cannot be used."""
    if value == "heuristic":
        return None
    kind, sep, path = value.partition(":")
    if kind != "neat" or not sep or not path:
        raise AgentError(f"parameter 'eval' must be heuristic or neat:FILE, not {value!r}")
    try:
        return load_network(path)
    except NetworkFileError as e:
        raise AgentError(f"parameter 'eval': {e}") from None


register(AgentSpec(
    "random", "policy", "uniformly random legal actions (end_turn only when nothing else is legal)",
    (), {"policy": "random"}, needs_budget=False))
register(AgentSpec(
    "random-meta", "policy",
    "random 'meta' policy: unit or card actions first, then one unit or card, then uniform",
    (Option(name="p_card", type="float", default=0.25, min=0, max=1,
           help="probability of trying card actions before unit actions"),),
    {"policy": "meta"}, needs_budget=False))
register(AgentSpec(
    "egreedy", "policy",
    "epsilon-greedy over the action rating within one unit's or card's actions (the "
    "reference's rollout policy)",
    (Option(name="epsilon", type="float", default=0.5, min=0, max=1,
           help="probability of a uniform choice instead of the best-rated one"),
     Option(name="p_card", type="float", default=0.25, min=0, max=1,
           help="probability of trying card actions before unit actions")),
    {"policy": "egreedy"}, needs_budget=False))
register(AgentSpec(
    "greedy-action", "greedy-action",
    "one ply at a time: the action whose result has the best heuristic value",
    (_prune(),), needs_budget=False))
register(AgentSpec(
    "greedy-turn", "greedy-turn",
    "depth-first over the whole turn (rating order, transposition table), anytime: the "
    "best end-of-turn state found",
    (_prune(),
     Option(name="legal_order", type="bool", default=False,
           help="search actions in the game's legal order, as the reference's greedy turn "
                "(false: by rating, highest first, which makes the anytime search much stronger)"),
     Option(name="max_nodes", type="int", default=1 << 22, min=1,
           help="transposition table size cap (states)"),
     Option(name="widen", type="bool", default=False,
            help="iterative widening: the top 1, 2, 3, 4, 6, 9 actions by rating at every step, "
                 "then the whole turn, so a search cut short by its budget has looked at every "
                 "step's best actions instead of the first action's subtree alone")),
    fields={"widen": "turn_widen"}))
register(AgentSpec(
    "greedy-reply", "reply",
    "greedy turn's best turns, each answered by the opponent's greedy turn on sampled hands "
    "and then the mover's own next greedy turn; the turn worth most on average after them",
    (Option(name="candidates", type="int", default=16, min=1, max=64,
            help="the mover's best turns (by their own end) that get an answer"),
     # hands=2 with turns=2: the same 64 greedy-turn searches a turn as the earlier default
     # (turns=1, hands=4). Against greedy turn in the real game: at 500 ms 34-0-6 where
     # turns=1 gave 31-0-9; at 1 s through the referee 96-0-24 over 120 games where turns=1
     # gave 42-0-18 over 60; against ne-mcts at 1 s 21-0-9 where turns=1 gave 10-0-20
     # (docs/results-heroes.md, "Greedy reply, three plies").
     Option(name="hands", type="int", default=2, min=1, max=64,
            help="the opponent's hands sampled from an observation; each candidate's value is "
                 "the mean of its answers on them"),
     Option(name="turns", type="int", default=2, min=0, max=8,
            help="greedy turns played after a candidate before it is valued: 1 the opponent's "
                 "answer, 2 also the mover's next turn (the threats the answer left), ...; each "
                 "gets an even share of the answers' time"),
     # Off (the earlier behaviour) until matches choose otherwise (issue 58, heroes at 500 ms;
     # docs/results-heroes.md, "Fifth sitting").
     Option(name="share", type="float", default=0.5, min=0.05, max=0.95,
            help="the share of the turn's time the own turn's search may use; the answers get "
                 "the rest"),
     Option(name="quick", type="bool", default=False,
            help="the mover's own turns after the answer (turns >= 2) are played by greedy "
                 "action, one ply at a time, so the opponent's answers get all the answers' time"),
     Option(name="threads", type="int", default=1, min=1, max=64,
            help="the answers searched on this many threads at once (the own turn's search on "
                 "one); the plan at an iteration budget is the same on any number"),
     Option(name="widen", type="bool", default=False,
            help="the opponent's answers search by iterative widening (greedy-turn's widen: the "
                 "top 1, 2, 3, 4, 6, 9 actions by rating at every step, then the whole turn), so an "
                 "answer cut short by its share of the time still finds most strong answers"),
     Option(name="widen_own", type="bool", default=False,
            help="the own turn's search (the candidates) by iterative widening too, so a turn "
                 "too wide for its share of the time still gets candidates that differ in their "
                 "first actions"),
     _prune()),
    fields={"candidates": "arms", "hands": "", "turns": "rollout_turns", "share": "reply_share",
            "quick": "reply_quick", "threads": "threads", "widen": "turn_widen",
            "widen_own": "reply_widen"}))
register(AgentSpec(
    "mcts", "mcts",
    "vanilla MCTS over single actions: UCB1, multi-action negamax backup, transpositions, "
    "egreedy rollouts of one turn",
    (*mcts_options(_C, "egreedy"), _REUSE), presets={"paper": _MCTS_PAPER},
    fields={"rollout": "policy", "reuse": ""}))
register(AgentSpec(
    "ne-mcts", "mcts",
    "non-exploring MCTS: C = 0 and deterministic greedy rollouts, so every child is visited "
    "once and then the best is deepened; the plan follows the most visited edges",
    # robust: with C = 0 a node's mean sinks as its (mostly worse) children are added, so
    # the highest mean marks the least explored edge; the most visited one is the edge the
    # search kept choosing (docs/results-heroes.md: 76% vs greedy turn instead of 53%).
    (*mcts_options(0.0, "greedy", robust=True), _REUSE), presets={"paper": _NE_MCTS_PAPER},
    fields={"rollout": "policy", "reuse": ""}))
register(AgentSpec(
    "bb-mcts", "mcts",
    "bridge-burning MCTS: the budget is split into one phase per action of the turn; after "
    "each phase only the best root child survives and becomes the root; non-exploring "
    "within a phase (C = 0, greedy rollouts, most visited edge)",
    # Non-exploring settings inside each phase: against greedy turn at 100 ms per turn, 40
    # games each (docs/results-heroes.md), 74%; the earlier default (C = 1/sqrt(2), egreedy
    # rollouts to the end of the opponent's reply) 43%; C = 0 and greedy rollouts with that
    # two-turn horizon 48%; C = 1/sqrt(2) with greedy one-turn rollouts 36%.
    mcts_options(0.0, "greedy", robust=True), {"bridge_burning": True}, presets={"paper": _MCTS_PAPER}))
register(AgentSpec(
    "collapse-mcts", "mcts",
    "collapsing MCTS (thesis): after k end-of-turn nodes are found, branches of the turn "
    "that reach none are dropped and the search goes on below the survivors",
    (*mcts_options(_C, "egreedy"),
     Option(name="k", type="int", default=-1, min=-1,
            help="end-of-turn nodes before the collapse; -1: 20 per second of budget")),
    fields={"rollout": "policy", "k": "collapse_k"}))
register(AgentSpec(
    "oep", "oep",
    "Online Evolutionary Planning: whole-turn genomes, uniform crossover with repair, "
    "mutation, truncation selection, heuristic fitness",
    (Option(name="population", type="int", default=100, min=2, max=100000, help="genomes"),
     Option(name="survival", type="float", default=0.5, min=0, max=1,
           help="fraction of the population kept each generation"),
     Option(name="mutation", type="float", default=0.1, min=0, max=1,
           help="probability that a child is mutated"),
     Option(name="history", type="bool", default=True,
           help="history table: genomes with the same outcome share its fitness"),
     Option(name="fitness_rollouts", type="int", default=0, min=0,
           help="0: heuristic fitness; n > 0: minimum over up to n rollouts (one per "
                "generation survived)"),
     Option(name="islands", type="int", default=1, min=1, max=64,
           help="populations evolved at once, one thread each, the budget each; the best "
                "genomes migrate around the ring of islands"),
     Option(name="migration_interval", type="int", default=20, min=1,
           help="islands: generations between migrations"),
     Option(name="migrants", type="int", default=5, min=0,
           help="islands: best genomes each island sends to the next (0: none)"),
     *_rollout("egreedy"),
     _prune()),
    presets={"paper": _OEP_PAPER}))


def _emcts(c: float, branching: int, tree_depth: int, backup_max: bool = False) -> tuple[Option, ...]:
    """EMCTS parameters (engine_c/src/mg_search_emcts.c says which choice comes from where)."""
    return (
        Option(name="c", type="float", default=c, min=0,
               help="exploration constant: UCB = mean + 2c sqrt(2 ln N / n), the means rescaled "
                    "to [0, 1] by the lowest and highest genome values of the search"),
        Option(name="branching", type="int", default=branching, min=1, max=100000,
               help="mutations (children) of a genome before UCB descends below it"),
        Option(name="tree_depth", type="int", default=tree_depth, min=0, max=10000,
               help="mutations from the root at most; each iteration then mutates on at random "
                    "to this depth (0: no limit, no such rollout)"),
        Option(name="backup_max", type="bool", default=backup_max,
               help="a node's value is the best genome value below it (false: the mean, as MCTS)"),
        Option(name="max_nodes", type="int", default=1 << 16, min=1,
               help="tree size cap; then iterations revisit leaves"),
        _prune(),
    )


# EMCTS's and FH-EMCTS's settings. The papers' full texts could not be read here (their
# abstracts could; docs/results-heroes.md, "EMCTS and FH-EMCTS"): the algorithm follows
# them, the numbers are ours, from short runs against OEP at equal genome counts.
_EMCTS_PAPER: dict[str, Any] = {"c": 0.1, "branching": 10, "tree_depth": 0, "backup_max": False,
                                "prune": True}
_FH_EMCTS_PAPER: dict[str, Any] = {**_EMCTS_PAPER, "horizon": 10, "model_k": 10}

register(AgentSpec(
    "emcts", "emcts",
    "Evolutionary MCTS (Baier and Cowling 2018): a tree of whole-turn genomes whose edges are "
    "mutations (one gene replaced, the rest repaired), UCB over mutations, the heuristic of a "
    "genome's end of turn as its value, the best genome found as the plan; a budget iteration "
    "is one genome",
    # backup_max by default: against OEP (preset=paper) at equal genomes (10,100 a turn), 60%
    # [47-71] with it, 45% [33-58] with the mean, 60 games each on the same deals; then 55.5%
    # [45.7-64.9] over 100 games with it, 37.2% [30.8-44.1] over 200 with the mean (the paper
    # preset) (docs/results-heroes.md, "EMCTS and FH-EMCTS").
    _emcts(_EMCTS_PAPER["c"], _EMCTS_PAPER["branching"], _EMCTS_PAPER["tree_depth"], backup_max=True),
    {"horizon": 0}, presets={"paper": _EMCTS_PAPER}))
register(AgentSpec(
    "fh-emcts", "emcts",
    "Flexible-Horizon EMCTS (Baier and Cowling 2018): EMCTS whose genomes are the next "
    "`horizon` own actions across turn ends; the opponent's turns, and the rest of the own "
    "turn where a genome runs out, are played by greedy models over the model_k best-rated "
    "actions",
    (*_emcts(_FH_EMCTS_PAPER["c"], _FH_EMCTS_PAPER["branching"], _FH_EMCTS_PAPER["tree_depth"]),
     Option(name="horizon", type="int", default=_FH_EMCTS_PAPER["horizon"], min=1, max=62,
            help="own actions a genome holds, across turn ends (the search depth)"),
     Option(name="model_k", type="int", default=_FH_EMCTS_PAPER["model_k"], min=1, max=1024,
            help="the greedy models' step: the best by the heuristic of this many best-rated "
                 "actions")),
    presets={"paper": _FH_EMCTS_PAPER}))
# The card-game thesis's players (spec/cards.md §8). Their exploration constant is the
# thesis's: xbar + c sqrt(2 ln N / n) with rewards in [-1, 1] (MCTS's c above is written
# mean + 2c sqrt(2 ln N / n) over [0, 1], so MCTS's c = thesis c / 4).
_THESIS_C = math.sqrt(2)
_THESIS_PLAYOUT = {"rollout": "rap", "rollout_turns": 1000}
# In the card game: the thesis's best settings (spec §8.7: c = 0.1 for both, 1,000 bandits,
# RMPmax completions), measured again in docs/results-cards.md.
_CARDS_UCB = {"moves": "dfs", "max_bandits": 1000, "final": "max-wins", "c": 0.1, **_THESIS_PLAYOUT}
_CARDS_UCT = {"c": 0.1, "post": "rmpmax"}


def _moves_params(prune_help: str) -> tuple[Option, ...]:
    return (Option(name="max_moves", type="int", default=10000, min=1, max=10_000_000,
                   help="moves generated at most (depth first over the turn)"),
            Option(name="prune", type="bool", default=False, help=prune_help))


_PRUNE_MOVES = "skip a state the generation already reached (the thesis's pruning; shortens moves)"

register(AgentSpec(
    "ucb", "ucb",
    "flat UCB over whole moves (the card-game thesis's bandit): each arm a move, each pull "
    "the move replayed on a fresh determinization, then a rollout",
    (Option(name="max_bandits", type="int", default=100, min=1, max=100000,
            help="arms: the first moves of the move tree (moves=dfs) or distinct sampled turns"),
     Option(name="moves", type="choice", default="sample", choices=tuple(MOVES),
            help="dfs: the thesis's depth-first move generation; sample: the greedy turn, then "
                 "distinct turns of the rollout policy (for games with long turns)"),
     Option(name="final", type="choice", default="max-reward", choices=tuple(SELECTIONS),
            help="final choice: max-reward (highest mean), robust (most pulls), max-wins (most wins)"),
     Option(name="c", type="float", default=_THESIS_C, min=0,
            help="exploration: xbar + c sqrt(2 ln N / n), rewards in [-1, 1] (the thesis's scale)"),
     Option(name="prune", type="bool", default=False, help="moves=dfs: " + _PRUNE_MOVES),
     *_rollout("egreedy")),
    fields={"rollout": "policy", "max_bandits": "arms", "final": "select", "prune": "transpositions"},
    game_defaults={"cards": _CARDS_UCB}))
register(AgentSpec(
    "uct", "uct",
    "UCT over atomic actions (the card-game thesis): one move tree, closed loop, a fresh "
    "determinization per simulation, rollouts to the end of the game, the most visited path",
    (Option(name="c", type="float", default=_THESIS_C, min=0,
            help="exploration: xbar + c sqrt(2 ln n / n_j), rewards in [-1, 1] (the thesis's scale)"),
     Option(name="post", type="choice", default="none", choices=tuple(POSTS),
            help="completion of a path that stops before end_turn: none (end the turn), rap "
                 "(random actions), rmp (a random move), rmpmax (a random longest move)"),
     Option(name="max_moves", type="int", default=10000, min=1, max=10_000_000,
            help="post=rmp/rmpmax: moves generated at most"),
     Option(name="max_nodes", type="int", default=65536, min=1, help="tree nodes at most"),
     *_rollout("rap", turns=1000)),
    game_defaults={"cards": _CARDS_UCT}))
register(AgentSpec(
    "rap", "policy",
    "random action player (the thesis's RAP): a uniformly random legal action, end_turn "
    "included, until the turn ends",
    (Option(name="gen_end_ply", type="bool", default=True,
            help="end_turn is one of the choices (false: only when nothing else is legal, "
                 "longer moves; the agent `random`)"),),
    needs_budget=False))
register(AgentSpec(
    "rmp", "rmp",
    "random move player (the thesis's RMP): a uniformly random move of the turn's move tree",
    _moves_params(_PRUNE_MOVES), {"longest": False}, needs_budget=False,
    fields={"prune": "transpositions"}))
register(AgentSpec(
    "rmpmax", "rmp",
    "RMPmax (the thesis): a uniformly random move among the longest of the move tree",
    _moves_params(_PRUNE_MOVES), {"longest": True}, needs_budget=False,
    fields={"prune": "transpositions"}))


class Agent:
    """A configured agent. `plan(state)` returns the actions for the rest of the turn of
    the player to act, ending with end_turn unless the game ends first."""

    def __init__(self, spec: AgentSpec, options: Mapping[str, Any] | None = None) -> None:
        self.spec = spec
        given = dict(options or {})
        self.preset = spec.preset(given.pop("preset")) if "preset" in given else None
        self.given = {key: spec.parse(key, value) for key, value in given.items()}
        self.options = {**spec.defaults(None, self.preset), **self.given}
        self.game: str | None = None  # the game whose defaults `options` holds
        self.last: SearchResult | None = None  # the result of the latest plan() call
        # `reuse`: the tree kept between plans, and the (determinized) state the tree expects
        # next: the last root after the plan's first action, None when that ended the turn.
        self._tree: SearchTree | None = None
        self._expected: State | None = None

    @property
    def stepwise(self) -> bool:
        """Whether the agent wants to plan again before every action of a turn (the bot
        then sends one action at a time, as in a game with chance inside a turn)."""
        return bool(self.options.get("reuse", False))

    def for_game(self, game: str) -> None:
        """Take the defaults of `game` (AgentSpec.game_defaults) and the preset under the
        settings given."""
        if game != self.game:
            self.game = game
            self.options = {**self.spec.defaults(game, self.preset), **self.given}

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.options.items() if v != self.spec.param(k).default}
        preset = [f"preset={self.preset!r}"] if self.preset else []
        return f"{self.name}({', '.join(preset + [f'{k}={v!r}' for k, v in changed.items()])})"

    def kernel_params(self) -> dict[str, Any]:
        """The kernel parameters (mg_search_params fields) this agent runs with."""
        out = {name: v for k, v in self.options.items()
               if k != "iterations" and (name := self.spec.fields.get(k, k))}
        if "gen_end_ply" in out:  # rap: the policy with or without end_turn
            out["policy"] = "rap" if out.pop("gen_end_ply") else "random"
        out.update(self.spec.fixed)
        if "eval_net" in out:  # eval: the heuristic is the kernels' default, a network is loaded
            net = evaluation(out.pop("eval_net"))
            if net is not None:
                out["eval_net"] = net
        return out

    def plan(self, view: Observation | State, budget_ms: float | None = None, iterations: int | None = None,
             seed: int | None = None) -> list[Action]:
        """Search from what the player to act sees and return the plan. `view` is an
        `Observation`; a full `State` is first reduced to the observation of the player to
        act, so hidden cards never reach the agent. `budget_ms` (wall clock) and
        `iterations` (the kernel's unit) bound the search; with neither, the budget is
        DEFAULT_BUDGET_MS. A fixed `seed` with an iteration budget and no time budget
        returns the same plan every time."""
        obs = view if isinstance(view, Observation) else Observation.of(view)
        return self._plan_root(obs.as_state(), budget_ms, iterations, seed)

    def _plan_root(self, root: State, budget_ms: float | None, iterations: int | None,
                   seed: int | None) -> list[Action]:
        """Plan from `root`: an observation state, or (maag.bots.cheating only) a full one."""
        self.for_game(root.game.name)
        if iterations is None and self.options.get("iterations"):
            iterations = self.options["iterations"]  # the agent's own budget (ITERATIONS)
        if budget_ms is None and iterations is None:
            budget_ms = DEFAULT_BUDGET_MS if self.spec.needs_budget else 0.0
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little") >> 2
        self.last = self._search(root, budget_ms or 0.0, iterations or 0, seed)
        return self.last.plan

    def _search(self, root: State, budget_ms: float, iterations: int, seed: int) -> SearchResult:
        """The kernel on one uniform determinization of `root` (a full root as it is); OEP
        with rollout fitness averages its rollouts over fresh determinizations instead, MCTS
        on several threads gives each tree a determinization of its own, and the thesis's
        ucb and uct sample one for every simulation, and greedy reply answers its candidates on
        `hands` of them."""
        params = self.kernel_params()
        if self.options.get("reuse", False):
            return self._search_kept(root, params, budget_ms, iterations, seed)
        if self.spec.kernel in _PER_SIMULATION:
            return search(root, self.spec.kernel, params, budget_ms=budget_ms, iterations=iterations,
                          seed=seed)
        if self.spec.kernel == "oep" and params.get("fitness_rollouts", 0) > 0:
            return run_on_state("oep-hidden", root, "oep", params, budget_ms=budget_ms, iterations=iterations,
                                seed=seed)
        if self.spec.kernel == "mcts" and params.get("threads", 1) > 1 and observer_of(root) is not None:
            return run_on_state("mcts-hidden", root, "mcts", params, budget_ms=budget_ms,
                                iterations=iterations, seed=seed)
        if self.spec.kernel == "reply" and observer_of(root) is not None:
            return run_on_state("reply-hidden", root, "reply", params, k=self.options["hands"],
                                budget_ms=budget_ms, iterations=iterations, seed=seed)
        full = root if observer_of(root) is None else root.determinize(determinization_seed(seed))
        return search(full, self.spec.kernel, params, budget_ms=budget_ms, iterations=iterations, seed=seed)


    def _search_kept(self, root: State, params: dict[str, Any], budget_ms: float, iterations: int,
                     seed: int) -> SearchResult:
        """`reuse`: MCTS on the kept tree. If the observation is the one the previous plan's
        first action led to on its determinization (nothing hidden came to light: no chance
        outcome), the search goes on from that determinization, so the tree finds the
        action's subtree; otherwise from a new determinization and a new tree."""
        if self.spec.kernel != "mcts":
            raise AgentError(f"{self.name}: reuse is for the MCTS agents")
        if self._tree is None:
            self._tree = SearchTree()
        seat = observer_of(root)
        expected = self._expected
        if expected is not None and expected.game.name == root.game.name and \
                (expected if seat is None else expected.observation(seat)) == root:
            full = expected
        else:
            full = root if seat is None else root.determinize(determinization_seed(seed))
        result = search(full, "mcts", params, budget_ms=budget_ms, iterations=iterations, seed=seed,
                        tree=self._tree)
        self._expected = None
        if result.plan:
            nxt = full.clone()
            nxt.apply(result.plan[0])
            if not nxt.is_terminal and nxt.current_player == full.current_player:
                self._expected = nxt
        return result


# Kernels that take the observation itself and determinize it for every simulation.
_PER_SIMULATION = ("ucb", "uct")


def determinization_seed(seed: int) -> int:
    """The seed of the determinization an agent searches, derived from its search seed."""
    return (seed * 0x9E3779B97F4A7C15 + 0xD1B54A32D192ED03) & (2**64 - 1)


def make_agent(name: str, *settings: str, **options: Any) -> Agent:
    """The agent `name` with settings given as "key=value" strings and/or keywords."""
    if name not in AGENTS:
        raise AgentError(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    given: dict[str, Any] = {}
    spec = AGENTS[name]
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep and spec.positional is not None and key.strip() and spec.positional not in given:
            given[spec.positional] = key.strip()
            continue
        if not sep or not key.strip():
            raise AgentError(f"a setting must look like key=value, not {item!r}")
        given[key.strip()] = value.strip()
    given.update(options)
    return (spec.factory or Agent)(spec, given)


def parse_agent(text: str) -> Agent:
    """An agent from one string: "name" or "name:key=value,key=value"."""
    name, _, rest = text.partition(":")
    return make_agent(name.strip(), *[s for s in rest.split(",") if s.strip()])

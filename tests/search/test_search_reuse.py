"""Two more search parameters of issue 58: a tree kept between the actions of one turn
(`SearchTree`, mg_search_reuse; the agents' `reuse`) and progressive widening (`widen_k`,
`widen_alpha`). A kept tree searches on in the subtree of the action played when the real
position is the one the tree expected, and starts anew after a new turn or a chance outcome;
a new kept tree searches exactly as the plain kernel; widening holds a node to its best-rated
children. The same for ISMCTS (IsmctsTree), whose nodes are information sets: after a chance
outcome it goes on from that outcome's node. Also `best`, each game's strongest agent,
resolved and played in a real match."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from maag.bots import AGENTS, AgentError, make_agent, parse_agent
from maag.bots.best import BEST
from maag.engine import ConfigError, Game, Observation, State
from maag.engine.hidden import IsmctsTree, ismcts
from maag.engine.search import SearchTree, search

from .positions import TACTICS


def midgame(game: str = "heroes", seed: int = 5, steps: int = 6) -> State:
    """A full state a few actions into a game (first legal action each time), mover to act."""
    state = Game(game).new_state(seed=seed)
    for _ in range(steps):
        state.apply(state.legal_codes()[0])
    assert not state.is_terminal
    return state


def codes(result: object) -> list[int]:
    return [a.code for a in result.plan]  # type: ignore[attr-defined]


NE = {"c": 0.0, "policy": "greedy", "robust": True}


@pytest.mark.parametrize("params", [{}, NE, {"transpositions": False}])
def test_a_new_kept_tree_searches_as_the_plain_kernel(params: dict[str, object]) -> None:
    state = midgame()
    plain = search(state, "mcts", params, iterations=1500, seed=7)
    kept = search(state, "mcts", params, iterations=1500, seed=7, tree=SearchTree())
    assert codes(kept) == codes(plain)
    assert (kept.stats.iterations, kept.stats.nodes, kept.stats.value) == \
        (plain.stats.iterations, plain.stats.nodes, plain.stats.value)
    assert kept.stats.reused == 0 and plain.stats.reused == 0


@pytest.mark.parametrize("transpositions", [True, False])
def test_the_played_actions_subtree_is_searched_on(transpositions: bool) -> None:
    state = midgame()
    params = {"transpositions": transpositions}
    tree = SearchTree()
    first = search(state, "mcts", params, iterations=3000, seed=1, tree=tree)
    assert len(first.plan) > 2  # the turn goes on after the first action
    again = search(state, "mcts", params, iterations=500, seed=2, tree=tree)
    assert again.stats.reused == 3000  # the same root: every visit kept
    nxt = state.clone()
    nxt.apply(first.plan[0])
    on = search(nxt, "mcts", params, iterations=500, seed=3, tree=tree)
    assert 0 < on.stats.reused < 3500  # the action's subtree, not the whole tree
    assert on.stats.nodes > 3500  # the kept nodes are still there
    fresh = search(nxt, "mcts", params, iterations=500, seed=3)
    assert fresh.stats.reused == 0 and fresh.stats.nodes <= 501


def test_a_new_turn_starts_a_new_tree() -> None:
    state = midgame()
    tree = SearchTree()
    first = search(state, "mcts", {}, iterations=2000, seed=1, tree=tree)
    after = state.clone()
    for a in first.plan:  # the whole turn, END_TURN included
        after.apply(a)
    assert after.current_player != state.current_player
    assert search(after, "mcts", {}, iterations=300, seed=2, tree=tree).stats.reused == 0
    # and another game's state in the same tree
    other = midgame("nim", seed=3, steps=1)
    assert search(other, "mcts", {}, iterations=300, seed=2, tree=tree).stats.reused == 0


def chance_position() -> tuple[State, int]:
    """A card-game state whose mover has an action with chance in it (its outcome differs
    with the random stream) after which the turn goes on."""
    state = Game("cards").new_state(seed=4)
    rng = random.Random(2)
    while not state.is_terminal:
        for c in state.legal_codes():
            outcomes = set()
            for k in range(6):
                x = state.clone()
                x.seed_rng(k * 7919 + 1)
                x.apply(c)
                if x.is_terminal or x.current_player != state.current_player:
                    break
                outcomes.add(x.hash())
            else:
                if len(outcomes) > 1:
                    return state, c
        state.apply(rng.choice(state.legal_codes()))
    raise AssertionError("no card-game state with a chance action")


def test_a_chance_outcome_starts_a_new_tree() -> None:
    """Whatever the outcome, the same as the tree drew first or not, the search starts anew
    from the real position: the child's statistics mix the outcomes the iterations drew."""
    state, action = chance_position()
    n = len(state.legal_codes())
    for k in range(6):
        tree = SearchTree()
        search(state, "mcts", {}, iterations=50 * n, seed=1, tree=tree)  # every root action expanded
        real = state.clone()
        real.seed_rng(k * 7919 + 1)
        real.apply(action)
        assert search(real, "mcts", {}, iterations=200, seed=2, tree=tree).stats.reused == 0


@pytest.mark.parametrize("params", [{"bridge_burning": True}, {"threads": 2}, {"collapse_k": 5}])
def test_a_kept_tree_is_refused_where_the_root_moves_inside_a_search(params: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="kept tree"):
        search(midgame(), "mcts", params, iterations=100, seed=1, tree=SearchTree())


def test_the_reuse_agent_searches_on_its_kept_determinization() -> None:
    """In the real game (hidden hands) the agent searches a determinization; after its first
    action the observation is the one that action led to on it, so the search goes on there."""
    state = Game("heroes").new_state(seed=11)
    agent = make_agent("mcts", reuse="true")
    assert agent.stepwise and not make_agent("mcts").stepwise
    plan = agent.plan(Observation.of(state), iterations=2000, seed=1)
    assert agent.last is not None and agent.last.stats.reused == 0 and len(plan) > 2
    state.apply(plan[0])
    agent.plan(Observation.of(state), iterations=500, seed=2)
    assert agent.last.stats.reused > 0
    # a plain agent keeps nothing
    plain = make_agent("mcts")
    plain.plan(Observation.of(state), iterations=500, seed=2)
    assert plain.last is not None and plain.last.stats.reused == 0
    assert "reuse" not in {p.name for p in AGENTS["bb-mcts"].params}


def rating_order(state: State) -> list[int]:
    """The MCTS kernel's expansion order at state: legal actions without END_TURN (unless
    alone), pruned, by rating, highest first (stable)."""
    acts = state.legal_actions()
    if len(acts) > 1:
        acts = [a for a in acts if a.to_dict()["type"] != "end_turn"]
    acts = state.prune(acts)
    return [a.code for a in sorted(acts, key=lambda a: -state.rate(a))]


def test_widening_holds_each_node_to_its_best_rated_child() -> None:
    """widen_k so small that no node may have a second child: the tree is one line of
    best-rated actions, where the unwidened search chooses otherwise on this position."""
    state = midgame()
    best = rating_order(state)[0]
    assert codes(search(state, "mcts", {}, iterations=3000, seed=1))[0] != best
    for seed in (1, 2, 3):
        narrow = search(state, "mcts", {"widen_k": 1e-9}, iterations=3000, seed=seed)
        assert codes(narrow)[0] == best


def test_wide_enough_widening_is_the_plain_search() -> None:
    state = midgame()
    plain = search(state, "mcts", {}, iterations=2000, seed=4)
    wide = search(state, "mcts", {"widen_k": 1e9, "widen_alpha": 0.5}, iterations=2000, seed=4)
    assert codes(wide) == codes(plain) and wide.stats.nodes == plain.stats.nodes
    with pytest.raises(ConfigError, match="widen"):
        search(state, "mcts", {"widen_alpha": 2.0}, iterations=10, seed=1)
    with pytest.raises(AgentError):
        make_agent("mcts", widen_k="-1")


def test_widening_plays_its_turn_through_the_agents() -> None:
    agent = parse_agent("ne-mcts:widen_k=1,widen_alpha=0.5")
    state = TACTICS["stomp"]()
    plan = agent.plan(Observation.of(state), iterations=1000, seed=1)
    assert plan and plan[-1].to_dict()["type"] == "end_turn"
    for a in plan:  # a legal turn
        state.apply(a)


@pytest.mark.parametrize("game", sorted(BEST))
def test_best_resolves_in_every_game(game: str) -> None:
    agent = parse_agent("best")
    state = Game(game).new_state(seed=1)
    plan = agent.plan(Observation.of(state), budget_ms=30, seed=1)
    assert agent.inner is not None and agent.inner.name == BEST[game][0].split(":")[0]
    assert plan and agent.last is not None and agent.last is agent.inner.last
    for a in plan:
        state.apply(a)


def test_best_plays_a_real_match(tmp_path: Path) -> None:
    """`maag match best X`: bot processes on an embedded referee, heroes' small map; the
    other side re-searches before every action on its kept tree (`reuse`)."""
    r = subprocess.run([sys.executable, "-m", "maag.server", "match", "best", "ne-mcts:reuse=true",
                        "--games", "2", "--tc", "100ms", "--map", "a-tiny", "--seed", "3", "--json",
                        "--db", str(tmp_path / "m.sqlite3")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    summary = lines[-1]
    assert summary["games"] == 2 == summary["wins"] + summary["draws"] + summary["losses"]
    games = [g for g in lines[:-1] if g.get("event") == "game"]
    assert len(games) == 2
    for g in games:  # played to the end by the rules, both bots searching
        assert g["reason"] in ("rules", "turn_limit") and g["plies"] > 0, g
        assert all(s is not None and s["turns"] > 0 for s in g["search"]), g


# ---- ISMCTS: a kept tree over information sets, progressive widening --------------------

def hidden_midgame() -> Observation:
    return Observation.of(midgame())


@pytest.mark.parametrize("params", [{}, NE])
def test_a_new_kept_ismcts_tree_searches_as_the_plain_kernel(params: dict[str, object]) -> None:
    obs = hidden_midgame()
    plain = ismcts(obs, params, iterations=1500, seed=7)
    kept = ismcts(obs, params, iterations=1500, seed=7, tree=IsmctsTree())
    assert codes(kept) == codes(plain)
    assert (kept.stats.iterations, kept.stats.nodes, kept.stats.value) == \
        (plain.stats.iterations, plain.stats.nodes, plain.stats.value)
    assert kept.stats.reused == 0 and plain.stats.reused == 0


def test_ismcts_goes_on_from_the_information_set_the_action_led_to() -> None:
    state = midgame()
    tree = IsmctsTree()
    first = ismcts(Observation.of(state), {}, iterations=3000, seed=1, tree=tree)
    assert len(first.plan) > 2
    again = ismcts(Observation.of(state), {}, iterations=500, seed=2, tree=tree)
    assert again.stats.reused == 3000  # the same information set: every visit kept
    nxt = state.clone()
    nxt.apply(first.plan[0])
    on = ismcts(Observation.of(nxt), {}, iterations=500, seed=3, tree=tree)
    assert 0 < on.stats.reused < 3500 and on.stats.nodes > again.stats.nodes
    # another game, or a setting the tree's shape depends on: a new tree
    assert ismcts(Observation.of(nxt), {"prune": False}, iterations=300, seed=3, tree=tree).stats.reused == 0
    other = Observation.of(midgame("nim", seed=3, steps=1))
    assert ismcts(other, {}, iterations=300, seed=2, tree=tree).stats.reused == 0


def test_a_kept_ismcts_tree_grows_past_its_first_search() -> None:
    """A first search sized for 100 iterations, then 3,000 on the same tree: the arenas
    grow and both hash tables are rebuilt larger; every node is still found (the root's
    visits add up, the plan is a legal turn)."""
    state = midgame()
    obs = Observation.of(state)
    tree = IsmctsTree()
    assert ismcts(obs, {}, iterations=100, seed=1, tree=tree).stats.reused == 0
    big = ismcts(obs, {}, iterations=3000, seed=2, tree=tree)
    assert big.stats.reused == 100 and big.stats.nodes > 1000
    again = ismcts(obs, {}, iterations=50, seed=3, tree=tree)
    assert again.stats.reused == 3100 and again.stats.nodes >= big.stats.nodes
    for a in again.plan:
        state.apply(a)
    # a tree with no room left under max_nodes starts anew
    full = IsmctsTree()
    ismcts(obs, {"max_nodes": 3000}, iterations=200, seed=1, tree=full)
    assert ismcts(obs, {"max_nodes": 3000}, iterations=200, seed=2, tree=full).stats.reused == 0


def test_ismcts_after_a_chance_outcome_goes_on_from_that_outcomes_node() -> None:
    """The nodes are information sets: after an action with chance in it, the observation
    of each outcome has its own node, whose visits are the iterations that drew it; together
    they are at most the action's, never the whole root's."""
    state, action = chance_position()
    n = len(state.legal_codes())
    seen: dict[object, int] = {}
    for k in range(6):
        tree = IsmctsTree()
        first = ismcts(Observation.of(state), {}, iterations=50 * n, seed=1, tree=tree)
        real = state.clone()
        real.seed_rng(k * 7919 + 1)
        real.apply(action)
        obs = Observation.of(real)
        reused = ismcts(obs, {}, iterations=200, seed=2, tree=tree).stats.reused
        assert 0 <= reused < first.stats.iterations
        seen[obs.as_state().hash()] = reused
    assert len(seen) > 1  # the outcomes differ in what the mover sees
    assert sum(seen.values()) < 50 * n and max(seen.values()) > 0


def test_the_ismcts_reuse_agent_keeps_its_tree_within_a_turn() -> None:
    state = Game("heroes").new_state(seed=11)
    agent = make_agent("ismcts", reuse="true")
    assert agent.stepwise and not make_agent("ismcts").stepwise
    plan = agent.plan(Observation.of(state), iterations=2000, seed=1)
    assert agent.last is not None and agent.last.stats.reused == 0 and len(plan) > 2
    state.apply(plan[0])
    plan = agent.plan(Observation.of(state), iterations=500, seed=2)
    assert agent.last.stats.reused > 0
    for a in plan:  # to the end of the turn, then the opponent's turn: a new tree next time
        state.apply(a)
    for a in make_agent("greedy-action").plan(Observation.of(state), seed=1):
        state.apply(a)
    agent.plan(Observation.of(state), iterations=300, seed=3)
    assert agent.last.stats.reused == 0


def test_ismcts_widening_holds_each_node_to_its_best_rated_child() -> None:
    state = midgame()
    obs = Observation.of(state)
    best = rating_order(state)[0]
    assert codes(ismcts(obs, {}, iterations=3000, seed=1))[0] != best
    for seed in (1, 2, 3):
        assert codes(ismcts(obs, {"widen_k": 1e-9}, iterations=3000, seed=seed))[0] == best
    plain = ismcts(obs, {}, iterations=2000, seed=4)
    wide = ismcts(obs, {"widen_k": 1e9, "widen_alpha": 0.5}, iterations=2000, seed=4)
    assert codes(wide) == codes(plain) and wide.stats.nodes == plain.stats.nodes
    agent = parse_agent("ismcts:widen_k=1,widen_alpha=0.5")
    assert agent.kernel_params()["widen_k"] == 1.0

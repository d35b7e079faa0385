"""The determinized agents: pimc (every inner agent, both combine modes, every strategy),
ismcts and OEP with determinized rollout fitness return legal plans for the true game, the
same plan for the same seed and iteration budget, and honour their settings."""

from __future__ import annotations

import pytest
from maag.bots import AGENTS, AgentError, make_agent, parse_agent
from maag.bots.cheating import CheatingAgent
from maag.bots.hidden import PERFECT_INFORMATION
from maag.engine import Action, ConfigError, Game, Observation, State
from maag.engine.hidden import ismcts, pimc
from maag.engine.observation import STRATEGIES

from .helpers import GAME, midgame

STATES = [midgame(s) for s in (5, 6, 7)] + [GAME.new_state(seed=9)]
INNER_IT = {"greedy-turn": 400, "oep": 4, "ucb": 200}


def apply_plan(state: State, plan: list[Action]) -> State:
    """Apply the plan to a clone of the true state (IllegalActionError if a step is
    illegal); it must end the turn with end_turn, last and only last, unless the game ends."""
    s = state.clone()
    assert plan
    for i, a in enumerate(plan):
        assert not s.is_terminal
        if i < len(plan) - 1:
            assert a.code != 0
        s.apply(a)
    assert s.is_terminal or (plan[-1].code == 0 and s.current_player != state.current_player)
    return s


@pytest.mark.parametrize("inner", PERFECT_INFORMATION)
def test_pimc_over_every_inner_agent(inner: str) -> None:
    it = INNER_IT.get(inner, 300)
    for combine in ("vote", "sum"):
        for state in STATES[:2]:
            agent = make_agent("pimc", inner=inner, k=3, combine=combine)
            plan = agent.plan(state, iterations=it, seed=4)
            apply_plan(state, plan)
            again = make_agent("pimc", inner=inner, k=3, combine=combine).plan(state, iterations=it, seed=4)
            assert [a.code for a in plan] == [a.code for a in again]


@pytest.mark.parametrize("inner", ["mcts", "ne-mcts", "bb-mcts"])
def test_pimc_visits_sums_the_trees(inner: str) -> None:
    """combine=visits (determinized UCT): legal plans, reproducible, the total budget, and
    with one tree and robust final choices the same plan as the vote (both then follow the
    tree's most visited first action, and the search itself is the same)."""
    for state in STATES[:3]:
        spec = f"pimc:inner={inner},k=4,combine=visits"
        agent = parse_agent(spec)
        plan = agent.plan(state, iterations=800, seed=6)
        apply_plan(state, plan)
        assert [a.code for a in parse_agent(spec).plan(state, iterations=800, seed=6)] == \
            [a.code for a in plan]
        assert agent.last is not None and agent.last.stats.iterations == 800
        assert 0 <= agent.last.stats.value <= 1
        one = f"pimc:inner={inner},k=1,robust=true,combine="
        assert [a.code for a in parse_agent(one + "visits").plan(state, iterations=500, seed=3)] == \
            [a.code for a in parse_agent(one + "vote").plan(state, iterations=500, seed=3)]


def test_pimc_visits_needs_an_mcts_inner_search() -> None:
    from maag.engine import ConfigError

    with pytest.raises(ConfigError, match="combine=visits.*MCTS"):
        make_agent("pimc", inner="greedy-turn", combine="visits").plan(STATES[0], iterations=50, seed=1)


@pytest.mark.parametrize("det", list(STRATEGIES))
def test_pimc_and_ismcts_with_each_strategy(det: str) -> None:
    for state in STATES:
        for spec in (f"pimc:k=4,det={det},rollout_turns=2", f"ismcts:det={det},rollout_turns=2"):
            plan = parse_agent(spec).plan(state, iterations=600, seed=2)
            apply_plan(state, plan)
            assert [a.code for a in parse_agent(spec).plan(state, iterations=600, seed=2)] == \
                [a.code for a in plan]


def test_pimc_budgets_and_statistics() -> None:
    state = STATES[0]
    agent = make_agent("pimc", k=4)
    agent.plan(state, iterations=1000, seed=1)
    assert agent.last is not None
    st = agent.last.stats
    assert st.iterations == 1000 and st.stop == "iterations"  # the total, shared out over k
    assert 0 < st.value <= 1  # the share of searches whose plan won the vote
    agent = make_agent("pimc", k=5, combine="sum")
    agent.plan(state, iterations=10, seed=1)
    assert agent.last is not None and agent.last.stats.iterations == 10
    # fewer iterations than determinizations: every search still gets one
    agent = make_agent("pimc", k=8)
    agent.plan(state, iterations=3, seed=1)
    assert agent.last is not None and agent.last.stats.iterations == 8


def test_pimc_with_one_determinization_is_its_inner_agent_on_one_sample() -> None:
    """k=1, vote: the plan is the inner kernel's on the single determinization drawn."""
    from maag.engine.search import search

    state = STATES[1]
    obs = Observation.of(state)
    r = pimc(obs, "greedy-action", {}, k=1, seed=3)
    # greedy action does not depend on the sample, so any determinization gives its plan
    ref = search(obs.determinize(0), "greedy-action", {}, seed=3)
    assert [a.code for a in r.plan] == [a.code for a in ref.plan]


def test_ismcts_statistics_and_reproducibility() -> None:
    state = STATES[0]
    obs = Observation.of(state)
    a = ismcts(obs, {"rollout_turns": 2}, iterations=1500, seed=8)
    b = ismcts(obs, {"rollout_turns": 2}, iterations=1500, seed=8)
    assert [x.code for x in a.plan] == [x.code for x in b.plan]
    assert a.stats.iterations == 1500 and a.stats.stop == "iterations"
    assert a.stats.evaluations >= 1500 and 0 < a.stats.nodes
    assert 0 <= a.stats.value <= 1
    apply_plan(state, a.plan)
    c = ismcts(obs, {"rollout_turns": 2}, iterations=1500, seed=9)
    assert c.stats.iterations == 1500
    h = make_agent("ismcts", rollout_turns=2, horizon_root=True)
    apply_plan(state, h.plan(state, iterations=1500, seed=8))
    robust = make_agent("ismcts", c=0.0, rollout="greedy", robust=True)
    apply_plan(state, robust.plan(state, iterations=1500, seed=8))
    assert robust.kernel_params()["robust"] is True


def test_ismcts_needs_a_budget_and_refuses_finished_games() -> None:
    from maag.engine import ConfigError, GameOverError

    with pytest.raises(ConfigError, match="budget"):
        make_agent("ismcts").plan(STATES[0], budget_ms=0, iterations=0)
    done = GAME.new_state(seed=3)
    done.random_playout()
    with pytest.raises(GameOverError):
        make_agent("ismcts").plan(done, iterations=10)
    with pytest.raises(GameOverError):
        make_agent("pimc").plan(done, iterations=10)


def test_ismcts_finds_a_lethal_strike() -> None:
    """The tactical position of tests/search (a four-action crystal kill) with the opponent's
    hand hidden: the win does not depend on it, and ISMCTS finds it."""
    from tests.search.positions import TACTICS

    state = TACTICS["lethal-strike"]()
    for seed in (1, 2):
        plan = make_agent("ismcts", c=0.0, rollout="greedy").plan(state, iterations=20000, seed=seed)
        s = apply_plan(state, plan)
        assert s.is_terminal and s.winner == 0


def test_pimc_settings() -> None:
    agent = parse_agent("pimc:inner=oep,k=4,combine=sum,det=most-probable,population=30,fitness_rollouts=2")
    assert agent.inner.options["population"] == 30 and agent.options["k"] == 4
    assert repr(agent) == ("pimc(inner='oep', k=4, combine='sum', det='most-probable', population=30, "
                           "fitness_rollouts=2)")
    plan = agent.plan(STATES[0], iterations=8, seed=5)
    apply_plan(STATES[0], plan)
    with pytest.raises(AgentError, match="inner"):
        make_agent("pimc", inner="pimc")
    with pytest.raises(AgentError, match="inner agent mcts"):
        make_agent("pimc", population=3)  # an OEP setting for the default inner agent (mcts)
    with pytest.raises(AgentError):
        make_agent("pimc", k=0)
    with pytest.raises(AgentError):
        make_agent("ismcts", det="oracle")
    assert "pimc" in AGENTS and "ismcts" in AGENTS
    assert "pimc" not in PERFECT_INFORMATION and "ismcts" not in PERFECT_INFORMATION


def test_oep_rollout_fitness_averages_over_determinizations() -> None:
    """With rollout fitness, OEP's value is a mean over rollouts from fresh determinizations;
    its cheating twin (every rollout from the truth) is a different search."""
    state = STATES[2]
    agent = make_agent("oep", fitness_rollouts=4, rollout_turns=2, population=20)
    plan = agent.plan(state, iterations=6, seed=7)
    apply_plan(state, plan)
    assert agent.last is not None and 0 <= agent.last.stats.value <= 1
    again = make_agent("oep", fitness_rollouts=4, rollout_turns=2, population=20).plan(state, iterations=6,
                                                                                       seed=7)
    assert [a.code for a in plan] == [a.code for a in again]
    twin = CheatingAgent(make_agent("oep", fitness_rollouts=4, rollout_turns=2, population=20))
    apply_plan(state, twin.plan(state, iterations=6, seed=7))


def test_real_game_to_the_end() -> None:
    """A whole game with random draws between pimc and ismcts, each given only its seat's
    observation, every plan legal in the true state (small map, iteration budgets)."""
    game = Game("heroes", {"map": "a-tiny", "draws": "random"})
    state = game.new_state(seed=12)
    agents = [parse_agent("pimc:k=3,rollout_turns=2"), parse_agent("ismcts:rollout_turns=2")]
    turns = 0
    while not state.is_terminal and turns < 200:
        p = state.current_player
        plan = agents[p].plan(Observation.of(state, p), iterations=300, seed=turns)
        state = apply_plan(state, plan)
        turns += 1
    assert state.is_terminal


@pytest.mark.parametrize("spec", ["greedy-turn", "oep"])
def test_end_of_turn_searches_cannot_use_hidden_cards(spec: str) -> None:
    """The heuristic counts a player's hand and deck together (spec §14), and a turn's own
    actions depend only on the board and the mover's own hand: a search that values the end
    of its own turn cannot use the hidden cards. Its cheating twin, on the same seed and
    iteration budget, returns the same plan (docs/results-hidden.md: the cost of hidden
    information is exactly zero for these agents)."""
    for seed in range(6):
        st = midgame(seed, actions=20 + 15 * seed)
        honest = make_agent(spec).plan(st, iterations=1500, seed=seed)
        cheat = CheatingAgent(make_agent(spec)).plan(st, iterations=1500, seed=seed)
        assert honest == cheat


def test_heroes_defaults_of_the_determinized_agents() -> None:
    """In heroes pimc runs ne-mcts on 4 determinizations with summed visits and ismcts is
    non-exploring (their best measured settings there); what a user gives still wins, and
    other games keep the generic defaults."""
    state = STATES[0]
    agent = make_agent("pimc")
    assert agent.inner.name == "mcts" and agent.options["combine"] == "vote"  # no game yet
    plan = agent.plan(state, iterations=800, seed=2)
    apply_plan(state, plan)
    assert agent.inner.name == "ne-mcts" and agent.inner.options["c"] == 0.0
    assert (agent.options["k"], agent.options["combine"]) == (4, "visits")
    explicit = parse_agent("pimc:inner=mcts,combine=vote,rollout_turns=2")
    apply_plan(state, explicit.plan(state, iterations=800, seed=2))
    assert explicit.inner.name == "mcts" and explicit.options["combine"] == "vote"
    assert explicit.options["k"] == 4 and explicit.inner.options["rollout_turns"] == 2
    other_inner = parse_agent("pimc:inner=greedy-action")  # no MCTS tree to add up: the vote
    apply_plan(state, other_inner.plan(state, iterations=50, seed=2))
    assert other_inner.options["combine"] == "vote" and other_inner.options["k"] == 4
    with pytest.raises(ConfigError, match="MCTS inner"):  # asked for by name: refused
        parse_agent("pimc:inner=greedy-action,combine=visits").plan(state, iterations=50, seed=2)
    tuned = parse_agent("pimc:rollout_turns=2")  # an inner setting given to the game's inner agent
    tuned.plan(state, iterations=800, seed=2)
    assert tuned.inner.name == "ne-mcts" and tuned.inner.options["rollout_turns"] == 2
    is_agent = make_agent("ismcts")
    apply_plan(state, is_agent.plan(state, iterations=800, seed=2))
    params = is_agent.kernel_params()
    assert (params["c"], params["policy"], params["robust"]) == (0.0, "greedy", True)
    assert parse_agent("ismcts:c=0.5").plan(state, iterations=50, seed=1)
    cards = Game("cards").new_state(seed=4)
    for name in ("pimc", "ismcts"):
        other = make_agent(name)
        other.plan(cards, iterations=200, seed=1)
        assert other.options == {**AGENTS[name].defaults(), **other.given}
    assert make_agent("pimc").plan(cards, iterations=200, seed=1)

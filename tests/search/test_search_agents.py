"""Every bundled agent: legal plans, budgets, reproducibility, parameters; and the greedy
kernels against brute force in Python. Searches use iteration budgets, never timing."""

from __future__ import annotations

import itertools
import math
import time

import pytest
from maag.bots import AGENTS, AgentError, make_agent, parse_agent
from maag.engine import ConfigError, Game, GameOverError, State
from maag.engine.search import default_params, search
from maag.server.bench.engine import midgame_states

from .positions import GAME, position, unit

# Small iteration budgets, in each kernel's unit (plan steps for the budget-free agents).
ITERATIONS = {"greedy-turn": 2000, "greedy-reply": 2000, "oep": 5, "mcts": 300, "ne-mcts": 300,
              "bb-mcts": 300, "collapse-mcts": 300, "ucb": 300, "uct": 300, "emcts": 300, "fh-emcts": 300}
# The agents of every game (the conquest-* agents have their own tests, beside the game).
GENERIC = [n for n, spec in AGENTS.items() if not spec.games]
BUDGETED = [n for n in GENERIC if AGENTS[n].needs_budget]


def _states() -> dict[str, State]:
    out = {"start": GAME.new_state(seed=11)}
    for i, st in enumerate(midgame_states(GAME, count=3, seed=7)):
        out[f"mid{i}"] = st
    tiny = Game("heroes", {"map": "a-tiny", "draws": "random"}).new_state(seed=3)
    tiny.random_playout(max_actions=17)
    if not tiny.is_terminal:
        out["tiny-random-draws"] = tiny
    return out


STATES = _states()


def busy_state() -> State:
    """A mid-game state with 5 AP and a wide action list (for the time-budget tests)."""
    for st in midgame_states(GAME, count=20):
        if st.to_json()["ap"] == 5 and len(st.legal_codes()) > 30:
            return st
    raise AssertionError("no busy mid-game state")


def apply_plan(state: State, plan: list) -> State:
    """Apply a whole plan on a clone (IllegalActionError if any step is illegal) and check
    its shape: end_turn last and only last, unless the game ended."""
    s = state.clone()
    assert plan, "empty plan"
    for i, a in enumerate(plan):
        assert not s.is_terminal, f"action {i} after the game ended"
        if i < len(plan) - 1:
            assert a.to_dict() != {"type": "end_turn"} or s.legal_codes() == [0], "early end_turn"
        s.apply(a)
    assert s.is_terminal or plan[-1].to_dict() == {"type": "end_turn"}
    return s


@pytest.mark.parametrize("state_name", list(STATES))
@pytest.mark.parametrize("name", GENERIC)
def test_plans_are_legal(name: str, state_name: str) -> None:
    state = STATES[state_name]
    before = state.to_bytes()
    agent = make_agent(name)
    plan = agent.plan(state, iterations=ITERATIONS.get(name, 1), seed=5)
    assert state.to_bytes() == before, "the search changed its input state"
    after = apply_plan(state, plan)
    assert after.is_terminal or after.current_player != state.current_player


# Non-default settings, to cover the kernels' other paths.
VARIANTS = ["mcts:horizon_root=true,rollout_turns=2", "mcts:transpositions=false,complete=false",
            "mcts:rollout=random,c=2", "bb-mcts:rollout=meta,prune=false", "collapse-mcts:k=2",
            "oep:fitness_rollouts=3,history=false", "oep:population=7,survival=0,mutation=1",
            "ucb:final=robust,max_bandits=5", "ucb:final=max-wins,rollout_turns=0",
            "ucb:moves=dfs,max_bandits=50", "uct:post=rmp", "uct:post=rap,rollout=rap-greedy",
            "rmpmax:prune=true", "rap:gen_end_ply=false", "greedy-turn:prune=false",
            "greedy-turn:legal_order=true", "ne-mcts:robust=false",
            "oep:islands=3,migration_interval=2,migrants=3", "oep:islands=2,fitness_rollouts=2,migrants=60",
            "emcts:tree_depth=4,branching=3", "emcts:max_nodes=3,prune=false", "fh-emcts:horizon=2,model_k=1",
            "fh-emcts:horizon=30,tree_depth=2,c=0", "mcts:preset=paper", "ne-mcts:preset=paper",
            "bb-mcts:preset=paper", "oep:preset=paper", "emcts:preset=paper", "fh-emcts:preset=paper",
            "greedy-reply:candidates=1", "greedy-reply:candidates=64,prune=false", "greedy-reply:hands=3",
            "greedy-reply:turns=1,hands=4", "greedy-turn:widen=true",
            "greedy-reply:widen=true,widen_own=true"]


@pytest.mark.parametrize("state_name", ["start", "mid0", "tiny-random-draws"])
@pytest.mark.parametrize("spec", VARIANTS)
def test_variants_plan_legally(spec: str, state_name: str) -> None:
    state = STATES[state_name]
    agent = parse_agent(spec)
    it = ITERATIONS.get(agent.name, 1)
    plan = agent.plan(state, iterations=it, seed=6)
    apply_plan(state, plan)
    again = parse_agent(spec).plan(state, iterations=it, seed=6)
    assert [a.code for a in plan] == [a.code for a in again]


@pytest.mark.parametrize("name", GENERIC)
def test_same_seed_same_plan(name: str) -> None:
    state = STATES["mid1"]
    it = ITERATIONS.get(name, 1)
    first = make_agent(name).plan(state, iterations=it, seed=99)
    second = make_agent(name).plan(state, iterations=it, seed=99)
    assert [a.code for a in first] == [a.code for a in second]


def test_seed_matters_for_random_agents() -> None:
    state = STATES["mid0"]
    agent = make_agent("random")
    plans = {tuple(a.code for a in agent.plan(state, seed=s)) for s in range(20)}
    assert len(plans) > 1


@pytest.mark.parametrize("name", BUDGETED)
def test_time_budget(name: str) -> None:
    """The kernel reads the clock itself: a 100 ms budget ends the search ("time"), far
    sooner than the unbounded search would. The bound is generous on purpose."""
    agent = make_agent(name)
    t0 = time.perf_counter()
    plan = agent.plan(busy_state(), budget_ms=100, seed=1)
    elapsed_ms = (time.perf_counter() - t0) * 1000
    assert agent.last is not None
    assert agent.last.stats.stop in ("time", "done")
    if name not in ("greedy-turn", "greedy-reply"):  # they may exhaust a small turn first
        assert agent.last.stats.stop == "time"
    assert elapsed_ms < 100 + 2000
    apply_plan(busy_state(), plan)


@pytest.mark.parametrize("name", ["mcts", "oep", "ucb", "greedy-turn", "emcts", "fh-emcts"])
def test_iteration_budget_is_exact(name: str) -> None:
    agent = make_agent(name)
    agent.plan(busy_state(), iterations=ITERATIONS[name], seed=2)
    assert agent.last is not None
    assert agent.last.stats.stop == "iterations"
    assert agent.last.stats.iterations == ITERATIONS[name]


@pytest.mark.parametrize("islands", [2, 4])
def test_oep_islands_run_in_lockstep(islands: int) -> None:
    """With an iteration budget every island runs exactly that many generations (they
    migrate between epochs in lockstep), and the stats add the islands up."""
    agent = make_agent("oep", islands=islands, migration_interval=3)
    agent.plan(busy_state(), iterations=7, seed=2)
    assert agent.last is not None
    stats = agent.last.stats
    assert (stats.stop, stats.iterations) == ("iterations", 7 * islands)
    assert stats.nodes == islands * (100 + 7 * 50)  # a first population, then 50 children a generation


@pytest.mark.parametrize("spec", ["ne-mcts", "mcts"])
def test_mcts_threads_search_a_tree_each_and_merge_their_visits(spec: str) -> None:
    """threads=N grows N trees with the whole budget each: the stats add them up, a seeded
    iteration-budget search repeats its plan, and the plan is legal. Bridge burning and
    collapse, which move the root as they go, refuse threads with a clear error."""
    state = busy_state()
    plans = []
    for _ in range(2):
        agent = parse_agent(f"{spec}:threads=3")
        plans.append([a.code for a in agent.plan(state, iterations=3000, seed=5)])
        assert agent.last is not None
        assert (agent.last.stats.stop, agent.last.stats.iterations) == ("iterations", 9000)
    assert plans[0] == plans[1]
    apply_plan(state, parse_agent(f"{spec}:threads=3").plan(state, iterations=3000, seed=5))
    for bad in ("bb-mcts:threads=2", "collapse-mcts:threads=2"):
        with pytest.raises(ConfigError, match="threads > 1 needs bridge_burning and collapse_k off"):
            parse_agent(bad).plan(busy_state(), iterations=100, seed=1)


def test_mcts_threads_from_an_observation_search_a_determinization_each() -> None:
    """From an observation every tree of threads=N searches its own determinization
    (the kernel mcts-hidden): the plan is legal in the true state, a seeded iteration-budget
    search repeats it, and the stats add the trees up."""
    state = STATES["mid2"]
    obs = state.observation(state.current_player)
    plans = []
    for _ in range(2):
        agent = parse_agent("ne-mcts:threads=3")
        plans.append([a.code for a in agent.plan(obs, iterations=2000, seed=8)])
        assert agent.last is not None and agent.last.stats.iterations == 6000
    assert plans[0] == plans[1]
    apply_plan(state, parse_agent("ne-mcts:threads=3").plan(obs, iterations=2000, seed=8))


def test_oep_islands_from_an_observation() -> None:
    state = STATES["mid2"]
    obs = state.observation(state.current_player)
    spec = "oep:islands=2,fitness_rollouts=2,migration_interval=1"
    plan = parse_agent(spec).plan(obs, iterations=4, seed=3)
    apply_plan(state, plan)
    assert [a.code for a in plan] == [a.code for a in parse_agent(spec).plan(obs, iterations=4, seed=3)]


def test_observation_is_enough() -> None:
    """An agent plans from what its seat sees; the plan is legal in the real game."""
    state = STATES["mid2"]
    obs = state.observation(state.current_player)
    for name in ("greedy-action", "oep", "mcts"):
        plan = make_agent(name).plan(obs, iterations=ITERATIONS.get(name, 1), seed=4)
        apply_plan(state, plan)


def test_errors() -> None:
    with pytest.raises(AgentError, match="unknown agent"):
        make_agent("alphazero")
    with pytest.raises(AgentError, match="no parameter"):
        make_agent("mcts", "temperature=1")
    with pytest.raises(AgentError, match="must be"):
        make_agent("oep", population=1)
    with pytest.raises(AgentError, match="must be"):
        make_agent("oep", islands=65)
    with pytest.raises(AgentError, match="one of"):
        make_agent("mcts", rollout="smart")
    with pytest.raises(AgentError, match="key=value"):
        make_agent("mcts", "c")
    with pytest.raises(ConfigError, match="budget"):
        make_agent("mcts").plan(STATES["start"], budget_ms=0, iterations=0)
    # the kernel checks what bypasses the agents' bounds
    with pytest.raises(ConfigError, match="islands must be in 1..64"):
        search(STATES["start"], "oep", {"islands": 0}, iterations=1)
    with pytest.raises(AgentError, match="'branching' must be"):
        make_agent("emcts", branching=0)
    with pytest.raises(AgentError, match="'horizon' must be"):
        make_agent("fh-emcts", "horizon=63")
    with pytest.raises(AgentError, match="no parameter 'horizon'"):
        make_agent("emcts", horizon=3)  # plain EMCTS searches one turn: that is FH-EMCTS
    for bad, match in (({"horizon": 63}, "horizon must be"), ({"model_k": 0}, "model_k must be"),
                       ({"tree_depth": -1}, "tree_depth must be"), ({"branching": 0}, "branching must be")):
        with pytest.raises(ConfigError, match=match):
            search(STATES["start"], "emcts", bad, iterations=1)
    with pytest.raises(ConfigError, match="budget"):
        search(STATES["start"], "emcts", {}, budget_ms=0, iterations=0)
    done = STATES["start"].clone()
    done.random_playout()
    with pytest.raises(GameOverError):
        make_agent("greedy-action").plan(done)


def test_parse_agent_and_defaults() -> None:
    agent = parse_agent("mcts:c=0.25, rollout=greedy ,rollout_turns=2")
    assert agent.options["c"] == 0.25 and agent.options["rollout"] == "greedy"
    assert agent.kernel_params()["policy"] == "greedy" and agent.kernel_params()["rollout_turns"] == 2
    assert repr(agent) == "mcts(c=0.25, rollout='greedy', rollout_turns=2)"
    assert make_agent("bb-mcts").kernel_params()["bridge_burning"] is True
    assert make_agent("ne-mcts").options["c"] == 0 and make_agent("ne-mcts").options["rollout"] == "greedy"
    oep = default_params("oep")
    assert (oep["population"], oep["survival"], oep["mutation"]) == (100, 0.5, 0.1)
    assert abs(default_params("mcts")["c"] - 2 ** -0.5) < 1e-12
    for spec in AGENTS.values():  # the registry's defaults pass its own checks
        for p in spec.params:
            assert p.parse(p.default) == p.default


PAPER = ["mcts", "ne-mcts", "bb-mcts", "oep", "emcts", "fh-emcts"]


@pytest.mark.parametrize("name", PAPER)
def test_preset_paper_applies_the_papers_settings_under_what_is_given(name: str) -> None:
    spec = AGENTS[name]
    agent = make_agent(name, "preset=paper")
    assert agent.options == {**spec.defaults(), **spec.presets["paper"]}
    assert set(spec.presets["paper"]) <= {p.name for p in spec.params}  # every key is a parameter
    for game in ("heroes", "cards"):  # over any game's defaults too
        agent.for_game(game)
        assert {k: agent.options[k] for k in spec.presets["paper"]} == spec.presets["paper"]
    given = make_agent(name, "preset=paper", prune="false")
    given.for_game("heroes")
    assert given.options["prune"] is False  # a setting given with the preset wins
    assert "preset='paper'" in repr(given)


def test_paper_presets_differ_where_the_defaults_are_ours() -> None:
    assert make_agent("ne-mcts").options["robust"] is True  # maag's default (docs/results-heroes.md)
    assert parse_agent("ne-mcts:preset=paper").options["robust"] is False  # the reference's
    assert parse_agent("mcts:preset=paper").options["complete"] is False
    bb = parse_agent("bb-mcts:preset=paper")
    assert (bb.options["c"], bb.options["rollout"]) == (1 / math.sqrt(2), "egreedy")
    assert bb.kernel_params()["bridge_burning"] is True
    assert parse_agent("fh-emcts:preset=paper").kernel_params()["horizon"] > 0
    assert parse_agent("emcts:preset=paper").kernel_params()["horizon"] == 0
    # pimc hands the preset to its inner agent
    pimc = parse_agent("pimc:inner=ne-mcts,preset=paper,k=2")
    assert pimc.inner.options["c"] == 0 and pimc.inner.options["robust"] is False


def test_a_bad_preset_is_refused() -> None:
    with pytest.raises(AgentError, match="no preset 'fast'.*known: paper"):
        make_agent("oep", preset="fast")
    with pytest.raises(AgentError, match="no preset 'paper'.*known: none"):
        parse_agent("greedy-turn:preset=paper")


def test_emcts_counts_genomes() -> None:
    """An EMCTS iteration is one genome built and evaluated: with an iteration budget the
    genomes (stats.nodes) equal the iterations, as OEP's genomes count (100 + 50 a
    generation); a depth limit spends some iterations revisiting full leaves."""
    agent = make_agent("emcts")
    agent.plan(busy_state(), iterations=500, seed=3)
    assert agent.last is not None
    assert (agent.last.stats.iterations, agent.last.stats.nodes) == (500, 500)
    deep = make_agent("emcts", tree_depth=2, branching=2)
    deep.plan(busy_state(), iterations=500, seed=3)
    assert deep.last is not None and deep.last.stats.nodes < 500 == deep.last.stats.iterations


def test_emcts_plans_the_best_genome_it_evaluated() -> None:
    """The plan's end-of-turn state evaluates to the value the search reports (the best
    genome), and more genomes at the same seed never end worse (the first 50 are the same)."""
    state = busy_state()
    me = state.current_player
    values = []
    for it in (50, 2000):
        r = search(state, "emcts", {}, iterations=it, seed=8)
        assert apply_plan(state, r.plan).evaluate(me) == r.stats.value
        values.append(r.stats.value)
    assert values[1] >= values[0]


# ---- the greedy kernels against brute force ---------------------------------------------------

def _pruned(s: State) -> list[int]:
    codes = [c for c in s.legal_codes() if c != 0] or [0]
    return [a.code for a in s.prune([s.game.action(c) for c in codes])]


def test_greedy_action_takes_the_best_first_action() -> None:
    for name, state in STATES.items():
        me = state.current_player
        values = {}
        for code in _pruned(state):
            nxt = state.clone()
            nxt.apply(code)
            values[code] = nxt.evaluate(me)
        plan = make_agent("greedy-action").plan(state, seed=3)
        assert values[plan[0].code] == max(values.values()), name


def _best_turn_value(state: State) -> float:
    """Brute force over every pruned action sequence of the turn; each outcome is
    evaluated after end_turn, as the kernel does."""
    me = state.current_player
    best = -float("inf")
    frontier = [state]
    while frontier:
        s = frontier.pop()
        for code in _pruned(s):
            nxt = s.clone()
            nxt.apply(code)
            if code == 0 or nxt.is_terminal:
                best = max(best, nxt.evaluate(me))
            else:
                frontier.append(nxt)
    return best


def _small_turn() -> State:
    return position(
        unit(1, "crystal", 2, 1), unit(1, "crystal", 1, 3), unit(1, "archer", 3, 2),
        unit(1, "cleric", 2, 3, hp=300), unit(2, "crystal", 6, 1), unit(2, "crystal", 7, 3),
        unit(2, "knight", 5, 2, hp=700), unit(2, "wizard", 6, 3),
        hands={1: ["scroll", "knight"], 2: ["archer"]}, decks={1: {"potion": 1}, 2: {"cleric": 1}},
        ap=2)


def test_greedy_turn_is_exhaustive_on_a_small_turn() -> None:
    s = _small_turn()
    agent = make_agent("greedy-turn")
    plan = agent.plan(s, budget_ms=0, iterations=0, seed=1)
    assert agent.last is not None and agent.last.stats.stop == "done"
    after = apply_plan(s, plan)
    assert after.evaluate(0) == agent.last.stats.value == _best_turn_value(s)


def _after_greedy_answer(state: State, plan: list, seed: int) -> float:
    """The mover's heuristic after `plan` and the opponent's exhaustive greedy turn, both
    searched on the full state."""
    me = state.current_player
    s = apply_plan(state, plan)
    if not s.is_terminal:
        s = apply_plan(s, search(s, "greedy-turn", {}, budget_ms=0, iterations=0, seed=seed).plan)
    return s.evaluate(me)


def test_greedy_reply_plays_the_turn_best_after_the_answer() -> None:
    """On a small turn searched on the full state with no budget: greedy reply's plan is
    worth at least greedy turn's once the opponent's greedy turn has answered (greedy
    turn's best turn is its first candidate), and strictly more here, where the best turn
    by its own end is answered badly; its value is what it says."""
    s = _small_turn()
    turn = search(s, "greedy-turn", {}, budget_ms=0, iterations=0, seed=1)
    reply = search(s, "reply", {"arms": 16}, budget_ms=0, iterations=0, seed=1)
    assert reply.stats.stop == "done"
    assert reply.stats.value == _after_greedy_answer(s, reply.plan, 1)
    assert _after_greedy_answer(s, reply.plan, 1) > _after_greedy_answer(s, turn.plan, 1)


def test_greedy_reply_values_after_the_turns_it_is_asked_for() -> None:
    """`turns` (kernel field rollout_turns) is how many greedy turns answer a candidate
    before it is valued: 0 values it at its own end (greedy turn's best turn and value),
    2 plays the opponent's answer and then the mover's own next greedy turn, and the value
    reported is that replay's (the small turn's decks hold one card each: no chance)."""
    s = _small_turn()
    turn = search(s, "greedy-turn", {}, budget_ms=0, iterations=0, seed=1)
    none = search(s, "reply", {"arms": 16, "rollout_turns": 0}, budget_ms=0, iterations=0, seed=1)
    assert none.stats.value == turn.stats.value == apply_plan(s, none.plan).evaluate(0)
    two = search(s, "reply", {"arms": 16, "rollout_turns": 2}, budget_ms=0, iterations=0, seed=1)
    after = apply_plan(s, two.plan)
    for _ in range(2):
        if not after.is_terminal:
            answer = search(after, "greedy-turn", {}, budget_ms=0, iterations=0, seed=1)
            after = apply_plan(after, answer.plan)
    assert two.stats.value == after.evaluate(0)
    assert make_agent("greedy-reply", turns=2).kernel_params()["rollout_turns"] == 2
    with pytest.raises(AgentError, match="turns"):
        make_agent("greedy-reply", turns=9)


def test_greedy_reply_quick_plays_the_movers_turn_by_greedy_action() -> None:
    """`quick` (kernel field reply_quick): after the opponent's greedy answer, the mover's
    next turn is greedy action's (one ply at a time), and the value reported is that
    replay's; `share` (reply_share) is refused outside [0.05, 0.95]."""
    s = _small_turn()
    quick = search(s, "reply", {"arms": 16, "rollout_turns": 2, "reply_quick": True}, budget_ms=0,
                   iterations=0, seed=1)
    after = apply_plan(s, quick.plan)
    if not after.is_terminal:
        after = apply_plan(after, search(after, "greedy-turn", {}, budget_ms=0, iterations=0, seed=1).plan)
    if not after.is_terminal:
        after = apply_plan(after, search(after, "greedy-action", {}, budget_ms=0, iterations=0, seed=1).plan)
    assert quick.stats.value == after.evaluate(0)
    assert make_agent("greedy-reply", quick=True, share=0.3).kernel_params()["reply_share"] == 0.3
    with pytest.raises(ConfigError, match="reply_share"):
        search(s, "reply", {"reply_share": 0.99}, iterations=10, seed=1)


def test_greedy_turn_widening_keeps_the_best_turn_and_looks_wider_when_cut_short() -> None:
    """`widen` (kernel field turn_widen): run to the end, the widened search finds the best
    turn (brute force on the small turn; one depth-first pass's on three mid-game states);
    cut short at 300 outcomes, where one depth-first pass spends them in the subtree of the
    best-rated first action, it finds better turns on these eight mid-game states, some with
    another first action."""
    s = _small_turn()
    wide = search(s, "greedy-turn", {"turn_widen": True}, budget_ms=0, iterations=0, seed=1)
    assert wide.stats.stop == "done" and wide.stats.value == _best_turn_value(s)
    for name in ("mid0", "mid1", "mid2"):
        deep = search(STATES[name], "greedy-turn", {}, budget_ms=0, iterations=0, seed=1)
        wide = search(STATES[name], "greedy-turn", {"turn_widen": True}, budget_ms=0, iterations=0, seed=1)
        assert wide.stats.stop == "done" and wide.stats.value == deep.stats.value
    deep_sum = wide_sum = 0.0
    other_first = 0
    for st in midgame_states(GAME, count=8, seed=7):
        deep = search(st, "greedy-turn", {}, budget_ms=0, iterations=300, seed=1)
        wide = search(st, "greedy-turn", {"turn_widen": True}, budget_ms=0, iterations=300, seed=1)
        deep_sum += deep.stats.value
        wide_sum += wide.stats.value
        other_first += deep.plan[0].code != wide.plan[0].code
    assert wide_sum > deep_sum and other_first > 0
    assert make_agent("greedy-turn", widen=True).kernel_params()["turn_widen"] is True


def test_greedy_reply_widened_plays_the_same_turn_when_it_exhausts() -> None:
    """`widen` and `widen_own` (turn_widen, reply_widen): on the small turn searched to the
    end, the widened answers and own turn give the plan and value of the depth-first ones
    (the own turn's passes find its turns again: the candidates stay distinct)."""
    s = _small_turn()
    deep = search(s, "reply", {"arms": 16}, budget_ms=0, iterations=0, seed=1)
    wide = search(s, "reply", {"arms": 16, "turn_widen": True, "reply_widen": True}, budget_ms=0,
                  iterations=0, seed=1)
    assert wide.stats.stop == "done" and wide.stats.value == deep.stats.value
    assert [a.code for a in wide.plan] == [a.code for a in deep.plan]
    params = make_agent("greedy-reply", widen=True, widen_own=True).kernel_params()
    assert params["turn_widen"] is True and params["reply_widen"] is True
    with pytest.raises(ConfigError, match="reply_widen"):
        search(s, "reply", {"reply_widen": 2}, iterations=10, seed=1)


def test_greedy_reply_on_threads_plays_the_same_plan() -> None:
    """`threads` searches the answers on several threads at once, each answer with its own
    random stream and share of the budget: at an iteration budget the plan, the value and
    the work counted are the one thread's, on full states and on observations."""
    for st in [_small_turn(), *midgame_states(GAME, count=2, seed=7)]:
        one = search(st, "reply", {"arms": 16, "rollout_turns": 2}, iterations=20000, seed=1)
        three = search(st, "reply", {"arms": 16, "rollout_turns": 2, "threads": 3}, iterations=20000,
                       seed=1)
        assert (three.plan, three.stats.value, three.stats.iterations) == \
            (one.plan, one.stats.value, one.stats.iterations)
    obs = midgame_states(GAME, count=1, seed=8)[0]
    obs = obs.observation(obs.current_player)
    plans = [make_agent("greedy-reply", threads=t).plan(obs, iterations=20000, seed=5) for t in (1, 2)]
    assert plans[0] == plans[1]


def test_greedy_reply_refuses_too_many_candidates() -> None:
    with pytest.raises(AgentError, match="candidates"):
        make_agent("greedy-reply", candidates=65)
    with pytest.raises(ConfigError, match="candidates"):  # the kernel's own check
        search(_small_turn(), "reply", {"arms": 65}, iterations=10, seed=1)


def test_plans_agree_with_turn_order() -> None:
    """Each plan is the current player's: every action but the last is taken with AP left,
    and the plan never reaches into the opponent's turn."""
    state = STATES["mid0"]
    for name in ("random-meta", "egreedy", "greedy-turn", "ne-mcts", "ucb"):
        plan = make_agent(name).plan(state, iterations=ITERATIONS.get(name, 1), seed=8)
        s = state.clone()
        for a in itertools.islice(plan, len(plan) - 1):
            s.apply(a)
            assert s.current_player == state.current_player

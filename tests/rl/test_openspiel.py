"""The OpenSpiel door (maag.rl.openspiel_game): every registered game passes OpenSpiel's own
random simulation test, a seat's OpenSpiel observation and information state are a function
of what it may see, resampling keeps the information state, and OpenSpiel's agents run on
it, in-process and as maag's `openspiel` agent. Skipped only where pyspiel is not installed
(the `rl` and `test` extras install it)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from maag.engine import Game, Observation, registry

pyspiel = pytest.importorskip("pyspiel")

from maag.bots import AgentError, make_agent, parse_agent  # noqa: E402
from maag.rl import openspiel_game as og  # noqa: E402
from maag.rl.encoding import ActionTable  # noqa: E402

from .helpers import quick_options  # noqa: E402

GAMES = registry.names()
HIDDEN = [g for g in GAMES if registry.get(g).unseen is not None]


def load(game: str, **more: Any) -> Any:
    return pyspiel.load_game(og.short_name(game), {**quick_options(game), **more})


def random_play(state: Any, rng: np.random.Generator, steps: int) -> None:
    for _ in range(steps):
        if state.is_terminal():
            return
        state.apply_action(int(rng.choice(state.legal_actions())))


def test_every_game_is_registered() -> None:
    names = {g.short_name for g in pyspiel.registered_games()}
    assert {og.short_name(g) for g in GAMES} <= names
    t = pyspiel.load_game("maag_nim").get_type()
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM


@pytest.mark.parametrize("game", GAMES)
def test_random_sim_test(game: str) -> None:
    pyspiel.random_sim_test(load(game, rng_seed=1), num_sims=2, serialize=False, verbose=False)


def test_random_sim_test_with_the_default_options() -> None:
    pyspiel.random_sim_test(pyspiel.load_game("maag_nim"), num_sims=3, serialize=False, verbose=False)
    pyspiel.random_sim_test(pyspiel.load_game("maag_cards", {"rng_seed": 2}), num_sims=1, serialize=False,
                            verbose=False)


def test_options_are_parameters() -> None:
    g = pyspiel.load_game("maag_heroes", {"map": "a-tiny", "turn_limit": 7})
    assert g.maag.config["map"] == "a-tiny" and g.maag.config["turn_limit"] == 7
    assert g.get_parameters()["start_ap"] == og.DERIVED_INT  # derived: the game's own default
    assert g.maag.config["start_ap"] == Game("heroes", {"map": "a-tiny"}).config["start_ap"]
    assert g.num_distinct_actions() == len(ActionTable(g.maag))
    with pytest.raises(pyspiel.SpielError):
        pyspiel.load_game("maag_heroes", {"no_such_option": 1})


@pytest.mark.parametrize("game", GAMES)
def test_the_action_table_is_the_pettingzoo_doors(game: str) -> None:
    g = load(game, rng_seed=3)
    s = g.new_initial_state()
    table = ActionTable(g.maag)
    assert s.legal_actions() == sorted(table.index(c) for c in s.maag_state.legal_codes())
    assert s.legal_actions(1 - s.current_player()) == []


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_sees_the_same_in_states_it_cannot_tell_apart(game: str) -> None:
    """Two full states that differ only in what a seat may not see (determinizations of its
    observation) give it the same observation and information state, strings and tensors,
    and the same legal actions when it is to act."""
    g = load(game, rng_seed=4)
    rng = np.random.default_rng(0)
    compared = differed = 0
    for _ in range(2):
        s = g.new_initial_state()
        while not s.is_terminal():
            for seat in (0, 1):
                seen = s.maag_state.observation(seat)
                mine = views(s, seat)
                for k in range(2):
                    other = g.new_initial_state(Observation.of(seen).determinize(k + 10 * compared))
                    differed += str(other) != str(s)
                    assert views(other, seat) == mine, f"seat {seat} sees a difference it may not see"
                    compared += 1
            random_play(s, rng, 3)
    assert compared
    if game in HIDDEN:
        assert differed, "the determinizations never differed: the test proves nothing"


def views(s: Any, seat: int) -> tuple[Any, ...]:
    legal = s.legal_actions(seat) if s.current_player() == seat else []
    return (s.observation_string(seat), s.information_state_string(seat), list(s.observation_tensor(seat)),
            list(s.information_state_tensor(seat)), legal)


@pytest.mark.parametrize("game", HIDDEN)
def test_resampling_keeps_the_information_state(game: str) -> None:
    g = load(game, rng_seed=5)
    s = g.new_initial_state()
    random_play(s, np.random.default_rng(1), 4)
    player = s.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    samples = [s.resample_from_infostate(player, sampler) for _ in range(4)]
    assert all(x.information_state_string(player) == s.information_state_string(player) for x in samples)
    assert len({str(x) for x in samples}) > 1, "resampling drew the same state every time"
    assert s.resample(player, 9).maag_state.to_json() == s.resample(player, 9).maag_state.to_json()


def test_clone_is_independent_and_keeps_the_chance() -> None:
    g = load("cards", rng_seed=6)
    s = g.new_initial_state()
    rng = np.random.default_rng(2)
    for _ in range(30):  # the card game draws at the start of every turn: the same draws in a clone
        if s.is_terminal():
            break
        c = s.clone()
        a = int(rng.choice(s.legal_actions()))
        s.apply_action(a)
        assert str(c) != str(s) or len(s.history()) == 0
        c.apply_action(a)
        assert str(c) == str(s)


@pytest.mark.parametrize("game", GAMES)
def test_returns_at_the_end(game: str) -> None:
    g = load(game, rng_seed=7)
    s = g.new_initial_state()
    random_play(s, np.random.default_rng(3), g.max_game_length())
    assert s.is_terminal()
    assert s.returns() in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])


def test_openspiel_ismcts_and_mcts_run_on_the_door() -> None:
    """OpenSpiel's bots as a researcher calls them, on the door alone (pyspiel's sampler)."""
    from open_spiel.python.algorithms import ismcts, mcts

    g = pyspiel.load_game("maag_heroes", {"map": "a-tiny", "turn_limit": 6, "rng_seed": 8})
    rs = np.random.RandomState(0)
    evaluator = mcts.RandomRolloutEvaluator(1, rs)
    bots = [ismcts.ISMCTSBot(g, evaluator, 2.0, 20, random_state=rs), mcts.MCTSBot(g, 2.0, 10, evaluator,
                                                                                   random_state=rs)]
    s = g.new_initial_state()
    for _ in range(8):
        if s.is_terminal():
            break
        s.apply_action(bots[len(s.history()) % 2].step(s))


def test_the_agent_plans_a_turn_from_an_observation() -> None:
    assert parse_agent("openspiel:mcts").options["algorithm"] == "mcts"
    assert make_agent("openspiel").options["algorithm"] == "ismcts"
    with pytest.raises(AgentError):
        make_agent("openspiel", "nosuch")
    game = Game("nim")
    view = Observation.of(game.new_state(seed=1))
    for spec in ("openspiel:ismcts", "openspiel:mcts", "openspiel:ismcts,evaluator=heuristic"):
        plan = parse_agent(spec).plan(view, iterations=30, seed=2)
        assert plan and plan[-1].to_dict() == {"type": "end_turn"}
        again = parse_agent(spec).plan(view, iterations=30, seed=2)
        assert [a.code for a in again] == [a.code for a in plan]
        st = game.new_state(seed=1)
        for a in plan:
            st.apply(a)  # legal in the real game
    # no cap on simulations (10**9): the plan returns only because the clock stopped it; how
    # long it took is not asserted (a loaded machine's wall time is no test), the clock's rule is
    agent = parse_agent("openspiel:ismcts,evaluator=heuristic")
    agent.plan(view, budget_ms=60, seed=3)
    assert agent.last is not None and agent.last.stats.stop == "time"
    assert agent.last.stats.iterations >= 2


def test_the_search_clock_starts_two_simulations_then_only_those_that_fit() -> None:
    from maag.bots.openspiel import _Clock, _OutOfTime
    past = _Clock(time.perf_counter() - 1.0)
    past.tick()
    past.tick()  # the first two always start: OpenSpiel's first only evaluates the root
    with pytest.raises(_OutOfTime):
        past.tick()
    with pytest.raises(_OutOfTime):
        past.check()  # a rollout past the deadline stops at its next draw
    assert past.count == 2
    ahead = _Clock(time.perf_counter() + 3600.0)
    for _ in range(100):
        ahead.tick()
        ahead.check()
    assert ahead.count == 100
    free = _Clock(None)  # no budget: only the simulation count stops a search
    free.last = time.perf_counter() - 3600.0
    free.count = 5
    free.tick()
    free.check()
    assert free.count == 6


@pytest.mark.parametrize("game,options", [("heroes", ["--map", "a-tiny"]), ("cards", [])])
def test_openspiel_ismcts_plays_complete_games_through_maag_match(game: str, options: list[str],
                                                                 tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "maag.server", "match", "openspiel:ismcts", "random", "--game", game,
           *options, "--games", "2", "--tc", "60ms", "--json", "--db", str(tmp_path / "m.sqlite3")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    games, summary = lines[:-1], lines[-1]
    assert len(games) == 2
    for g in games:
        assert g["result"] in ("1-0", "0-1", "1/2-1/2") and g["verdict"] is None, g  # played to its end
        seat = [g["seat1"], g["seat2"]].index("openspiel:ismcts")
        assert g["search"][seat]["iterations_per_turn"] >= 1
    assert summary["search"]["openspiel:ismcts"]["turns"] >= 1


def test_the_readme_example_runs() -> None:
    import contextlib
    import io
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parents[2] / "README.md"
    section = readme.read_text().split("## OpenSpiel", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(readme), "exec"), {})
    assert out.getvalue().strip() in ("[1.0, -1.0]", "[-1.0, 1.0]", "[0.0, 0.0]")

"""The conquest agents of spec §7-§12 (conquest_search.c, conquest_pro.c): the heuristic's
steps on hand-built positions, plans that are legal in the real game, determinism, the thesis
agents finding a won capital, their errors, and strength against the baselines in games with
fixed seeds (in process, dice from the state's seeded generator)."""

from __future__ import annotations

import pytest
from maag.bots import AgentError, make_agent
from maag.engine import Game, GameOverError, State
from maag.engine.games.conquest.agents import AGENTS, SEARCHING, defaults, plan

from . import game_positions  # noqa: F401  (puts conquest_position on the path)

from conquest_position import BLUE_INF, BLUE_TANK, END, RED_ART, RED_INF, RED_TANK, position  # isort: skip

ALL = list(AGENTS)


def moves(st: State, agent: str, **kw: int) -> list[dict]:
    p = [a.to_dict() for a in plan(st, agent, seed=5, **({"iterations": 40} if agent in SEARCHING else {}),
                                   **kw).plan]
    assert p[-1] == END
    return p[:-1]


def play_out(st: State, plan_dicts: list[dict]) -> None:
    for a in plan_dicts:
        st.apply(a)  # raises IllegalActionError for an illegal action


def test_the_heuristic_walks_into_an_empty_territory_with_its_cheapest_unit() -> None:
    # B1 is Blue's and empty; R1 holds an artillery and an infantry: the infantry walks in.
    st = position({"R1": [RED_ART[0], RED_INF[0]], "B3": BLUE_INF[:2]})
    p = moves(st, "heuristic")
    into_b1 = [a for a in p if a["path"][-1] == "B1"]
    assert into_b1 == [{"type": "move", "unit": RED_INF[0], "path": ["R1", "B1"]}]
    play_out(st, p)


def test_the_heuristic_blitzes_the_enemy_capital_through_an_empty_neighbour() -> None:
    # Red tanks in B7 (Red's), B2 empty, one infantry in Blue's capital B3: both tanks go
    # B7 -> B2 -> B3, the second one on the same path (spec §9 step 1).
    red = [f"R{i}" for i in range(1, 8)] + ["B7"]
    st = position({"B7": RED_TANK[:2], "B3": BLUE_INF[:1], "R3": RED_INF[:1]}, red=red)
    p = moves(st, "heuristic")
    assert [a["path"] for a in p if a["unit"] in RED_TANK[:2]] == [["B7", "B2", "B3"]] * 2
    play_out(st, p)
    assert st.to_json()["owner"]["Red"].count("B2") == 1  # conquered on the way


def test_easy_does_not_blitz_and_needs_more_strength() -> None:
    red = [f"R{i}" for i in range(1, 8)] + ["B7"]
    st = position({"B7": RED_TANK[:2], "B3": BLUE_INF[:1], "R3": RED_INF[:1]}, red=red)
    assert not [a for a in moves(st, "easy") if a["path"][-1] == "B3"]


@pytest.mark.parametrize("agent", ["ne-mcts", "bb-mcts", "oep", "heuristic", "fast", "hard"])
def test_an_agent_takes_the_undefended_capital_and_wins(agent: str) -> None:
    # Blue moves last in the round: its tanks next to Red's empty capital take it, and Blue
    # holds both capitals at the end of the round.
    st = position({"R4": BLUE_TANK[:2], "B3": BLUE_INF[:2], "R1": RED_INF[:2]},
                  red=[f"R{i}" for i in range(1, 8) if i != 4], player="Blue")
    p = moves(st, agent)
    assert any(a["path"][-1] == "R3" for a in p), p
    play_out(st, p)
    st.apply(END)  # battles (none left)
    st.apply(END)  # the non-combat move, then the end of the round
    assert st.is_terminal and st.winner == 1


@pytest.mark.parametrize("agent", ALL)
def test_plans_are_legal_through_whole_games(agent: str) -> None:
    for seed in range(3):
        st = Game("conquest").new_state(seed=seed)
        opponent = "heuristic" if agent != "heuristic" else "easy"
        while not st.is_terminal:
            who = (agent, opponent)[st.current_player ^ (seed & 1)]
            it = {"iterations": 20} if who in SEARCHING else {}
            play_out(st, [a.to_dict() for a in plan(st, who, seed=seed, **it).plan])


@pytest.mark.parametrize("agent", ALL)
def test_a_fixed_seed_and_iteration_budget_give_the_same_plan(agent: str) -> None:
    st = Game("conquest").new_state(seed=4)
    it = {"iterations": 30} if agent in SEARCHING else {}
    first = plan(st, agent, seed=9, **it)
    assert [a.code for a in plan(st, agent, seed=9, **it).plan] == [a.code for a in first.plan]
    if agent in SEARCHING:
        assert first.stats.iterations == 30 and first.stats.stop == "iterations"


def test_the_thesis_settings_are_the_defaults() -> None:
    assert defaults("oep") | {} == defaults("oep")
    d = defaults("bb-mcts")
    assert (d["max_phases"], d["win_base"], d["win_bonus"], d["unit_div"]) == (40, 0.6, 0.4, 2.0)
    assert abs(d["c"] - 2 ** -0.5) < 1e-12 and d["epsilon"] == 0.5
    assert (defaults("oep")["population"], defaults("oep")["mutation"]) == (50, 0.1)


def test_errors_are_clear() -> None:
    st = Game("conquest").new_state(seed=1)
    with pytest.raises(ValueError, match="unknown conquest agent 'nope'"):
        plan(st, "nope")
    with pytest.raises(ValueError, match="unknown conquest agent parameter 'depth'"):
        plan(st, "ne-mcts", {"depth": 3}, iterations=1)
    with pytest.raises(ValueError, match="play conquest, not heroes"):
        plan(Game("heroes").new_state(seed=1), "easy")
    with pytest.raises(AgentError, match="plays conquest only"):
        make_agent("conquest-hard").plan(Game("heroes").new_state(seed=1))
    over = position({"R1": RED_INF[:1], "B1": BLUE_INF[:1]}, phase="over",
                    result={"winner": "Red", "by": "capital"})
    with pytest.raises(GameOverError):
        plan(over, "ne-mcts", iterations=1)


def _match(a: str, b: str, games: int, iterations: int) -> tuple[int, int]:
    wins = [0, 0]
    for g in range(games):
        seats = (a, b) if g % 2 == 0 else (b, a)
        st = Game("conquest").new_state(seed=100 + g)
        while not st.is_terminal:
            who = seats[st.current_player]
            it = {"iterations": iterations} if who in SEARCHING else {}
            play_out(st, [x.to_dict() for x in plan(st, who, seed=g, **it).plan])
        if st.winner is not None and st.winner >= 0:
            wins[0 if seats[st.winner] == a else 1] += 1
    return wins[0], wins[1]


@pytest.mark.parametrize("agent", ["ne-mcts", "bb-mcts", "oep"])
def test_the_thesis_agents_beat_the_easy_ai(agent: str) -> None:
    won, lost = _match(agent, "easy", 10, 84 if agent != "oep" else 9)
    assert won > 2 * lost, (won, lost)

"""The card-game thesis's players (spec/cards.md §8) on the card game: the move tree's
generation against brute force and against f(n) = n f(n-1) + 1, legal plans from an
observation only, budgets, repetition with a seed, and a tactical suite of positions with a
known best move. Budgets are simulation counts; nothing here is timed."""

from __future__ import annotations

import random
from typing import Any

import pytest
from maag.bots import make_agent, parse_agent
from maag.engine import Game, Observation, State
from maag.engine.search import count_moves

from . import game_positions  # noqa: F401  (puts cards_position on the path)

from cards_position import END, attack, me, minion, player, position, ref  # isort: skip

THESIS_AGENTS = ["rap", "rap:gen_end_ply=false", "rmp", "rmp:prune=true", "rmpmax", "ucb", "uct",
                 "uct:post=rap", "uct:post=rmp", "uct:post=none,rollout=rap-greedy",
                 "ucb:final=robust,max_bandits=100", "ucb:final=max-reward,prune=true"]
SIMS = 300


def f(n: int) -> int:
    """Moves of a turn with n independent actions (spec §8): n f(n-1) + 1."""
    return 1 if n == 0 else n * f(n - 1) + 1


def brute_moves(st: State, prune: bool) -> tuple[int, int]:
    """The move tree by recursion in Python, in the kernel's order: (moves, longest)."""
    mover = st.current_player
    seen = {st.hash()}
    count = longest = 0

    def walk(x: State, depth: int) -> None:
        nonlocal count, longest
        count += 1  # the prefix followed by end_turn
        longest = max(longest, depth + 1)
        for a in x.legal_actions():
            if a.to_dict() == END:
                continue
            y = x.clone()
            y.apply(a)
            if prune:
                if y.hash() in seen:
                    continue
                seen.add(y.hash())
            if y.is_terminal or y.current_player != mover:
                count += 1
                longest = max(longest, depth + 1)
            else:
                walk(y, depth + 1)

    walk(st, 0)
    return count, longest


def attackers(n: int) -> State:
    """n minions that can each attack the enemy hero, nothing else to do: n independent actions."""
    return position(player(mana=0, power_used=True, board=[minion("N09") for _ in range(n)]),
                    player("paladin", hp=30))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
def test_move_counts_follow_f_of_n(n: int) -> None:
    st = attackers(n)
    assert count_moves(st, 10**6) == (f(n), n + 1)
    # with pruning, attacking in another order reaches the same state: one move per subset
    assert count_moves(st, 10**6, prune=True)[0] == 2**n
    assert count_moves(attackers(5), 100) == (100, 6)  # the cap stops the generation


def mixed() -> State:
    return position(player(mana=6, hand=["M08", "N09", "N10"], board=[minion("N24"), minion("N09")]),
                    player("paladin", hp=30, board=[minion("N25", taunt=True)]))


@pytest.mark.parametrize("prune", [False, True])
def test_move_counts_match_brute_force(prune: bool) -> None:
    st = mixed()
    n, longest = brute_moves(st, prune)
    assert count_moves(st, 10**7, prune=prune) == (n, longest)
    assert n > 100


def game_states(count: int, seed: int = 5) -> list[State]:
    """Positions from random games of the thesis's setting (random decks), at several plies."""
    game = Game("cards", {"deck1": "random", "deck2": "random"})
    out: list[State] = []
    rng = random.Random(seed)
    while len(out) < count:
        st = game.new_state(seed=rng.getrandbits(32))
        stop = rng.randrange(4, 30)
        for _ in range(400):
            if st.is_terminal or st.to_json()["ply"] >= stop:
                break
            st.apply(rng.choice(st.legal_actions()))
        if not st.is_terminal:
            out.append(st)
    return out


STATES = game_states(6)


def budget(spec: str) -> dict[str, Any]:
    return {"iterations": SIMS} if parse_agent(spec).spec.needs_budget else {}


@pytest.mark.parametrize("spec", THESIS_AGENTS)
def test_plans_from_an_observation_are_legal(spec: str) -> None:
    """The agent sees only its observation; its first action is legal in the true state, its
    plan ends the turn, and the plan played as the thesis plays it (a step that a draw made
    illegal ends in random actions) never breaks the game."""
    for st in STATES:
        obs = Observation.of(st)
        agent = parse_agent(spec)
        plan = agent.plan(obs, seed=3, **budget(spec))
        assert plan and st.is_legal(plan[0])
        assert plan[-1].to_dict() == END or _wins_on_a_sample(obs, plan)
        s = st.clone()
        for a in plan:
            if s.is_terminal or not s.is_legal(a):
                break
            s.apply(a)


def _wins_on_a_sample(obs: Observation, plan: list[Any]) -> bool:
    """A plan without end_turn must end the game (on the determinization it was made on)."""
    for seed in range(50):
        s = obs.as_state().determinize(seed)
        try:
            for a in plan:
                s.apply(a)
        except Exception:
            continue
        if s.is_terminal:
            return True
    return False


@pytest.mark.parametrize("spec", ["ucb", "uct", "rmp", "rmpmax", "uct:post=rap"])
def test_same_seed_same_plan(spec: str) -> None:
    for st in STATES[:3]:
        obs = Observation.of(st)
        first = parse_agent(spec).plan(obs, seed=11, **budget(spec))
        again = parse_agent(spec).plan(obs, seed=11, **budget(spec))
        assert [a.code for a in again] == [a.code for a in first]


@pytest.mark.parametrize("name", ["ucb", "uct"])
def test_budgets_in_simulations_and_time(name: str) -> None:
    st = STATES[2]
    agent = make_agent(name)
    agent.plan(st, iterations=257, seed=1)
    assert agent.last is not None
    assert agent.last.stats.iterations == 257 and agent.last.stats.stop == "iterations"
    agent.plan(st, budget_ms=20, seed=1)
    assert agent.last.stats.stop == "time" and agent.last.stats.iterations > 0


def test_per_simulation_determinization_never_sees_the_opponents_hand() -> None:
    """Two states that differ only in the opponent's hidden hand give the same plan."""
    a = position(player(mana=3, hand=["N09"], board=[minion("N24")]), player("paladin", hand=["P06", "N30"]))
    b = position(player(mana=3, hand=["N09"], board=[minion("N24")]), player("paladin", hand=["M12", "N25"]))
    for spec in ("ucb", "uct"):
        pa = parse_agent(spec).plan(a, iterations=500, seed=9)
        pb = parse_agent(spec).plan(b, iterations=500, seed=9)
        assert [x.code for x in pa] == [x.code for x in pb]


def test_the_card_game_has_its_own_defaults() -> None:
    agent = make_agent("ucb")
    agent.plan(STATES[0], iterations=10, seed=1)
    assert agent.options["moves"] == "dfs" and agent.options["c"] == 0.1
    assert make_agent("ucb", c=2.0).options["c"] == 2.0
    heroes = make_agent("ucb")
    heroes.plan(Game("heroes").new_state(seed=1), iterations=10, seed=1)
    assert heroes.options["moves"] == "sample"


# ---- tactics: positions with a known best move ------------------------------------------------

def lethal_through_taunt() -> State:
    """Ogre 6 and Yeti 4 can attack; the enemy hero has 10 health behind Sen'jin's taunt;
    the Ironbeak Owl in hand (2 mana) silences the taunt. Only owl + both attacks kill."""
    return position(player(mana=2, power_used=True, hand=["N10"], board=[minion("N30"), minion("N24")]),
                    player("paladin", hp=10, hand=["N09"] * 3, board=[minion("N25", taunt=True)]))


def board_clear() -> State:
    """Two 6-attack minions at 1 health face a hero at 6: both must die this turn. Arcane
    Explosion (2 mana) kills both; Arcane Missiles (1 mana, three random hits among the enemy
    hero and minions) leaves one alive two times in three. The expectation decides."""
    ogre = minion("N30", hp=1)
    return position(player(hp=6, mana=2, power_used=True, hand=["M01", "M03"]),
                    player("paladin", hp=30, hand=["N09"] * 3, board=[ogre, dict(ogre)]))


# UCT at c = 0.1 (the thesis's best) settles on a strong-looking branch too early to find the
# lethal line every time; at 1.414 it does. Closed-loop UCT cannot see an expectation at all:
# its node after Arcane Missiles keeps the one outcome drawn when it was expanded
# (docs/results-cards.md), so only the agents that replay the move on every simulation are
# asked to clear the board.
LETHAL = ["ucb", "ismcts", "uct:c=1.4142", "ucb:c=1.4142"]
EXPECTATION = ["ucb", "ismcts"]


@pytest.mark.parametrize("spec", LETHAL)
def test_strong_agents_find_lethal_through_a_taunt(spec: str) -> None:
    for seed in range(3):
        st = lethal_through_taunt()
        plan = parse_agent(spec).plan(Observation.of(st), iterations=3000, seed=seed)
        for a in plan:
            st.apply(a)
        assert st.is_terminal and st.winner == 0, (seed, [a.to_dict() for a in plan])


@pytest.mark.parametrize("spec", EXPECTATION)
def test_strong_agents_clear_the_board_by_expectation(spec: str) -> None:
    for seed in range(3):
        st = board_clear()
        plan = parse_agent(spec).plan(Observation.of(st), iterations=3000, seed=seed)
        played = [a.to_dict().get("card") for a in plan]
        assert "M03" in played and "M01" not in played[: played.index("M03")], (seed, played)


def test_the_tactics_are_not_trivial() -> None:
    """Random players miss them: the positions test search, not luck."""
    misses = 0
    for seed in range(20):
        st = lethal_through_taunt()
        for a in make_agent("rap").plan(Observation.of(st), seed=seed):
            st.apply(a)
        misses += not st.is_terminal
    assert misses >= 10
    st = lethal_through_taunt()
    for a in [{"type": "play", "hand_index": 0, "card": "N10", "target": ref(2, 0)}, attack(0, ref(2)),
              attack(1, ref(2))]:
        st.apply(a)
    assert st.is_terminal and st.winner == 0 and me(st, 2)["hero"]["hp"] <= 0

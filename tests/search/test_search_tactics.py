"""A tactical suite: hand-built heroes positions with a known winning turn (positions.py)
that the strong agents (greedy turn, non-exploring MCTS, bridge-burning MCTS, OEP, EMCTS,
FH-EMCTS) must find within a fixed iteration budget, for two seeds each."""

from __future__ import annotations

import pytest
from maag.bots import make_agent, parse_agent
from maag.engine import State

from .positions import TACTICS

# Iterations in each kernel's unit: outcomes, MCTS iterations, OEP generations, EMCTS genomes
# (OEP's 200 generations are 10,100 genomes).
STRONG = {"greedy-turn": 500_000, "ne-mcts": 20_000, "bb-mcts": 150_000, "oep": 200,
          "oep:islands=2,migration_interval=10": 100, "emcts": 20_000, "fh-emcts": 10_000,
          "emcts:preset=paper": 20_000, "fh-emcts:preset=paper": 10_000}

WINNING_LINES = {
    "lethal-strike": [{"type": "attack", "from": [3, 1], "to": [6, 1]}] * 3,
    "revive-then-attack": [{"type": "heal", "from": [4, 2], "to": [5, 3]}]
    + [{"type": "attack", "from": [5, 3], "to": [7, 3]}] * 2,
    "stomp": [{"type": "move", "from": [3, 2], "to": [5, 2]}, {"type": "end_turn"}],
}


def wins(state: State, plan: list) -> bool:
    s = state.clone()
    for a in plan:
        s.apply(a)
    return s.is_terminal and s.winner == state.current_player


@pytest.mark.parametrize("position", list(TACTICS))
def test_the_positions_are_what_they_claim(position: str) -> None:
    state = TACTICS[position]()
    assert not state.is_terminal and state.current_player == 0
    s = state.clone()
    for a in WINNING_LINES[position]:
        s.apply(a)
    assert s.is_terminal and s.winner == 0
    # and nothing wins at once: no single action ends the game
    for code in state.legal_codes():
        nxt = state.clone()
        nxt.apply(code)
        assert not (nxt.is_terminal and nxt.winner == 0)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("position", list(TACTICS))
@pytest.mark.parametrize("name", list(STRONG))
def test_strong_agents_find_the_win(name: str, position: str, seed: int) -> None:
    state = TACTICS[position]()
    plan = parse_agent(name).plan(state, iterations=STRONG[name], seed=seed)
    assert wins(state, plan), [a.to_dict() for a in plan]


def test_greedy_action_misses_the_combo() -> None:
    """The suite separates: one-ply greedy search deploys (+1175 on the heuristic) rather
    than hitting the crystal (+300 a hit), so it does not finish the revive-then-attack
    win."""
    state = TACTICS["revive-then-attack"]()
    for seed in (1, 2):
        assert not wins(state, make_agent("greedy-action").plan(state, seed=seed))

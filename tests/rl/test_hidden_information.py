"""An agent's observation and infos come from its seat's observation only: two full states
that differ only in what a seat may not see (the opponent's hand, the decks' order) give that
seat the same observation vector, mask and JSON."""

from __future__ import annotations

import numpy as np
import pytest
from maag.engine import State, registry
from maag.rl.pettingzoo_env import AGENTS, MaagEnv, raw_env

from .helpers import quick_options, random_action

GAMES = registry.names()
HIDDEN = [g for g in GAMES if registry.get(g).unseen is not None]


def put(e: MaagEnv, state: State) -> None:
    """Make `state` the environment's game (a test's back door)."""
    e._state = state
    e._views = {}


def views(e: MaagEnv, agent: str) -> tuple[bytes, bytes, dict[str, object]]:
    obs = e.observe(agent)
    return obs["observation"].tobytes(), obs["action_mask"].tobytes(), e._view(agent)[2]


@pytest.mark.parametrize("game", GAMES)
def test_states_a_seat_cannot_tell_apart_look_the_same_to_it(game: str) -> None:
    e = raw_env(game, **quick_options(game))
    rng = np.random.default_rng(0)
    compared = differed = 0
    for seed in range(3):
        e.reset(seed=seed)
        while not (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
            real = e._require_state()
            for seat, agent in enumerate(AGENTS):
                seen = real.observation(seat)
                mine = views(e, agent)
                for k in range(3):  # full states consistent with what the seat sees
                    other = seen.determinize(seed=100 * seed + k)
                    differed += other.to_json() != real.to_json()
                    put(e, other)
                    assert views(e, agent) == mine, f"{agent} sees a difference it may not see"
                    compared += 1
                put(e, real)
            e.step(random_action(rng, e.observe(e.agent_selection)["action_mask"]))
    assert compared
    if game in HIDDEN:
        assert differed, "the determinizations never differed from the real game: the test proves nothing"


@pytest.mark.parametrize("game", HIDDEN)
def test_the_opponents_hand_is_not_in_infos(game: str) -> None:
    e = raw_env(game, **quick_options(game))
    e.reset(seed=4)
    full = e._require_state().to_json()
    for seat, agent in enumerate(AGENTS):
        seen = e.infos[agent]["json"]
        assert seen.get("observer") == seat + 1
        assert seen != full
        hands = full.get("hands")
        if isinstance(hands, dict):  # a game that lists hands by seat: the opponent's is empty
            opponent = str(2 - seat)
            assert hands[opponent], "the opponent holds no cards: nothing to hide"
            assert not seen["hands"][opponent]

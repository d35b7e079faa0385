"""maag.rl.pettingzoo_env: PettingZoo's own API and seed tests on every registered game,
masks against the engine's legal lists, illegal actions, rewards, seeding, rendering."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from maag.engine import Game, IllegalActionError, registry
from maag.rl.pettingzoo_env import AGENTS, MaagEnv, env, raw_env
from pettingzoo.test import api_test, seed_test

from .helpers import quick_options, random_action

GAMES = registry.names()

# PettingZoo's api_test warns about every environment with dict observations (action masks)
# that is not one of its own; nothing else may warn.
EXPECTED_WARNINGS = ("Observation is not a NumPy array",
                     "Observation space for each agent probably should be",
                     "Action mask numpy array is all zeros")


def play(e: MaagEnv, seed: int, policy_seed: int) -> list[tuple[Any, ...]]:
    """A whole game with a seeded random policy: (agent, observation bytes, mask indices,
    reward, terminated, truncated, JSON) at every turn of `agent_iter`."""
    e.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    out = []
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        out.append((agent, obs["observation"].tobytes(), tuple(np.flatnonzero(obs["action_mask"])), reward,
                    term, trunc, info["json"]))
        e.step(None if term or trunc else random_action(rng, obs["action_mask"]))
    return out


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_api_test_passes(game: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(game, **quick_options(game)), num_cycles=300)
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(EXPECTED_WARNINGS)]
    assert not unexpected, unexpected


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array",
                            "ignore:Observation space for each agent probably should be")
def test_pettingzoo_api_test_passes_with_default_options(game: str) -> None:
    api_test(env(game), num_cycles=40)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_seed_test_passes(game: str) -> None:
    seed_test(lambda: env(game, **quick_options(game)), num_cycles=100)


@pytest.mark.parametrize("game", GAMES)
def test_a_seed_reproduces_the_trajectory(game: str) -> None:
    e = raw_env(game, **quick_options(game))
    first = play(e, seed=5, policy_seed=1)
    assert first[-1][4] or first[-1][5], "the game did not end"
    assert play(e, seed=5, policy_seed=1) == first                       # same env, reset again
    assert play(raw_env(game, **quick_options(game)), seed=5, policy_seed=1) == first  # a new env
    for seed in (5, 6):  # the seed is the engine's: the same deal, the same random draws
        e.reset(seed=seed)
        assert e._require_state() == Game(game, quick_options(game)).new_state(seed)


def test_reset_without_a_seed_follows_the_last_seed() -> None:
    game = GAMES[0]
    a, b = raw_env(game, **quick_options(game)), raw_env(game, **quick_options(game))
    a.reset(seed=3)
    b.reset(seed=3)
    a.reset()
    b.reset()
    assert a.seed_used == b.seed_used != 3


@pytest.mark.parametrize("game", GAMES)
def test_the_action_mask_is_the_legal_list(game: str) -> None:
    e = raw_env(game, **quick_options(game))
    rng = np.random.default_rng(0)
    for seed in range(3):
        e.reset(seed=seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            state = e._require_state()
            assert agent == AGENTS[state.current_player]
            legal = state.legal_codes()
            chosen = np.flatnonzero(obs["action_mask"])
            assert sorted(e.action_code(int(i)) for i in chosen) == sorted(legal)
            assert obs["action_mask"].dtype == np.int8 and set(np.unique(obs["action_mask"])) <= {0, 1}
            other = AGENTS[1 - AGENTS.index(agent)]
            assert not e.observe(other)["action_mask"].any(), "the agent not to act has legal actions"
            e.step(random_action(rng, obs["action_mask"]))


@pytest.mark.parametrize("game", GAMES)
def test_an_illegal_action_raises_and_changes_nothing(game: str) -> None:
    e = raw_env(game, **quick_options(game))
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(5):  # a few positions into the game
        e.step(random_action(rng, e.observe(e.agent_selection)["action_mask"]))
        if e.terminations[e.agent_selection] or e.truncations[e.agent_selection]:
            pytest.skip("the game ended at once")
    agent = e.agent_selection
    before = (e._require_state().to_bytes(), agent, e.observe(agent)["observation"].tobytes(),
              dict(e.rewards), e.steps)
    masked = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    for bad in (masked, -1, e.action_space(agent).n, 1.5, "end_turn", True):  # type: ignore[attr-defined]
        with pytest.raises(IllegalActionError) as info:
            e.step(bad)  # type: ignore[arg-type]
        assert agent in str(info.value)
        after = (e._require_state().to_bytes(), e.agent_selection, e.observe(agent)["observation"].tobytes(),
                 dict(e.rewards), e.steps)
        assert after == before, f"action {bad!r} changed the game"
    with pytest.raises(IllegalActionError, match="not legal here"):
        e.step(masked)
    e.step(random_action(rng, e.observe(agent)["action_mask"]))  # a legal one still plays


@pytest.mark.parametrize("game", GAMES)
def test_rewards_at_the_end(game: str) -> None:
    e = raw_env(game, **quick_options(game))
    endings = set()
    for seed in range(6):
        trajectory = play(e, seed=seed, policy_seed=seed)
        rewards = {agent: 0.0 for agent in AGENTS}
        for agent, _, _, reward, *_ in trajectory:
            rewards[agent] += reward
        state = e._require_state()
        assert state.is_terminal or e.max_steps
        end = [t for t in trajectory if t[4] or t[5]]
        assert {t[0] for t in end} == set(AGENTS), "each agent sees the end once"
        terminated, truncated = end[0][4], end[0][5]
        assert terminated != truncated
        if terminated and state.winner in (0, 1):
            assert rewards == {AGENTS[state.winner]: 1.0, AGENTS[1 - state.winner]: -1.0}
        else:
            assert rewards == {a: 0.0 for a in AGENTS}
        endings.add("truncated" if truncated else "won" if state.winner in (0, 1) else "draw")
        assert all(t[3] == 0 for t in trajectory if not (t[4] or t[5])), "a reward before the end"
    assert endings, "no game ended"


@pytest.mark.parametrize("game", GAMES)
def test_max_steps_truncates(game: str) -> None:
    e = raw_env(game, max_steps=3, **quick_options(game))
    trajectory = play(e, seed=1, policy_seed=1)
    assert e.steps == 3
    assert trajectory[-1][5] and not trajectory[-1][4]


@pytest.mark.parametrize("game", GAMES)
def test_render_ansi_is_text(game: str) -> None:
    e = raw_env(game, render_mode="ansi", **quick_options(game))
    e.reset(seed=1)
    text = e.render()
    assert isinstance(text, str) and text


def test_options_and_render_mode_are_checked() -> None:
    with pytest.raises(ValueError, match="no_such_option"):
        raw_env(GAMES[0], no_such_option=1)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(GAMES[0], render_mode="human")
    with pytest.raises(ValueError, match="unknown game"):
        raw_env("no-such-game")


def test_step_before_reset_is_refused() -> None:
    with pytest.raises(Exception, match="reset"):
        env(GAMES[0]).step(0)

"""Every registered game as a PettingZoo AEC environment.

    >>> from maag.rl.pettingzoo_env import env
    >>> e = env(game="nim")                       # or env(game="heroes", map="a-tiny")
    >>> e.reset(seed=7)
    >>> for agent in e.agent_iter():
    ...     obs, reward, terminated, truncated, info = e.last()
    ...     action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
    ...     e.step(action)

Agents are "player_0" and "player_1" (the engine's seats 0 and 1). A game lets a player take
several actions a turn, so the same agent is often selected several times in a row; the
turn passes when it plays the game's END_TURN (or END_PHASE) action.

* Actions: `Discrete(n)` over the game's action table (`maag.rl.encoding.ActionTable`,
  from the game folder's spaces.py): index i is the action code `action_code(i)`.
* Observations: a dict with "observation", the seat's observation as a float32 vector
  (`ObservationEncoder`: read from `State.observation(seat)` only), and "action_mask", int8
  over the action table, 1 exactly at the legal actions of the agent to act (all 0 for the
  other agent). `infos[agent]["json"]` is that seat's observation in the wire's JSON form
  (the opponent's hand is not in it).
* Rewards: 0 until the end, then +1 to the winner and -1 to the loser, 0 each for a draw.
  A game ended by the game's own turn, ply or round limit is a truncation (rewards 0);
  `max_steps` (an option of the environment) truncates after that many actions too.
* An illegal action (a masked index, or one outside 0..n-1) raises IllegalActionError
  naming the action and the rule it breaks; the game is unchanged and the same agent is
  still to act.
* `reset(seed=s)` plays the game `Game.new_state(s)` starts (the deal and every random
  draw follow from it): the same seed and the same actions give the same trajectory.
  Without a seed, the game's seed is drawn from the environment's generator (seeded by the
  last seed given, else by the OS).
* `render_mode="ansi"`: `render()` returns the full state as text, by the game's text view
  when it has one (`maag replay --show`'s), else as JSON. It shows hidden cards: it is the
  referee's view, not an agent's."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from maag.engine import Game, GameOverError, IllegalActionError, State
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .encoding import ActionTable, ObservationEncoder, game_spaces

__all__ = ["MaagEnv", "env", "raw_env", "IllegalActionError"]

AGENTS = ("player_0", "player_1")


class MaagEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """A registered maag game as a PettingZoo AEC environment (module docstring)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "name": "maag_v0", "is_parallelizable": False}

    def __init__(self, game: str = "heroes", render_mode: str | None = None, max_steps: int | None = None,
                 **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer or None, not {max_steps!r}")
        self.game = Game(game, options)
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.table = ActionTable(self.game)
        self.encoder = ObservationEncoder(self.game)
        self._limit_reached = getattr(game_spaces(game), "limit_reached", None)
        self.metadata = {**self.metadata, "name": f"maag_{game}_v0"}
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        box = spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.float32)
        mask = spaces.Box(low=0, high=1, shape=(len(self.table),), dtype=np.int8)
        self.observation_spaces = {a: spaces.Dict({"observation": box, "action_mask": mask})
                                   for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(len(self.table)) for a in AGENTS}
        self._np_random: np.random.Generator | None = None
        self._state: State | None = None
        self._views: dict[str, tuple[np.ndarray, np.ndarray, dict[str, Any]]] = {}
        self.steps = 0
        self.seed_used: int | None = None

    # -- spaces --------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def action_code(self, index: int) -> int:
        """The game's action code of an action index."""
        return self.table.code(int(index))

    def action_index(self, code: int) -> int:
        """The action index of one of the game's action codes."""
        return self.table.index(code)

    def action_dict(self, index: int) -> dict[str, Any]:
        """The readable form of an action index, e.g. {'type': 'end_turn'}."""
        return self.game.action(self.action_code(index)).to_dict()

    # -- the AEC interface ---------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._np_random = np.random.default_rng(seed)
            game_seed = int(seed)
        else:
            if self._np_random is None:
                self._np_random = np.random.default_rng()
            game_seed = int(self._np_random.integers(0, 2**63))
        self.seed_used = game_seed
        self._state = self.game.new_state(game_seed)
        self.steps = 0
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self._views = {}
        self.infos = {a: {"json": self._view(a)[2]} for a in AGENTS}
        self.agent_selection = AGENTS[self._state.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        vector, mask, _ = self._view(agent)
        return {"observation": vector.copy(), "action_mask": mask.copy()}

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)  # type: ignore[arg-type]
            return
        state = self._require_state()
        code = self._checked_code(agent, action)
        try:
            state.apply(code)
        except (IllegalActionError, GameOverError) as e:
            raise IllegalActionError(e.code, f"{agent} chose action {self.table.index(code)} "
                                     f"{self.game.action(code)}, which is not legal here: {e}. The game "
                                     "is unchanged; pick an action the action mask allows") from e
        self.steps += 1
        self._views = {}
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if state.is_terminal:
            if self._limit_reached is not None and self._limit_reached(state.to_json()):
                self.truncations = {a: True for a in self.agents}
            else:
                self.terminations = {a: True for a in self.agents}
                winner = state.winner
                if winner in (0, 1):
                    self.rewards[AGENTS[winner]] = 1.0
                    self.rewards[AGENTS[1 - winner]] = -1.0
        elif self.max_steps is not None and self.steps >= self.max_steps:
            self.truncations = {a: True for a in self.agents}
        self.infos = {a: {"json": self._view(a)[2]} for a in self.agents}
        self.agent_selection = AGENTS[state.current_player]
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; make the environment with "
                                  "render_mode='ansi'")
            return None
        state = self._require_state()
        data = state.to_json()
        text = self.game.spec.render(data) if self.game.spec.render is not None else \
            json.dumps(data, separators=(",", ":"))
        return text

    def close(self) -> None:
        self._state = None
        self._views = {}

    # -- inside --------------------------------------------------------------------------------
    def _require_state(self) -> State:
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state

    def _checked_code(self, agent: str, action: Any) -> int:
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            last = len(self.table) - 1
            raise IllegalActionError(2, f"{agent}: an action is an integer index 0..{last}, not {action!r}")
        index = int(action)
        if not 0 <= index < len(self.table):
            raise IllegalActionError(2, f"{agent}: action {index} is outside the action space "
                                        f"0..{len(self.table) - 1}")
        return self.table.code(index)

    def _view(self, agent: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """The seat's observation as (vector, mask, JSON), built from `observation(seat)`
        alone and kept until the next action."""
        view = self._views.get(agent)
        if view is None:
            state = self._require_state()
            seat = AGENTS.index(agent)
            obs = state.observation(seat)
            to_act = not obs.is_terminal and obs.current_player == seat
            mask = self.table.mask(obs.legal_codes() if to_act else ())
            view = self._views[agent] = (self.encoder.encode(obs), mask, obs.to_json())
        return view

    def __str__(self) -> str:
        return f"maag_{self.game.name}_v0"


def raw_env(game: str = "heroes", render_mode: str | None = None, max_steps: int | None = None,
            **options: Any) -> MaagEnv:
    """The environment without PettingZoo's wrappers; `options` are the game's
    (`maag games` lists them), e.g. raw_env("heroes", map="a-tiny")."""
    return MaagEnv(game, render_mode=render_mode, max_steps=max_steps, **options)


def env(game: str = "heroes", render_mode: str | None = None, max_steps: int | None = None,
        **options: Any) -> AECEnv[str, dict[str, np.ndarray], int]:
    """The environment wrapped as PettingZoo environments usually are (order enforced: no
    step before reset)."""
    return wrappers.OrderEnforcingWrapper(raw_env(game, render_mode=render_mode, max_steps=max_steps,
                                                  **options))
